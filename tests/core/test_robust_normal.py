"""The bootstrap's interval about a fit's estimate (:func:`jaxscale.core.intervals.robust_normal`)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from jaxscale.core.intervals import robust_normal


def test_it_is_the_estimate_plus_minus_z_times_the_iqr_scale():
    draws = np.array([0.1, 0.2, 0.3, 0.4, 0.5, np.nan, 9.0])  # NaN left out; the far draw moves no quartile much
    q25, q75 = np.percentile(draws[~np.isnan(draws)], [25, 75])
    half = norm.ppf(0.975) * (q75 - q25) / 1.349
    assert robust_normal(0.32, draws) == pytest.approx((0.32 - half, 0.32 + half), rel=1e-12)
    half90 = norm.ppf(0.95) * (q75 - q25) / 1.349
    assert robust_normal(0.32, draws, 0.9) == pytest.approx((0.32 - half90, 0.32 + half90), rel=1e-12)


def test_on_log_scale_it_is_the_same_interval_of_the_logarithm():
    draws = np.exp(np.random.default_rng(0).normal(np.log(480.0), 0.3, 400))
    low, high = robust_normal(480.0, draws, log=True)
    log_low, log_high = robust_normal(np.log(480.0), np.log(draws))
    assert (low, high) == pytest.approx((np.exp(log_low), np.exp(log_high)), rel=1e-12)
    assert 0 < low < 480.0 < high


def test_normal_draws_give_the_normal_interval():
    draws = np.random.default_rng(1).normal(0.0, 0.05, 200_000)
    assert robust_normal(0.35, draws) == pytest.approx((0.35 - 1.96 * 0.05, 0.35 + 1.96 * 0.05), abs=1e-3)


def test_too_few_draws_or_no_estimate_give_no_interval():
    assert np.isnan(robust_normal(0.3, [0.2, np.nan])).all()
    assert np.isnan(robust_normal(np.nan, [0.2, 0.3, 0.4])).all()
    with pytest.raises(ValueError, match="level"):
        robust_normal(0.3, [0.2, 0.3], 1.0)
