"""How badly the law fits away from the compute-optimal ratio: the residual scale as a function of
tokens per parameter, and the robust belief a design plans from.

A law of (N, D) fitted to real runs fits best near the tokens per parameter most of its runs
were trained at, and worst far from it (on Epoch AI's runs the residuals of runs at under 10 tokens
per parameter are several times those near 20). A run far from the compute-optimal ratio is
therefore a noisier observation of the law than one near it, and a design that prices every run
at one noise scale buys many such runs. Here each run x is given its own scale.

DECLARED RULES (committed before the replay and the simulation of ``benchmarks/bench_design.py``
ran with them):

- Distance from the optimal ratio: t(x) = |log(D/N) - log(D*/N*)|, D*/N* the compute-optimal
  tokens per parameter of the current fit at the run's own compute C = 6 N D
  (:func:`jaxscale.optimum.allocation.optimal_allocation`); t = 0 for every run where the fit has
  no allocation (an exponent <= 0).
- Residual scale: sigma(t) = c0 + c1 t, fitted by non-negative least squares of sqrt(pi/2) |r_i|
  on (1, t_i) over the runs fitted (r_i their log residuals; E|r| = sigma sqrt(2/pi) for Gaussian
  residuals), c0, c1 >= 0; where both come out 0 (a fit through every run), sigma(t) = 1.
- A run's noise in the design: s sigma(t(x)) / mean_i sigma(t_i), s the per-run scale of the
  sandwich (:mod:`jaxscale.determinacy.sandwich`, s^2 = n/(n - p) mean psi(r)^2 / E[psi']^2),
  so that the fitted runs on average cost what the sandwich says a run costs, and the runs far
  from the ratio proportionally more.
- The belief: the sandwich covariance Sigma_s = H^-1 M H^-1 of the current Huber fit (not the
  Laplace sigma^2 (J^T J)^-1) combined with the law's priors as the Laplace belief was,
  (Sigma_s^-1 + prior precision)^-1; the priors alone where the runs leave Sigma_s undefined. A
  new run x updates it by the rank-one formula with its own noise, Eq. (2) of
  :mod:`jaxscale.planning.selection`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from jax.typing import ArrayLike
from scipy.optimize import nnls

from jaxscale.determinacy.curvature import laplace_covariance
from jaxscale.determinacy.sandwich import sandwich
from jaxscale.laws.law import Law
from jaxscale.optimum.allocation import optimal_allocation


def ratio_distance(law: Law, params: NamedTuple, n: ArrayLike, d: ArrayLike) -> np.ndarray:
    """t = |log(D/N) - log(D*/N*)| at each run's own compute (module docstring); 0 where undefined."""
    n, d = np.asarray(n, np.float64), np.asarray(d, np.float64)
    optimum = optimal_allocation(law, params, 6.0 * n * d)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(np.log(d / n) - np.log(optimum.d / optimum.n))
    return np.where(np.isfinite(t), t, 0.0)


def scale_by_distance(t: ArrayLike, residuals: ArrayLike, weights: ArrayLike | None = None) -> tuple[float, float]:
    """(c0, c1) of sigma(t) = c0 + c1 t, non-negative least squares of sqrt(pi/2)|r| on (1, t) over
    the rows of positive weight with a finite residual; (1, 0) where both come out 0 or fewer
    than two such rows are left."""
    t, r = np.asarray(t, np.float64), np.asarray(residuals, np.float64)
    used = np.ones(len(r), bool) if weights is None else np.asarray(weights) > 0
    used &= np.isfinite(r) & np.isfinite(t)  # a fit run off to infinity predicts no loss
    if used.sum() < 2:
        return 1.0, 0.0
    design = np.stack([np.ones(used.sum()), t[used]], axis=1)
    (c0, c1), _ = nnls(design, math.sqrt(math.pi / 2) * np.abs(r[used]))
    return (1.0, 0.0) if c0 == 0 and c1 == 0 else (float(c0), float(c1))


def run_noise(p: int, fitted_t: np.ndarray, residuals: np.ndarray, base: float, candidate_t: np.ndarray,
              weights: np.ndarray | None = None) -> np.ndarray:
    """[k] noise of each candidate run at distance ``candidate_t``: ``base`` (the sandwich's per-run
    scale, module docstring) times sigma(t) over its mean on the fitted runs, sigma(t) fitted to
    the fitted runs' distances ``fitted_t`` and log ``residuals`` (rows of positive ``weights``)."""
    c0, c1 = scale_by_distance(fitted_t, residuals, weights)
    used = np.ones(len(fitted_t), bool) if weights is None else np.asarray(weights) > 0
    return base * (c0 + c1 * np.asarray(candidate_t)) / float(np.mean(c0 + c1 * fitted_t[used]))


def robust_covariance(jacobian: np.ndarray, residuals: np.ndarray, delta: float, weights: np.ndarray | None,
                      prior_precision: np.ndarray) -> np.ndarray:
    """(sandwich^-1 + prior precision)^-1 at the fit (module docstring); the prior's covariance where
    the runs leave the sandwich undefined."""
    cov = sandwich(jacobian, residuals, delta, weights)
    if not np.all(np.isfinite(cov)):
        return laplace_covariance(prior_precision)
    return laplace_covariance(np.linalg.pinv(cov, hermitian=True) + prior_precision)
