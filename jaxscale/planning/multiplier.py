"""The effective compute multiplier between two recipes: how much compute one saves at equal loss.

Recipe g's compute-optimal frontier is its loss at the optimal allocation of each budget,

    L*_g(C) = L_g(N*_g(C), C / (6 N*_g(C))),   N*_g(C) = argmin_N L_g(N, C/(6N))     (Pearce & Song Eq. 11)

(:mod:`jaxscale.optimum.solver`). Recipe B trained with C FLOP reaches L*_B(C); the baseline A
reaches the same loss at the compute C_A with L*_A(C_A) = L*_B(C), and

    k(C) = C_A / C

is B's effective compute multiplier at C: B is worth k(C) times its compute in A's recipe (k > 1:
B is better). Frontiers fall with C, so C_A is the one root of log L*_A(y) = log L*_B(log C) in
y = log C_A, found by bisection on log C +- :data:`SPAN` (60 halvings: to 1e-16 of the span).
Where A's frontier does not reach B's loss within that span (B's loss below A's irreducible
term E_A, say) the multiplier is undefined (NaN), never a number.

Under Chinchilla's law with shared exponents and a shared E the frontiers differ by a constant
factor in C and k is the same at every scale; with a recipe's own E (or its own exponents) k
changes with scale. :func:`per_decade` says by how much: the ratio k(C sqrt(10)) / k(C / sqrt(10))
over the decade centred on C.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import as_float64, float64
from jaxscale.laws.law import Law
from jaxscale.optimum import solver

#: Natural-log half-width of the search for C_A around C: a factor e^46 ~ 1e20 either way.
SPAN = 46.0
_HALVINGS = 60


def frontier_log_loss(law: Law, params: NamedTuple, log_c: jnp.ndarray) -> jnp.ndarray:
    """log L*(C) at log C: the law's log loss at the compute-optimal allocation (NaN where there
    is none)."""
    log_n = solver.optimal_log_n(law, params, log_c)
    return law.log_loss(params, log_n, log_c - solver.LOG6 - log_n)


def equal_loss_log_compute(law: Law, baseline: NamedTuple, other: NamedTuple, log_c: jnp.ndarray) -> jnp.ndarray:
    """log C_A: the log compute at which ``baseline``'s frontier reaches ``other``'s loss at
    log C (module docstring); NaN where it does not within the span."""
    goal = frontier_log_loss(law, other, log_c)

    def excess(y):
        return frontier_log_loss(law, baseline, y) - goal

    def halve(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        above = excess(mid) > 0
        return jnp.where(above, mid, lo), jnp.where(above, hi, mid)

    lo, hi = log_c - SPAN, log_c + SPAN
    lo, hi = jax.lax.fori_loop(0, _HALVINGS, halve, (lo, hi))
    reached = (excess(log_c - SPAN) > 0) & (excess(log_c + SPAN) < 0) & jnp.isfinite(goal)
    return jnp.where(reached, 0.5 * (lo + hi), jnp.nan)


@partial(jax.jit, static_argnums=0)
def _log_multipliers(law: Law, baseline: NamedTuple, other: NamedTuple, log_c: jnp.ndarray) -> jnp.ndarray:
    def over_budgets(a: NamedTuple, b: NamedTuple) -> jnp.ndarray:
        return jax.vmap(lambda y: equal_loss_log_compute(law, a, b, y) - y)(log_c)

    if jnp.ndim(baseline[0]) == 0:
        return over_budgets(baseline, other)
    return jax.vmap(over_budgets)(baseline, other)


@float64
def multipliers(law: Law, baseline: NamedTuple, other: NamedTuple, c: ArrayLike) -> np.ndarray:
    """k(C) = C_A / C at budgets ``c`` ([C]) of ``other`` against ``baseline`` (module docstring):
    [C] for one parameter set each, [S, C] for S draws of both (fields [S]); NaN where undefined."""
    c = jnp.atleast_1d(jnp.asarray(c, jnp.float64))
    log_k = _log_multipliers(law, as_float64(baseline), as_float64(other), jnp.log(c))
    return np.exp(np.asarray(log_k))


class Trend(NamedTuple):
    """How k changes over the decade centred on C: k at C / sqrt(10), C and C sqrt(10), and
    ``per_decade`` = k(C sqrt(10)) / k(C / sqrt(10))."""

    below: np.ndarray
    at: np.ndarray
    above: np.ndarray

    @property
    def per_decade(self) -> np.ndarray:
        return self.above / self.below


def per_decade(law: Law, baseline: NamedTuple, other: NamedTuple, c: float) -> Trend:
    """k over the decade centred on ``c`` (module docstring), for one parameter set or draws."""
    k = multipliers(law, baseline, other, [c / np.sqrt(10.0), c, c * np.sqrt(10.0)])
    return Trend(k[..., 0], k[..., 1], k[..., 2])
