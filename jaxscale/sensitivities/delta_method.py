"""First-order (delta-method) uncertainty of derived quantities from the full parameter covariance.

With draws theta^(s) of the law's parameters (bootstrap refits or posterior draws), Sigma the
covariance matrix of log theta over the draws and e = grad_{log theta} log q the elasticities of
a quantity q (:mod:`jaxscale.sensitivities.elasticity`), the delta method gives

    Var log q  ~=  e^T Sigma e,        i.e.  Var q ~= grad q^T Sigma_theta grad q  to first order,

correlations included. It is set beside the spread of log q over the draws themselves: where the
two agree, linearisation holds over the parameters' uncertainty; where they differ, q is
curved on that scale (or the draws are heavy-tailed). Two further columns attribute the variance:

- the share of theta_k, s_k = e_k (Sigma e)_k / (e^T Sigma e), sums to one over k and carries the
  correlations (a negative share: theta_k's correlation with the others cancels variance);
- the independent-parameter SD, sqrt(sum_k e_k^2 Sigma_kk), is what ignoring the correlations
  gives (for Chinchilla's A and alpha, strongly correlated, it overstates the spread).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from jax.typing import ArrayLike


class DeltaMethod(NamedTuple):
    """Per quantity ([Q]): SDs of log q by the delta method with and without the parameters'
    correlations and over the draws; ``shares`` [Q, K] of e^T Sigma e by parameter."""

    sd_log: np.ndarray
    sd_log_independent: np.ndarray
    sd_log_draws: np.ndarray
    shares: np.ndarray


def log_covariance(draws: NamedTuple) -> np.ndarray:
    """(K, K) covariance of log theta over the draws (the fields of ``draws``, [S] each; draws
    with a non-finite or non-positive field are left out)."""
    logs = np.log(np.stack([np.asarray(v, float) for v in draws], axis=1))
    return np.cov(logs[np.all(np.isfinite(logs), axis=1)], rowvar=False)


def delta_method(elasticities: ArrayLike, covariance: ArrayLike, log_q_draws: ArrayLike) -> DeltaMethod:
    """The delta-method SDs of log q for (Q, K) ``elasticities`` under the (K, K) covariance of
    log theta, beside the sample SD of the (S, Q) ``log_q_draws`` (non-finite rows left out)."""
    e, sigma = np.asarray(elasticities, float), np.asarray(covariance, float)
    pulled = e @ sigma  # (Q, K): (Sigma e)_k for each quantity
    variance = np.sum(pulled * e, axis=1)
    logs = np.asarray(log_q_draws, float)
    logs = logs[np.all(np.isfinite(logs), axis=1)]
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(variance[:, None] > 0, e * pulled / variance[:, None], 0.0)
    return DeltaMethod(
        sd_log=np.sqrt(variance),
        sd_log_independent=np.sqrt(e**2 @ np.diag(sigma)),
        sd_log_draws=np.std(logs, axis=0, ddof=1),
        shares=shares,
    )
