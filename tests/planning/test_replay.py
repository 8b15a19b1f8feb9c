"""Replaying a study: each strategy's order, the warm refits agree with a full fit, a short replay
keeps its books (compute, intervals, holdout), and the compute to reach a width is read the
declared way; the candidate grid stays within its costs."""

from __future__ import annotations

import numpy as np
import pytest

from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.laws import chinchilla as ch
from jaxscale.planning.candidates import candidate_grid
from jaxscale.planning.target_intervals import Interval
from jaxscale.planning.refits import first_fit, pool_of, refit
from jaxscale.planning.replay import (
    Trace,
    cheapest_order,
    compute_to_reach,
    isoflop_order,
    random_order,
    replay,
    strategy,
)
from jaxscale.planning.simulated_runs import simulated_runs
from jaxscale.planning.targets import n_star
from tests.determinacy.test_curvature import isoflop_design


def small_pool(seed=0):
    n, d = isoflop_design(budgets=(1e18, 3e18, 1e19, 3e19, 1e20), sizes=6)
    return pool_of(simulated_runs(ch.LAW, ch.EPOCH, n, d, 0.01, seed))


def test_orders():
    pool = small_pool()
    c = pool.runs.c
    assert np.all(np.diff(c[cheapest_order(pool)]) >= 0)
    iso = isoflop_order(pool, budgets=(1e18, 1e19, 1e20))
    nearest = np.argmin(np.abs(np.log10(c[iso])[:, None] - np.array([18, 19, 20])), axis=1)
    assert np.all(np.diff(nearest) >= 0)  # profile after profile
    for k in range(3):
        sizes = pool.runs.n[iso][nearest == k]
        assert np.all(np.diff(sizes) >= 0)  # within a profile by N
    assert sorted(random_order(pool, 1)) == list(range(len(c)))
    assert not np.array_equal(random_order(pool, 1), random_order(pool, 2))
    with pytest.raises(ValueError, match="unknown strategy"):
        strategy("best", pool, n_star(ch.LAW, 1e22))


def test_a_warm_refit_reaches_the_full_fit():
    pool = small_pool(seed=2)
    chosen = np.zeros(len(pool.runs), bool)
    chosen[:18] = True
    previous = first_fit(pool, chosen)
    chosen[18:24] = True
    warm = refit(pool, chosen, previous)
    full = fit_approach3(pool.runs.select(chosen))
    assert warm.objective <= full.objective * (1 + 1e-9)
    np.testing.assert_allclose(warm.vector, full.vector, rtol=1e-4, atol=1e-4)
    assert len(warm.runs) == 24


def test_a_short_replay_keeps_its_books():
    pool = small_pool(seed=1)
    target = n_star(ch.LAW, 1e22)
    start = np.zeros(len(pool.runs), bool)
    start[np.argsort(pool.runs.c)[:12]] = True
    budget = 0.2 * pool.runs.c[~start].sum()
    trace = replay(pool, start, strategy("design", pool, target), target, name="design", resamples=50,
                   budget=budget)
    spent = pool.runs.c[trace.chosen]
    assert len(set(trace.chosen)) == len(trace.chosen) and not np.any(start[trace.chosen])
    assert spent.sum() <= budget
    np.testing.assert_allclose(np.diff(trace.compute), spent)
    assert trace.compute[0] == pytest.approx(pool.runs.c[start].sum())
    assert len(trace.intervals) == len(trace.compute) == len(trace.holdout_error)
    assert np.isfinite(trace.widths[-1]) and trace.intervals[-1].lower < trace.intervals[-1].upper
    # every affordable run left would overspend
    left = np.ones(len(pool.runs), bool)
    left[trace.chosen] = False
    assert np.all(pool.runs.c[left & ~start] > budget - spent.sum())


def fake_trace(widths):
    intervals = tuple(Interval(1.0, 1.0, 10 ** w, 0.9, True) for w in widths)
    return Trace("x", np.arange(len(widths) - 1), np.arange(1.0, len(widths) + 1), intervals,
                 np.zeros(len(widths)), None)


def test_compute_to_reach_is_the_first_step_after_which_it_stays():
    assert compute_to_reach(fake_trace([np.inf, 0.9, 0.4, 0.6, 0.45, 0.3]), 0.5) == 5.0
    assert compute_to_reach(fake_trace([0.4, 0.3]), 0.5) == 1.0
    assert compute_to_reach(fake_trace([0.4, 0.6]), 0.5) is None


def test_candidate_grid_stays_within_its_costs():
    n, d = candidate_grid(1e21, min_cost=1e19)
    c = 6 * n * d
    assert c.max() <= 1e21 * (1 + 1e-9) and c.min() >= 1e19 * (1 - 1e-9)
    assert (d / n).min() >= 1 - 1e-9 and (d / n).max() <= 1000 * (1 + 1e-9)
    assert len(n) > 50
    with pytest.raises(ValueError, match="min_cost"):
        candidate_grid(1e19, min_cost=1e20)
