"""Which runs drive a fit? The influence of each run, by implicit differentiation of Approach 3.

The Approach-3 optimum theta* (the law's unconstrained vector, :meth:`Law.to_vector`) minimises

    F(theta; y, w) = sum_i w_i rho_delta(r_i),   r_i = y_i - f_i(theta),

with y_i = log L_i the measured log loss of run i, f_i(theta) = log Lhat(N_i, D_i; theta), w_i
its weight and rho_delta the Huber loss (:mod:`jaxscale.fitting.objective`). theta* is the root of
the stationarity condition grad_theta F(theta*; y, w) = 0, so by the implicit function theorem,
with H = grad^2_theta F at theta* (an explicit (K, K) Hessian solve, no finite differences):

    d theta*/d y_i = -H^-1 d^2F/(d theta d y_i)       (run i's measured log loss moves)
    d theta*/d w_i = -H^-1 d^2F/(d theta d w_i) = -H^-1 grad_theta rho_delta(r_i)

Leaving run i out is w_i: 1 -> 0, so to first order it moves the optimum by

    Delta_i theta = H^-1 grad_theta rho_delta(r_i)     (the infinitesimal jackknife)

and a derived quantity by Delta_i log q = grad_theta log q . Delta_i theta (:func:`linear_changes`).

**The Huber kinks.** rho_delta is once differentiable; its second derivative jumps from 1 to 0 at
|r| = delta. Every derivative here is JAX autodiff at theta*, i.e. taken on the side of the kink
where each run's residual lies (a residual exactly at |r_i| = delta has probability zero):

- H = sum_{|r_i|<delta} w_i (grad f_i grad f_i^T - r_i grad^2 f_i)
  - sum_{|r_i|>delta} w_i delta sign(r_i) grad^2 f_i: in the linear region the Huber curvature
  vanishes, the law's own curvature under the constant pull delta stays;
- d^2F/(d theta d y_i) = -w_i rho''(r_i) grad f_i is zero for runs in the linear region: the
  exact value of an outlying loss does not move a Huber fit, only its sign does. For runs in the
  quadratic region rho'(r_i) = r_i, and Delta_i theta = -r_i d theta*/d y_i.

So the log-loss derivative ranks only the runs the fit treats quadratically, while the removal
influence Delta_i theta ranks them all: it is what the leave-one-out refits check.

**Where the first order misses.** Removing a run is a finite step, w_i = 1 -> 0. For a run in
the quadratic region of high leverage h_i = d log Lhat_i / d log L_i (:attr:`Influence.leverage`,
the fit's self-sensitivity; the h_i sum to about K) a quadratic objective would give the exact
change Delta_i theta / (1 - h_i) (Sherman-Morrison), so the first order understates it by that
factor; and a removal that carries other runs' residuals across a kink changes H itself.

Measured on Epoch's 240 runs (Chinchilla law, 39 runs quadratic): the first-order change of
a and of log N*(1e24) correlates 0.995 and 0.996 with the refits; the two worst-matched runs
have h = 0.65 and 0.50 and exact / first-order ratios 2.86 and 2.00, i.e. 1/(1 - h). Where few
runs are quadratic the first order is weaker: 0.89 for N*(1e24) under kaplan-irreducible on the
same runs (23 quadratic), 0.67-0.93 on 36 synthetic runs with 1% noise (6-10 quadratic).

**The jackknife.** Exact leave-one-out refits are the bootstrap's weighted refits
(:func:`jaxscale.fitting.bootstrap.bootstrap`) with the count matrix 1 - I, warm-started from
theta* in one batched call; the exact changes are measured from the refit with all counts 1
(same solver, so its tolerance cancels).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.bootstrap import bootstrap
from jaxscale.fitting.objective import FitData, huber_fn, residuals
from jaxscale.laws.law import Law


@dataclass(frozen=True)
class Influence:
    """First-order influence of every run on the law's vector (``names``): ``removal`` (n, K),
    the change Delta_i theta when run i is left out; ``d_log_loss`` (n, K), d theta*/d log L_i;
    ``residuals`` (n,) r_i at theta*; ``leverage`` (n,) h_i = d log Lhat_i / d log L_i, the
    fitted value's derivative with respect to its own run (zero in the Huber linear region);
    ``hessian`` (K, K) of the Huber sum at theta*."""

    names: tuple[str, ...]
    removal: np.ndarray
    d_log_loss: np.ndarray
    residuals: np.ndarray
    leverage: np.ndarray
    delta: float
    hessian: np.ndarray

    @property
    def quadratic(self) -> np.ndarray:
        """(n,) whether run i's residual lies in the Huber quadratic region, |r_i| < delta."""
        return np.abs(self.residuals) < self.delta

    @property
    def removal_via_log_loss(self) -> np.ndarray:
        """(n, K) -r_i d theta*/d log L_i: equal to ``removal`` for runs in the quadratic
        region, zero in the linear region (module docstring)."""
        return -self.residuals[:, None] * self.d_log_loss


class _Derivatives(NamedTuple):
    hessian: jnp.ndarray  # (K, K) d^2F/d theta^2
    cross: FitData  # d^2F/(d theta d data), (K, n) blocks
    residuals: jnp.ndarray  # (n,)
    jacobian: jnp.ndarray  # (n, K) d r_i / d theta


@partial(jax.jit, static_argnums=(0, 1, 2))
def _derivatives(law: Law, delta: float, asymmetry: float | None, theta: jnp.ndarray, data: FitData) -> _Derivatives:
    objective = huber_fn(law, delta, asymmetry)
    return _Derivatives(hessian=jax.hessian(objective)(theta, data),
                        cross=jax.jacfwd(jax.grad(objective), argnums=1)(theta, data),
                        residuals=residuals(law, theta, data),
                        jacobian=jax.jacfwd(residuals, argnums=1)(law, theta, data))


@float64
def influence(fit: FitResult) -> Influence:
    """The influence of each run of an Approach-3 fit, by implicit differentiation of its
    stationarity condition (module docstring)."""
    der = jax.tree.map(np.asarray, _derivatives(fit.law, fit.delta, fit.asymmetry,
                                                jnp.asarray(fit.vector), fit.data()))
    d_weight = -np.linalg.solve(der.hessian, der.cross.weights).T
    d_log_loss = -np.linalg.solve(der.hessian, der.cross.log_y).T
    return Influence(names=fit.law.vector_names, removal=-d_weight, d_log_loss=d_log_loss,
                     residuals=der.residuals, leverage=0.0 - np.sum(der.jacobian * d_log_loss, axis=1),  # no -0.0
                     delta=fit.delta, hessian=der.hessian)


class Jackknife(NamedTuple):
    """Exact leave-one-out refits: ``vectors`` (n, K), the optimum without run i; ``base`` (K,),
    the same solver's optimum with every run; ``converged`` (n,)."""

    vectors: np.ndarray
    base: np.ndarray
    converged: np.ndarray

    @property
    def changes(self) -> np.ndarray:
        """(n, K) exact Delta_i theta."""
        return self.vectors - self.base


def jackknife(fit: FitResult) -> Jackknife:
    """All n leave-one-out refits and the all-runs refit, in one batched warm-started call."""
    n = fit.n_points
    counts = np.vstack([1.0 - np.eye(n), np.ones((1, n))])
    refits = bootstrap(fit, counts=counts)
    return Jackknife(vectors=refits.vectors[:-1], base=refits.vectors[-1], converged=refits.converged[:-1])


def vector_gradient(elasticities: ArrayLike, params: NamedTuple, log_scale: tuple[bool, ...]) -> np.ndarray:
    """(Q, K) d log q / d theta in the law's vector coordinates from (Q, K) elasticities
    d log q / d log theta_k: unchanged for scales (theta = log scale), divided by the value for
    exponents (theta = exponent)."""
    scale = np.array([1.0 if log else float(v) for v, log in zip(params, log_scale)])
    return np.asarray(elasticities) / scale


def linear_changes(gradient: ArrayLike, removal: ArrayLike) -> np.ndarray:
    """(n, Q) first-order Delta_i log q = grad_theta log q . Delta_i theta."""
    return np.asarray(removal) @ np.asarray(gradient).T


class Agreement(NamedTuple):
    """Linear against exact changes of one quantity over the runs: their Pearson
    ``correlation``, and ``worst``, the runs by decreasing |linear - exact|."""

    correlation: float
    worst: np.ndarray


def agreement(linear: ArrayLike, exact: ArrayLike) -> Agreement:
    """How well first-order changes ([n]) match exact ones over runs (non-finite ones left out)."""
    x, y = np.asarray(linear, float), np.asarray(exact, float)
    ok = np.isfinite(x) & np.isfinite(y)
    order = np.argsort(-np.where(ok, np.abs(x - y), -np.inf))
    return Agreement(correlation=float(np.corrcoef(x[ok], y[ok])[0, 1]), worst=order)
