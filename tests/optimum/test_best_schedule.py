"""Schedule optimisation through a fitted multi-power law (jaxscale.optimum.best_schedule)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxscale.curves import multipower_fit as mc
from jaxscale.optimum import best_schedule as sc
from tests.curves.test_multipower_fit import FITTED, PEAK, WARMUP, _table


def test_the_optimised_schedule_beats_cosine_and_wsd_under_the_fitted_law():
    table, lrs = _table(noise=1e-3)
    fitted = mc.fit_multipower(table, lrs, FITTED, []).params
    best = sc.optimal_schedule(fitted, 3000, PEAK, WARMUP, iterations=600, knots=32)
    assert np.all(np.diff(best.lrs[WARMUP:]) <= 0) and best.lrs.max() <= PEAK * (1 + 1e-12)
    np.testing.assert_allclose(best.lrs[:WARMUP], np.minimum(np.arange(1, WARMUP + 1) / WARMUP, 1) * PEAK)
    gains = best.gains()
    assert gains["cosine"] > 0 and gains["wsd"] > 0, gains
    assert best.history[-1] < best.history[0]
    assert best.to_dict()["gain"] == gains


def test_bad_lengths_and_peaks_are_refused():
    from jaxscale.laws.multipower import PUBLISHED_25M

    with pytest.raises(ValueError, match="warmup_steps < steps - 1"):
        sc.optimal_schedule(PUBLISHED_25M, 100, 3e-4, 100)
    with pytest.raises(ValueError, match="peak_lr must be a number > 0"):
        sc.optimal_schedule(PUBLISHED_25M, 100, -1.0, 10)


def test_a_peak_far_outside_the_fitted_rates_is_refused_not_printed():
    """`schedule --published luo-25m --steps 24000 --peak-lr 100` printed a final loss of -36,287."""
    from jaxscale.laws.multipower import PUBLISHED_25M

    with pytest.raises(ValueError, match=r"the law predicts final losses of .*at peak_lr 100 .*outside"):
        sc.optimal_schedule(PUBLISHED_25M, 24_000, 100.0, iterations=5)


def test_a_schedule_longer_than_memory_holds_is_refused_before_any_work(monkeypatch):
    from jaxscale.laws.multipower import PUBLISHED_25M

    monkeypatch.setattr("jaxscale.support.memory.available_bytes", lambda: 2**34)
    with pytest.raises(ValueError, match=r"optimising a schedule of 1,000,000,000 steps needs about .* GiB"):
        sc.optimal_schedule(PUBLISHED_25M, 1_000_000_000, 3e-4, 2_160)


def test_a_law_at_its_exponential_limit_is_warned_about_beside_the_schedule():
    """A fit that reached C = 1.6e-23, beta = 2e5 was printed as a law like any other: only C beta
    is determined there, and the schedule optimised under it says so."""
    import jaxscale as js
    from jaxscale.laws.multipower import PUBLISHED_25M, undetermined_drop
    from jaxscale.support.plausibility import PlausibilityWarning

    assert undetermined_drop(PUBLISHED_25M) is None
    limit = PUBLISHED_25M._replace(C=1.6e-23, beta=2e5)
    assert "only C x beta = 3.2e-18 x is determined" in undetermined_drop(limit)
    with pytest.warns(PlausibilityWarning, match="exponential limit"):
        js.schedule(limit, steps=200, peak_lr=3e-4, iterations=2)
