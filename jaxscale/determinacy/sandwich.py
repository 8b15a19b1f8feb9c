"""The sandwich (robust) covariance of the Huber M-estimator: the uncertainty the fit really has.

Approach 3 (Hoffmann et al. 2022, Eq. 3) is an M-estimator: theta minimises sum_i w_i rho(r_i),
rho = Huber_delta, r_i = log L_i - f_i(theta), f_i = log Lhat(N_i, D_i; theta), and solves the
estimating equation sum_i w_i psi(r_i) J_i = 0 with psi = rho' = clip(r, -delta, delta) and J_i =
d f_i / d theta. Its asymptotic covariance is the sandwich (Huber 1967; Huber & Ronchetti 2009,
*Robust Statistics*, Section 7.6)::

    Cov(theta) = H^-1 M H^-1,    H = E[psi'(r)] sum_i w_i J_i J_i^T,    M = sum_i w_i psi(r_i)^2 J_i J_i^T,

H the expected Jacobian of the estimating equation (its curvature term sum_i psi(r_i) d^2 f_i has
expectation zero at the truth and is left out, as Gauss-Newton does) and M the spread of the
score, run by run (so a scale of the residuals that differs between runs is carried). The Laplace
covariance of :mod:`jaxscale.determinacy.curvature`, sigma^2 (J^T W J)^-1, is right only for
least squares with Gaussian residuals; with delta = 1e-3, a tenth of the residuals' scale, the
Huber fit is nearly least absolute deviations, whose variance is 1 / (4 f(0)^2) (J^T J)^-1, f the
residuals' density: wider, and the sandwich says so.

DECLARED RULES (committed before any coverage was measured):

- E[psi'(r)] = P(|r| <= delta) is estimated smoothly, not by counting the residuals inside
  +-delta (a handful of 30): the mean over runs of Phi((delta - r_i)/h) - Phi((-delta - r_i)/h),
  a Gaussian kernel estimate of the residuals' distribution, h Silverman's (1986, Eq. 3.31)
  bandwidth 0.9 min(sd, IQR / 1.34) n^-1/5 of the residuals. An exact fit through p runs
  leaves p residuals at zero, which would inflate the density at zero; the residuals are
  therefore scaled by sqrt(n / (n - p)) first, and M by n / (n - p) (MacKinnon & White 1985, HC1),
  n the runs of positive weight and p the law's parameters.
- The 95% interval of a coordinate or of a smooth function q(theta) of it (an exponent, a
  closed form such as Chinchilla's a) is q -/+ t SE, SE by the delta method through the
  sandwich and t the 0.975 quantile of Student's t with n - p degrees of freedom.
- With n <= p there is no residual left to estimate the scale from, and a fit run off to infinity
  predicts no loss: the covariance is undefined (infinite), never a number.
"""

from __future__ import annotations

import math

import numpy as np
from jax.typing import ArrayLike
from scipy.special import ndtr
from scipy.stats import t as student_t

from jaxscale.determinacy.curvature import laplace_covariance, prediction_jacobian
from jaxscale.fitting.approach3 import FitResult
from jaxscale.core.numerics import float64

#: The level of the intervals the rules print.
LEVEL = 0.95


def silverman_bandwidth(values: np.ndarray) -> float:
    """Silverman's rule of thumb, 0.9 min(sd, IQR / 1.34) n^-1/5 (the larger of the two when one is 0)."""
    sd = float(np.std(values, ddof=1))
    q75, q25 = np.percentile(values, [75, 25])
    spread = min(sd, (q75 - q25) / 1.34) or sd
    return 0.9 * spread * len(values) ** -0.2


def psi_slope(residuals: np.ndarray, delta: float) -> float:
    """E[psi'(r)] = P(|r| <= delta), by a Gaussian kernel (module docstring); 1 for residuals all 0."""
    h = silverman_bandwidth(residuals) if len(residuals) > 1 else 0.0
    if not h > 0:
        return 1.0
    return float(np.mean(ndtr((delta - residuals) / h) - ndtr((-delta - residuals) / h)))


def _positive(residuals: np.ndarray, weights: ArrayLike | None) -> np.ndarray:
    """The rows of positive weight (all rows without weights)."""
    return np.ones(len(residuals), bool) if weights is None else np.asarray(weights) > 0


def run_scale(residuals: ArrayLike, delta: float, p: int, weights: ArrayLike | None = None) -> float:
    """The scale s of one run's log loss as the sandwich sees it, s^2 = n/(n - p) mean psi(r)^2 /
    E[psi']^2 over the rows of positive weight (for runs of equal leverage the sandwich is
    s^2 (J^T J)^-1); inf with n <= p, or where no residual lies within reach of ``delta``
    (E[psi'] estimated as 0)."""
    r = np.asarray(residuals, np.float64)
    used = _positive(r, weights)
    n = int(used.sum())
    if n <= p:
        return math.inf
    slope = psi_slope(r[used] * math.sqrt(n / (n - p)), delta)
    if not slope > 0:  # no residual within reach of delta (a fit run far off): no scale
        return math.inf
    return math.sqrt(n / (n - p) * np.mean(np.clip(r[used], -delta, delta) ** 2)) / slope


def sandwich(jacobian: ArrayLike, residuals: ArrayLike, delta: float, weights: ArrayLike | None = None) -> np.ndarray:
    """(p, p) H^-1 M H^-1 of a Huber fit (module docstring) from its prediction Jacobian (n, p),
    its log residuals (n,) and row ``weights`` (default ones; rows of weight 0 count for nothing).

    Args:
        jacobian: d log Lhat_i / d theta at the optimum, one row per run.
        residuals: log L_i - log Lhat_i at the optimum.
        delta: the Huber threshold the fit used.
        weights: row weights of the fit.

    Returns:
        The covariance of theta; infinite everywhere where the runs leave it undefined.
    """
    j = np.asarray(jacobian, np.float64)
    r = np.asarray(residuals, np.float64)
    w = np.ones(len(r)) if weights is None else np.asarray(weights, np.float64)
    used = w > 0
    n, p = int(used.sum()), j.shape[1]
    if n <= p or not np.all(np.isfinite(r[used])):  # no residual left, or a fit run off to infinity
        return np.full((p, p), np.inf)
    slope = psi_slope(r[used] * math.sqrt(n / (n - p)), delta)
    bread = laplace_covariance(slope * (j * w[:, None]).T @ j)
    psi = np.clip(r, -delta, delta)
    meat = n / (n - p) * (j * (w * psi**2)[:, None]).T @ j
    return bread @ meat @ bread


def degrees_of_freedom(weights: ArrayLike, p: int) -> int:
    """n - p: the runs of positive weight less the law's parameters."""
    return int(np.sum(np.asarray(weights) > 0)) - p


def t_quantile(dof: int, level: float = LEVEL) -> float:
    """The central ``level`` quantile of Student's t with ``dof`` degrees of freedom (inf if dof < 1)."""
    return float(student_t.ppf(0.5 + level / 2, dof)) if dof >= 1 else math.inf


@float64
def fit_sandwich(fit: FitResult) -> np.ndarray:
    """(p, p) sandwich covariance of an Approach-3 fit's vector (module docstring)."""
    data = fit.data()
    jac = prediction_jacobian(fit.law, fit.vector, fit.inputs)
    residuals = np.asarray(data.log_y) - np.log(fit.predict(*fit.inputs))
    return sandwich(jac, residuals, fit.delta, data.weights)
