"""One law of the loss in model size, data, learning rate and batch size: Chinchilla plus a bowl.

Chinchilla's loss of tuned runs (Hoffmann et al. 2022, Eq. 2) plus a quadratic bowl in the log
learning rate and log batch size about their optima, placed where Step Law puts them (Li et al.
2025, :mod:`jaxscale.laws.steplaw`)::

    L(N, D, eta, B) = E + A N^(-alpha) + B_D D^(-beta) + k_eta u^2 + k_B v^2 - 2 rho sqrt(k_eta k_B) u v,
    u = log eta - log eta*(N, D),   eta*(N, D) = eta0 N^(-alpha_eta) D^(beta_eta),
    v = log B - log B*(D),          B*(D) = batch0 D^(beta_batch)   (B in tokens).

At the optimum (u = v = 0) it is Chinchilla's law; k_eta and k_B say how flat the bowl is: a
learning rate off by a factor f costs k_eta (log f)^2 nats; rho in [0, 1) tilts the bowl's valley
so that a larger batch wants a larger rate (Step Law's heatmaps; the bowl has a minimum for
rho < 1 only, and the optimum is NaN beyond). The optimum in (eta, B) at any (N, D)
is what :func:`jaxscale.optimum.solver.optimal_log_inputs` finds by implicit differentiation,
without the closed form; the form's own eta*, B* (:func:`optimal_lr`, :func:`optimal_batch`) are
what the tests check it against. A bowl that is quadratic in logs describes the loss near its
minimum; runs that diverged at high rates lie far above it, so fits take the runs near each
group's minimum (:mod:`jaxscale.hyperparameters.per_group`).

In log form, overflow-safe: log L = P + log1p(bowl e^(-P)), P = LSE(log E, log A - alpha log N,
log B_D - beta log D), the bowl >= 0 added outside the LSE (its log is -inf at the optimum).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws.law import Law, NoisePriors, Normal, grid, lse


class HparamBowlParams(NamedTuple):
    """Parameters of L(N, D, eta, B): Chinchilla's (E, A, B_D, alpha, beta), the optima's power laws
    (eta0, alpha_eta, beta_eta; batch0, beta_batch), the bowl's curvatures (k_eta, k_batch) and its
    tilt rho."""

    E: ArrayLike
    A: ArrayLike
    B_D: ArrayLike
    alpha: ArrayLike
    beta: ArrayLike
    eta0: ArrayLike
    alpha_eta: ArrayLike
    beta_eta: ArrayLike
    batch0: ArrayLike
    beta_batch: ArrayLike
    k_eta: ArrayLike
    k_batch: ArrayLike
    rho: ArrayLike


def log_optimal_lr(p: HparamBowlParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """log eta*(N, D) = log eta0 - alpha_eta log N + beta_eta log D (the form's closed form)."""
    return jnp.log(p.eta0) - p.alpha_eta * log_n + p.beta_eta * log_d


def log_optimal_batch(p: HparamBowlParams, log_d: ArrayLike) -> jnp.ndarray:
    """log B*(D) = log batch0 + beta_batch log D (the form's closed form, tokens)."""
    return jnp.log(p.batch0) + p.beta_batch * log_d


def log_tuned(p: HparamBowlParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """log (E + A N^(-alpha) + B_D D^(-beta)): the log loss of tuned runs (the bowl's floor), overflow-safe."""
    E, A, B_D, alpha, beta = p[:5]
    return lse(jnp.log(E), jnp.log(A) - alpha * log_n, jnp.log(B_D) - beta * log_d)


def tilted_quadratic(u: ArrayLike, v: ArrayLike, k_eta: ArrayLike, k_batch: ArrayLike,
                     rho: ArrayLike) -> jnp.ndarray:
    """k_eta u^2 + k_B v^2 - 2 rho sqrt(k_eta k_B) u v: the loss added at log distances u, v from
    the optimal learning rate and batch (nats, >= 0 for rho < 1)."""
    return k_eta * u * u + k_batch * v * v - 2.0 * rho * jnp.sqrt(k_eta * k_batch) * u * v


def bowl(p: HparamBowlParams, log_n: ArrayLike, log_d: ArrayLike, log_eta: ArrayLike,
         log_batch: ArrayLike) -> jnp.ndarray:
    """The loss added by a learning rate and batch off their optima eta*(N, D), B*(D)
    (:func:`tilted_quadratic` of u = log eta - log eta*, v = log B - log B*)."""
    u = log_eta - log_optimal_lr(p, log_n, log_d)
    v = log_batch - log_optimal_batch(p, log_d)
    return tilted_quadratic(u, v, p.k_eta, p.k_batch, p.rho)


def log_loss_above(log_floor: ArrayLike, added: ArrayLike) -> jnp.ndarray:
    """log (e^log_floor + added): a loss ``added`` nats above a floor given by its log."""
    return log_floor + jnp.log1p(added * jnp.exp(-log_floor))


def log_loss(p: HparamBowlParams, log_n: ArrayLike, log_d: ArrayLike, log_eta: ArrayLike,
             log_batch: ArrayLike) -> jnp.ndarray:
    """log L(N, D, eta, B), elementwise."""
    return log_loss_above(log_tuned(p, log_n, log_d), bowl(p, log_n, log_d, log_eta, log_batch))


@dataclass(frozen=True)
class HparamBowlPriors(NoisePriors):
    """Chinchilla's coordinates as :class:`jaxscale.laws.chinchilla.ChinchillaPriors` has them
    (``log_E`` ~ Normal(0.5, 1), ``log_A``, ``log_B_D`` ~ Normal(6, 3), ``alpha``, ``beta`` ~
    Normal(0.35, 0.3) truncated); the optima's scales ``log_eta0``, ``log_batch0`` ~ Normal(0, 5)
    and exponents ~ Normal(0.5, 0.5) truncated (Step Law's 0.713, 0.307, 0.571 inside); the
    curvatures ``log_k_eta``, ``log_k_batch`` ~ Normal(-4, 2) (a factor-2 error in eta costing
    ~1% of a 2.5-nat loss has k ~ 0.05); the tilt ``rho`` ~ Normal(0.3, 0.3) truncated to > 0;
    ``sigma`` ~ HalfNormal(0.01): the runs fitted lie within a few tenths of a percent of a smooth
    surface."""

    sigma: float = 0.01
    log_E: Normal = (0.5, 1.0)
    log_A: Normal = (6.0, 3.0)
    log_B_D: Normal = (6.0, 3.0)
    alpha: Normal = (0.35, 0.3)
    beta: Normal = (0.35, 0.3)
    log_eta0: Normal = (0.0, 5.0)
    alpha_eta: Normal = (0.5, 0.5)
    beta_eta: Normal = (0.5, 0.5)
    log_batch0: Normal = (0.0, 5.0)
    beta_batch: Normal = (0.5, 0.5)
    log_k_eta: Normal = (-4.0, 2.0)
    log_k_batch: Normal = (-4.0, 2.0)
    rho: Normal = (0.3, 0.3)


LAW: Law[HparamBowlParams] = Law(
    name="hparam-bowl",
    params_type=HparamBowlParams,
    log_loss=log_loss,
    log_scale=(True, True, True, False, False, True, False, False, True, False, True, True, False),
    init_grid=grid(log_e=(0.0, 0.5), log_a=(4.0, 7.0), log_b=(4.0, 7.0), alpha=(0.35,), beta=(0.35,),
                   log_eta0=(0.5,), alpha_eta=(0.7,), beta_eta=(0.3,), log_batch0=(-0.5,), beta_batch=(0.57,),
                   log_k_eta=(-4.0, -2.0), log_k_batch=(-5.0, -3.0), rho=(0.3,)),
    priors=HparamBowlPriors(),
    formula="L = E + A N^-alpha + B_D D^-beta + k_eta u^2 + k_batch v^2 - 2 rho sqrt(k_eta k_batch) u v, "
            "u = log eta - log eta*(N, D), v = log B - log B*(D)",
    citation="Hoffmann et al. (2022), Eq. 2, with a bowl about the optima of Li et al. (2025) (Step Law)",
    inputs=("N", "D", "eta", "batch"),
    centred=(("log_A", "alpha", 0), ("log_B_D", "beta", 1), ("log_eta0", "alpha_eta", 0)),
)
