"""The one interval over draws: bootstrap refits, posterior draws or resampled exponents.

Every interval jaxscale reports is :func:`interval` of a set of draws, of one of two kinds:

- ``"percentile"``: the central interval, the (1 - level)/2 and (1 + level)/2 quantiles
  (linear interpolation between order statistics, NumPy's default), as a bootstrap percentile
  interval (Efron & Tibshirani 1993, Section 13.3) and the bands of an allocation are;
- ``"hdi"``: the highest-density interval, the narrowest interval that holds floor(level S) + 1
  of the S sorted draws (Hyndman 1996; the rule of ArviZ's ``hdi``), as a posterior's are.

The intervals of a fit's own quantities over its bootstrap refits are :func:`robust_normal`: the
normal interval about the fit's estimate with the refits' robust scale. The refits of a nearly
least-absolute-deviations fit (Huber, delta 1e-3) of a few dozen runs are lumpier than the
estimator's sampling distribution, and their percentile intervals covered too often (alpha, beta,
a, b 96.7-99.2% at nominal 95%, goal 90-98%); this interval was chosen among four on pilot tables
and covered 95.0-95.8% on the judged ones (``benchmarks/bootstrap_interval_variants.py``).

Draws where the quantity is undefined are NaN, and are left out (a quantity defined in no draw
gets NaN bounds). A percentile bound between two infinite draws is that infinity (interpolating
would give inf - inf = NaN).
"""

from __future__ import annotations

import warnings

import numpy as np
from jax.typing import ArrayLike

#: The kinds of interval :func:`interval` computes.
METHODS = ("percentile", "hdi")


def interval(draws: ArrayLike, level: float = 0.95, *, method: str = "percentile",
             axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``level`` interval of ``draws`` along ``axis`` (the draws), over the draws that are
    not NaN, as (lower, upper) bounds of the shape of the other axes.

    Args:
        draws: values of a quantity, one per draw along ``axis`` (NaN where it is undefined).
        level: the probability the interval holds, in (0, 1) (default 0.95).
        method: ``"percentile"`` (central) or ``"hdi"`` (highest density).
        axis: the axis of the draws.

    Returns:
        The lower and upper bounds.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    x = np.asarray(draws, np.float64)
    if method == "hdi":
        bounds = np.apply_along_axis(_hdi, axis, x, level)  # the draws' axis becomes (lower, upper)
        return np.take(bounds, 0, axis=axis), np.take(bounds, 1, axis=axis)
    tail = round(50.0 * (1.0 - level), 12)  # 2.5 for 0.95, not 2.5000000000000022
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices; inf - inf
        linear = np.nanpercentile(x, [tail, 100.0 - tail], axis=axis)
        nearest = np.nanpercentile(x, [tail, 100.0 - tail], axis=axis, method="nearest")
    bounds = np.where(np.isnan(linear), nearest, linear)
    return bounds[0], bounds[1]


def robust_normal(estimate: float, draws: ArrayLike, level: float = 0.95, *, log: bool = False) -> tuple[float, float]:
    """The ``level`` normal interval about ``estimate`` with the robust scale of ``draws``:
    estimate -/+ z IQR / 1.349 (z the standard normal's (1 + level)/2 quantile; IQR/1.349 is the
    standard deviation of a normal distribution with that interquartile range), NaN draws left out.

    Args:
        estimate: the point estimate the interval is centred on (a fit's value).
        draws: the quantity over draws (bootstrap refits).
        level: the probability the interval holds, in (0, 1) (default 0.95).
        log: the same on log scale, for a positive quantity: estimate exp(-/+ z IQR(log draws) / 1.349).

    Returns:
        The lower and upper bounds; NaN where fewer than two draws are defined.
    """
    from scipy.stats import norm

    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    x = np.asarray(draws, np.float64)
    x = x[~np.isnan(x)]
    if x.size < 2 or not np.isfinite(estimate):
        return np.nan, np.nan
    centre, x = (np.log(estimate), np.log(x)) if log else (estimate, x)
    q25, q75 = np.percentile(x, [25.0, 75.0])
    half = norm.ppf(0.5 + level / 2) * (q75 - q25) / 1.349
    lower, upper = centre - half, centre + half
    return (float(np.exp(lower)), float(np.exp(upper))) if log else (float(lower), float(upper))


def _hdi(x: np.ndarray, level: float) -> tuple[float, float]:
    """The highest-density interval of 1-D draws (the rule of ArviZ's ``hdi``, NaN left out)."""
    x = np.sort(x[~np.isnan(x)])
    if x.size == 0:
        return np.nan, np.nan
    inside = int(np.floor(level * x.size))  # < x.size, as level < 1
    lowest = int(np.argmin(x[inside:] - x[: x.size - inside]))
    return x[lowest], x[lowest + inside]
