"""How much does Pearce & Song's reconciled exponent depend on the reconciliation's own choices?

The Kaplan-basis exponent of Step 4 (0.78 with Epoch's parameters) rests on the Chinchilla law
(A, B, E, alpha, beta), the embedding relation N_T = N_E + gamma N_E^delta of Eq. 7 (gamma =
47491, delta = 1/3) and the size window of Kaplan's models (N_E from N_min = 10^2.9 to N_max =
10^9.2). The frontier exponent is piecewise constant in all of them, so its derivatives are
those of the smooth :func:`jaxscale.reconciliation.synthetic_curves.window_exponent` a(x), the same power-law fit over
the continuous optimum with the budget window implied by the size window (its docstring gives
the construction). For every knob x_k (all positive) this module gives

    da/dx_k  (per decade for the window bounds),   e_k = d log a / d log x_k,

and answers "would 0.78 survive?" with the factor on x_k alone that would bring a to a target
(Kaplan's 0.73 by default) to first order, exp((log target - log a)/e_k), and the exponent
recomputed exactly at that factor, which shows whether the linear answer can be trusted. Factors
beyond 100 either way are reported as out of first-order reach (``nan``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.numerics import as_float64, float64
from jaxscale.core.validation import check_params_positive, check_positive
from jaxscale.laws.chinchilla import ChinchillaParams
from jaxscale.reconciliation.synthetic_curves import (
    frontier_exponents,
    kaplan_size_window,
    window_exponent,
)

KNOBS = ("A", "B", "E", "alpha", "beta", "gamma", "delta", "N_min", "N_max")
#: Kaplan et al. (2020)'s exponent, the default target.
KAPLAN_EXPONENT = 0.73
#: Largest factor on one knob for which a first-order answer is reported.
MAX_FACTOR = 100.0


class ReconciliationSensitivity(NamedTuple):
    """The smooth ``exponent`` and the Step-4 ``frontier_exponent`` at the evaluation point;
    per knob of :data:`KNOBS` ([9] each): ``values``, ``derivative`` da/dx (x = log10 N for
    the window bounds), ``elasticity`` d log a / d log x, ``factor`` reaching ``target`` to
    first order (nan out of reach) and ``exponent_at_factor``, a recomputed there exactly."""

    exponent: float
    frontier_exponent: float
    target: float
    values: np.ndarray
    derivative: np.ndarray
    elasticity: np.ndarray
    factor: np.ndarray
    exponent_at_factor: np.ndarray


def _log_exponent(log_knobs: jnp.ndarray) -> jnp.ndarray:
    x = jnp.exp(log_knobs)
    return jnp.log(window_exponent(ChinchillaParams(*x[:5]), x[5], x[6], log_knobs[7:]))


@jax.jit
def _value_and_elasticity(log_knobs: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    return jax.value_and_grad(_log_exponent)(log_knobs)


@jax.jit
def _shifted(log_knobs: jnp.ndarray, shifts: jnp.ndarray) -> jnp.ndarray:
    """exp(_log_exponent) with knob k shifted by shifts[k] in log, for each k ([9])."""
    moved = log_knobs[None, :] + jnp.diag(shifts)
    return jnp.exp(jax.vmap(_log_exponent)(moved))


@float64
def reconciliation_sensitivity(p: ChinchillaParams, gamma: float, delta: float,
                               target: float = KAPLAN_EXPONENT) -> ReconciliationSensitivity:
    """Derivatives and elasticities of the reconciled exponent with respect to every knob of the
    reconciliation at the Chinchilla parameters ``p`` and embedding relation (``gamma``,
    ``delta``), over Kaplan's size window; see the module docstring."""
    check_params_positive(p)
    check_positive("gamma", gamma)
    check_positive("delta", delta)
    check_positive("target", target)
    values = np.concatenate([[float(v) for v in p], [gamma, delta], np.exp(kaplan_size_window())])
    log_knobs = jnp.log(jnp.asarray(values))
    log_a, e = (np.asarray(v) for v in _value_and_elasticity(log_knobs))
    a = math.exp(float(log_a))
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = (math.log(target) - float(log_a)) / e
    reachable = np.isfinite(shift) & (np.abs(shift) <= math.log(MAX_FACTOR))
    shift = np.where(reachable, shift, 0.0)
    exact = np.asarray(_shifted(log_knobs, jnp.asarray(shift)))
    per_unit = np.where([k.startswith("N_") for k in KNOBS], math.log(10.0), 1.0 / values)
    frontier = jax.jit(frontier_exponents)(as_float64(p), gamma, delta).nonembedding
    return ReconciliationSensitivity(
        exponent=a, frontier_exponent=float(frontier), target=target, values=values,
        derivative=a * e * per_unit, elasticity=e,
        factor=np.where(reachable, np.exp(shift), np.nan), exponent_at_factor=np.where(reachable, exact, np.nan),
    )
