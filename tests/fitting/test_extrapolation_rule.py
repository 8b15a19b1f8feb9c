"""Row weights in Approach 3 and its bootstrap, and the holdout's choice of a fit rule by the nested
backtest inside the fitting runs."""

from __future__ import annotations

import numpy as np
import pytest

from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.fitting.bootstrap import bootstrap
from jaxscale.fitting.extrapolation_rule import PUBLISHED, RULES, Rule
from jaxscale.fitting.holdout import holdout_check
from jaxscale.tables.table import from_arrays
from tests.fitting.test_approach3 import GRID, synthetic_runs


def test_a_run_of_weight_zero_is_left_out_of_the_fit_and_its_bootstrap():
    runs = synthetic_runs(noise=0.01, seed=4, size=60)
    keep = np.arange(60) >= 10
    weighted = fit_approach3(runs, grid=GRID[::4], weights=keep.astype(float))
    assert np.allclose(weighted.vector, fit_approach3(runs.select(keep), grid=GRID[::4]).vector, atol=1e-5)
    corrupted = from_arrays(runs.n, runs.d, np.where(keep, runs.loss, 10 * runs.loss))
    other = fit_approach3(corrupted, grid=GRID[::4], weights=keep.astype(float))
    assert np.allclose(bootstrap(weighted, 8, seed=1).vectors, bootstrap(other, 8, seed=1).vectors, atol=1e-6)
    with pytest.raises(ValueError, match="weights must be 60 finite values"):
        fit_approach3(runs, grid=GRID, weights=-np.ones(60))


def test_compute_weights_are_normalised_and_the_published_rule_comes_first():
    runs = synthetic_runs(size=50)
    w = Rule(1.0, 0.5).weights(runs)
    assert w.mean() == pytest.approx(1.0) and np.argmax(w) == np.argmax(runs.c)
    assert PUBLISHED == RULES[0] == Rule(1e-3, 0.0) and PUBLISHED.weights(runs) is None


@pytest.mark.slow
def test_the_holdout_fits_with_the_rule_its_backtest_ranks_first():
    runs = synthetic_runs(noise=0.005, seed=6, size=160)
    rules = (PUBLISHED, Rule(1.0, 1.0))
    summary = holdout_check(runs, 3e9, resamples=40, rules=rules, grid=GRID).summary()
    ranked = summary["backtest_mae_nats"]
    assert set(ranked) == {r.name for r in rules} and summary["rule"] == min(ranked, key=ranked.get)
