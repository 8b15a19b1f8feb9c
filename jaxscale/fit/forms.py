"""Scaling laws written for fitting: log-loss as a JAX function of (log x1, log x2, theta).

Fitting works in log space on unconstrained parameters, as Hoffmann et al. (2022, Appendix
D.2) and Besiroglu et al. (2024) do: the Chinchilla law L = E + A N^-alpha + B D^-beta becomes::

    log L = LSE(a - alpha log N, b - beta log D, e),   A = e^a, B = e^b, E = e^e.

A :class:`LogLaw` bundles that function with the names of its fitted parameters, the map to
the natural parameters and the default initialisation grid. The engine
(:mod:`jaxscale.fit.approach3`, :mod:`jaxscale.fit.bootstrap`) takes any ``LogLaw``, so other
laws (Kaplan's, a word2vec law of analogy error in dimension and words) reuse it: write their
log-loss as a function of two log inputs and a parameter vector.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

LogLossFn = Callable[[jnp.ndarray, jnp.ndarray, jnp.ndarray], jnp.ndarray]
NaturalFn = Callable[[np.ndarray], dict[str, np.ndarray]]


@dataclass(frozen=True)
class LogLaw:
    """A law fitted in log space.

    ``log_loss(theta, log_x1, log_x2)`` returns log L for parameter vector ``theta`` (shape
    ``(len(param_names),)``); ``natural(theta)`` maps theta (shape ``(..., p)``) to a dict of
    named natural parameters; ``init_grid()`` returns the starting points, shape ``(k, p)``.
    ``inputs`` names x1 and x2 (for messages and plots).
    """

    name: str
    param_names: tuple[str, ...]
    log_loss: LogLossFn
    natural: NaturalFn
    init_grid: Callable[[], np.ndarray]
    inputs: tuple[str, str] = ("N", "D")

    @property
    def n_params(self) -> int:
        return len(self.param_names)


def grid(**axes: np.ndarray) -> Callable[[], np.ndarray]:
    """An initialisation grid: the Cartesian product of ``axes`` (in keyword order, the last
    varying fastest), as a function returning a ``(k, p)`` float64 array."""

    def make() -> np.ndarray:
        return np.array(list(itertools.product(*axes.values())), dtype=np.float64)

    return make


def lse(*terms: jnp.ndarray) -> jnp.ndarray:
    """log(sum_k exp(t_k)), elementwise over broadcast terms, shifted by the largest value of
    any term at any point, so no exponential overflows (a point whose terms all lie more
    than ~745 below that maximum would give -inf, i.e. a rejected L-BFGS trial, not a wrong
    value). The shift is one scalar and carries no gradient (its derivative cancels exactly):
    value-and-gradient measured 1.3x cheaper (CPU) than ``jax.nn.logsumexp`` over a stacked axis,
    as a scalar term (e) then costs one exponential per problem, not one per point."""
    top = jax.lax.stop_gradient(jnp.max(jnp.stack([jnp.max(t) for t in terms])))
    return top + jnp.log(sum(jnp.exp(t - top) for t in terms))


def _steps(lo: float, hi: float, step: float) -> np.ndarray:
    return np.arange(lo, hi + step / 2, step)


# ---- Chinchilla, Hoffmann et al. (2022) Eq. 2 --------------------------------------------


def chinchilla_log_loss(theta: jnp.ndarray, log_n: jnp.ndarray, log_d: jnp.ndarray) -> jnp.ndarray:
    """log L = LSE(a - alpha log N, b - beta log D, e) for theta = (a, b, e, alpha, beta)."""
    a, b, e, alpha, beta = theta
    return lse(a - alpha * log_n, b - beta * log_d, e)


def _chinchilla_natural(theta: np.ndarray) -> dict[str, np.ndarray]:
    theta = np.asarray(theta)
    return {
        "A": np.exp(theta[..., 0]), "B": np.exp(theta[..., 1]), "E": np.exp(theta[..., 2]),
        "alpha": theta[..., 3], "beta": theta[..., 4],
    }


def _epoch_grid() -> np.ndarray:
    """Besiroglu et al. (2024)'s 4500 starts: alpha, beta in {0, .5, .., 2}, e in {-1, -.5,
    .., 1}, a, b in {0, 5, .., 25}, in their loop order (alpha, beta, e, a, b), as rows of
    theta = (a, b, e, alpha, beta)."""
    g = grid(alpha=_steps(0, 2, 0.5), beta=_steps(0, 2, 0.5), e=_steps(-1, 1, 0.5),
             a=_steps(0, 25, 5), b=_steps(0, 25, 5))()
    return g[:, [3, 4, 2, 0, 1]]


CHINCHILLA = LogLaw(
    name="chinchilla",
    param_names=("a", "b", "e", "alpha", "beta"),
    log_loss=chinchilla_log_loss,
    natural=_chinchilla_natural,
    init_grid=_epoch_grid,
)


# ---- Chinchilla with tied exponents alpha = beta -------------------------------------------


def chinchilla_tied_log_loss(theta: jnp.ndarray, log_n: jnp.ndarray, log_d: jnp.ndarray) -> jnp.ndarray:
    """The Chinchilla law with alpha = beta; theta = (a, b, e, alpha)."""
    return chinchilla_log_loss(jnp.concatenate([theta, theta[3:4]]), log_n, log_d)


def _chinchilla_tied_natural(theta: np.ndarray) -> dict[str, np.ndarray]:
    theta = np.asarray(theta)
    return _chinchilla_natural(np.concatenate([theta, theta[..., 3:4]], axis=-1))


def _epoch_grid_tied() -> np.ndarray:
    g = _epoch_grid()
    return np.unique(g[g[:, 3] == g[:, 4]][:, :4], axis=0)


CHINCHILLA_TIED = LogLaw(
    name="chinchilla-tied",
    param_names=("a", "b", "e", "alpha"),
    log_loss=chinchilla_tied_log_loss,
    natural=_chinchilla_tied_natural,
    init_grid=_epoch_grid_tied,
)


# ---- Kaplan et al. (2020) ------------------------------------------------------------------


def kaplan_nd_log_loss(theta: jnp.ndarray, log_n: jnp.ndarray, log_d: jnp.ndarray) -> jnp.ndarray:
    """Kaplan et al. (2020) Eq. 1.5, L(N, D) = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D, as
    log L = alpha_D LSE((alpha_N/alpha_D)(log N_c - log N), log D_c - log D);
    theta = (log N_c, log D_c, alpha_N, alpha_D)."""
    log_nc, log_dc, alpha_n, alpha_d = theta
    return alpha_d * lse((alpha_n / alpha_d) * (log_nc - log_n), log_dc - log_d)


def kaplan_ns_log_loss(theta: jnp.ndarray, log_n: jnp.ndarray, log_s: jnp.ndarray) -> jnp.ndarray:
    """Kaplan et al. (2020) Eq. 1.6, L(N, S_min) = (N_c/N)^alpha_N + (S_c/S_min)^alpha_S, as
    log L = LSE(alpha_N (log N_c - log N), alpha_S (log S_c - log S_min));
    theta = (log N_c, log S_c, alpha_N, alpha_S)."""
    log_nc, log_sc, alpha_n, alpha_s = theta
    return lse(alpha_n * (log_nc - log_n), alpha_s * (log_sc - log_s))


def exp_first_two(names: tuple[str, str, str, str]) -> NaturalFn:
    """Natural parameters of a Kaplan-form theta (log c1, log c2, exponent 1, exponent 2) under ``names``."""
    def natural(theta: np.ndarray) -> dict[str, np.ndarray]:
        theta = np.asarray(theta)
        return {names[0]: np.exp(theta[..., 0]), names[1]: np.exp(theta[..., 1]),
                names[2]: theta[..., 2], names[3]: theta[..., 3]}

    return natural


#: Starts around Kaplan's published values (N_c ~ 1e13-1e14, D_c ~ 1e13, S_c ~ 2e3,
#: exponents 0.05-0.1), spread over several decades and a factor 8 in the exponents.
_KAPLAN_EXPONENTS = (0.03, 0.06, 0.12, 0.24)
KAPLAN_ND = LogLaw(
    name="kaplan",
    param_names=("log_N_c", "log_D_c", "alpha_N", "alpha_D"),
    log_loss=kaplan_nd_log_loss,
    natural=exp_first_two(("N_c", "D_c", "alpha_N", "alpha_D")),
    init_grid=grid(log_nc=_steps(20, 40, 5), log_dc=_steps(20, 40, 5),
                   alpha_n=_KAPLAN_EXPONENTS, alpha_d=_KAPLAN_EXPONENTS),
)
KAPLAN_NS = LogLaw(
    name="kaplan-steps",
    param_names=("log_N_c", "log_S_c", "alpha_N", "alpha_S"),
    log_loss=kaplan_ns_log_loss,
    natural=exp_first_two(("N_c", "S_c", "alpha_N", "alpha_S")),
    init_grid=grid(log_nc=_steps(20, 40, 5), log_sc=_steps(0, 20, 5),
                   alpha_n=_KAPLAN_EXPONENTS, alpha_s=_KAPLAN_EXPONENTS),
    inputs=("N", "S_min"),
)

LAWS: dict[str, LogLaw] = {law.name: law for law in (CHINCHILLA, CHINCHILLA_TIED, KAPLAN_ND, KAPLAN_NS)}


def law_by_name(name: str) -> LogLaw:
    """A fitting law by name: ``chinchilla``, ``chinchilla-tied``, ``kaplan``, ``kaplan-steps``."""
    try:
        return LAWS[name]
    except KeyError:
        raise ValueError(f"unknown law {name!r}; choose one of {sorted(LAWS)}") from None
