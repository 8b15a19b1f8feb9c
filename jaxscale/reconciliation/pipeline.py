"""Pearce & Song (2024) Section 2, end to end: Steps 1-4 from published inputs.

Step 1 fits Eq. 7 to Chinchilla's Table A9; Step 2 writes the loss in non-embedding terms
(Eq. 15); Step 3 gives the optimum and its local exponent (Eqs. 16-17) — here from the generic
implicit-differentiation solver of :mod:`jaxscale.optimum.solver`, checked against the closed forms;
Step 4 simulates Kaplan-range training curves and fits the frontier (:mod:`jaxscale.reconciliation.synthetic_curves`).
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
from jaxscale.core.power_law import fit_power_law
from jaxscale.core.validation import check_positive
from jaxscale.laws import chinchilla, pearce_song, table_a9
from jaxscale.optimum import solver as optimal
from jaxscale.reconciliation.synthetic_curves import (
    DEFAULT_CONFIG,
    SimulationConfig,
    Step4,
    continuous_optimum_exponent,
    simulate_step4,
)

#: Pearce & Song's reported numbers, for side-by-side display (never used in computation).
PAPER_VALUES = {
    "epoch": {"gamma": 47491.0, "delta": 0.34, "aspect_ratio": 39.2,
              "exponent_total": 0.51, "exponent_nonembedding": 0.78},
    "chinchilla": {"gamma": 47491.0, "delta": 0.34, "aspect_ratio": 39.2,
                   "exponent_total": 0.46, "exponent_nonembedding": 0.74},
}

#: Range of N_\E over which autodiff is compared with Eq. 17 (log10).
EQ17_CHECK_RANGE = (2.0, 12.0)


class EmbeddingFit(NamedTuple):
    """Fit of Eq. 7 with a free exponent: N_T - N_\\E = γ N_\\E**δ."""

    gamma: jnp.ndarray
    delta: jnp.ndarray


def _log_total_residuals(theta: jnp.ndarray, n_total: jnp.ndarray, n_nonembedding: jnp.ndarray) -> jnp.ndarray:
    log_gamma, delta = theta[0], theta[1]
    predicted = n_nonembedding + jnp.exp(log_gamma + delta * jnp.log(n_nonembedding))
    return jnp.log(predicted) - jnp.log(n_total)


def fit_gamma_delta(n_total: ArrayLike, n_nonembedding: ArrayLike, iterations: int = 50) -> EmbeddingFit:
    r"""Pearce & Song Step 1: fit N_T = N_\E + γ N_\E**δ by least squares in log N_T (the
    curve of their Figure 1, log-log axes); on Table A9 this gives γ ≈ 47491, δ ≈ 0.34.

    Gauss-Newton on θ = (log γ, δ) with Jacobians from ``jax.jacfwd``, started from the straight
    line log(N_T - N_\E) = log γ + δ log N_\E (itself a worse fit: it weighs the small models,
    whose embedding share is largest, like the large ones)."""
    check_positive("n_total", n_total)
    check_positive("n_nonembedding", n_nonembedding)
    n_t, n = jnp.asarray(n_total), jnp.asarray(n_nonembedding)
    check_positive("n_total - n_nonembedding", n_t - n)
    line = fit_power_law(n, n_t - n)
    theta0 = jnp.stack([jnp.log(line.coefficient), line.exponent])
    jacobian = jax.jacfwd(_log_total_residuals)

    def gauss_newton_step(_, theta):
        r = _log_total_residuals(theta, n_t, n)
        j = jacobian(theta, n_t, n)
        return theta - jnp.linalg.solve(j.T @ j, j.T @ r)

    theta = jax.lax.fori_loop(0, iterations, gauss_newton_step, theta0)
    return EmbeddingFit(gamma=jnp.exp(theta[0]), delta=theta[1])


def fit_table_a9() -> EmbeddingFit:
    """:func:`fit_gamma_delta` on the 50 Chinchilla configurations of Table A9 (v = 32,000)."""
    return fit_gamma_delta(table_a9.total_params(), table_a9.nonembedding_params())


@dataclass(frozen=True)
class Reconciliation:
    """Everything ``jaxscale reconcile`` reports and plots."""

    spec: str
    params: chinchilla.ChinchillaParams
    embedding_fit: EmbeddingFit
    aspect_ratio: float
    step4: Step4
    exponent_total: float
    exponent_total_analytic: float
    exponent_nonembedding: float
    exponent_nonembedding_analytic: float
    limit_small: float
    limit_large: float
    transition_size: float
    g_peak: float
    g_peak_size: float
    max_abs_error_autodiff_vs_eq17: float
    max_abs_error_solver_vs_eq16: float  # in log C_\\E
    n_check: np.ndarray  # N_\E grid of the Eq. 16/17 comparison
    g_autodiff: np.ndarray  # g at n_check from jax.grad through the implicit solve
    c_optimal: np.ndarray  # C_\E at which n_check is optimal, from the generic solver


class _Numbers(NamedTuple):
    embedding_fit: EmbeddingFit
    aspect_ratio: jnp.ndarray
    step4: Step4
    exponent_total_analytic: jnp.ndarray
    exponent_nonembedding_analytic: jnp.ndarray
    limit_small: jnp.ndarray
    limit_large: jnp.ndarray
    transition_size: jnp.ndarray
    g_autodiff: jnp.ndarray
    g_eq17: jnp.ndarray
    log_c_optimal: jnp.ndarray
    log_c_eq16: jnp.ndarray
    n_check: jnp.ndarray


#: XLA CPU settings for :func:`_numbers`: the program runs in milliseconds but took seconds to
#: compile; the classic (non-MLIR) fusion emitters without LLVM optimization compile it about 5×
#: faster. The results move by at most a few ulps (relative 3e-14, checked in
#: tests/reconciliation/test_pipeline.py). Scoped to this one program; other programs keep XLA's defaults.
FAST_COMPILE_OPTIONS = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}


@partial(jax.jit, static_argnames=("config", "n_check_points"), compiler_options=FAST_COMPILE_OPTIONS)
def _numbers(params: chinchilla.ChinchillaParams, n_total: jnp.ndarray, n_nonembedding: jnp.ndarray,
             config: SimulationConfig, n_check_points: int) -> _Numbers:
    """All array work of Steps 1-4, compiled as one XLA program."""
    fit = fit_gamma_delta(n_total, n_nonembedding)
    q = pearce_song.with_embedding(params, fit.gamma, pearce_song.DELTA_KAPLAN)
    n_check = jnp.logspace(*EQ17_CHECK_RANGE, n_check_points)
    log_c_optimal, g_autodiff = optimal.optimal_log_compute_and_exponent(pearce_song.LAW, q, jnp.log(n_check))
    return _Numbers(
        embedding_fit=fit,
        aspect_ratio=pearce_song.aspect_ratio_from_gamma(fit.gamma),
        step4=simulate_step4(params, fit.gamma, pearce_song.DELTA_KAPLAN, config),
        exponent_total_analytic=chinchilla.allocation_exponents(params)[0],
        exponent_nonembedding_analytic=continuous_optimum_exponent(
            params, fit.gamma, pearce_song.DELTA_KAPLAN, config
        ),
        limit_small=pearce_song.limit_small(q),
        limit_large=pearce_song.limit_large(q),
        transition_size=pearce_song.transition_size(q),
        g_autodiff=g_autodiff,
        g_eq17=pearce_song.local_exponent(n_check, q),
        log_c_optimal=log_c_optimal,
        log_c_eq16=pearce_song.log_compute_at_optimum(jnp.log(n_check), q),
        n_check=n_check,
    )


def program_inputs(spec: str) -> tuple[chinchilla.ChinchillaParams, jnp.ndarray, jnp.ndarray]:
    """The array arguments of the Steps 1-4 program for a published parameter set: the law's
    parameters in float64 and Table A9's total and non-embedding sizes (call under x64)."""
    params = jax.tree.map(lambda v: jnp.asarray(v, jnp.float64), chinchilla.LAW.published_params(spec))
    return params, table_a9.total_params(), table_a9.nonembedding_params()


@float64
def reconcile_spec(spec: str = "epoch", config: SimulationConfig = DEFAULT_CONFIG,
                   n_check_points: int = 2001) -> Reconciliation:
    """Run Steps 1-4 for a published parameter set (``"epoch"`` or ``"chinchilla"``)."""
    params = chinchilla.LAW.published_params(spec)
    num = jax.tree.map(np.asarray, _numbers(*program_inputs(spec), config, n_check_points))
    g = num.g_autodiff
    peak = int(np.argmax(g))
    return Reconciliation(
        spec=spec,
        params=params,
        embedding_fit=num.embedding_fit,
        aspect_ratio=float(num.aspect_ratio),
        step4=num.step4,
        exponent_total=float(num.step4.total.fit.exponent),
        exponent_total_analytic=float(num.exponent_total_analytic),
        exponent_nonembedding=float(num.step4.nonembedding.fit.exponent),
        exponent_nonembedding_analytic=float(num.exponent_nonembedding_analytic),
        limit_small=float(num.limit_small),
        limit_large=float(num.limit_large),
        transition_size=float(num.transition_size),
        g_peak=float(g[peak]),
        g_peak_size=float(num.n_check[peak]),
        max_abs_error_autodiff_vs_eq17=float(np.max(np.abs(g - num.g_eq17))),
        max_abs_error_solver_vs_eq16=float(np.max(np.abs(num.log_c_optimal - num.log_c_eq16))),
        n_check=num.n_check,
        g_autodiff=g,
        c_optimal=np.exp(num.log_c_optimal),
    )


def summary(result: Reconciliation) -> dict[str, float | str]:
    """The headline numbers as a flat dict (the keys of ``jaxscale reconcile --json``)."""
    return {
        "spec": result.spec,
        "gamma": float(result.embedding_fit.gamma),
        "delta": float(result.embedding_fit.delta),
        "aspect_ratio": result.aspect_ratio,
        "exponent_total": result.exponent_total,
        "exponent_total_analytic": result.exponent_total_analytic,
        "exponent_nonembedding": result.exponent_nonembedding,
        "exponent_nonembedding_analytic": result.exponent_nonembedding_analytic,
        "limit_small": result.limit_small,
        "limit_large": result.limit_large,
        "transition_size": result.transition_size,
        "g_peak": result.g_peak,
        "g_peak_size": result.g_peak_size,
        "max_abs_error_autodiff_vs_eq17": result.max_abs_error_autodiff_vs_eq17,
        "max_abs_error_solver_vs_eq16": result.max_abs_error_solver_vs_eq16,
    }
