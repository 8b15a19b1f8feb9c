"""The paced design: a run's value per FLOP is discounted by the share of the compute it would
hold, S / (S + C) (Eq. (4) of jaxscale.planning.pacing), and the design takes the run of largest
discounted value, which is not always the ensemble design's."""

from __future__ import annotations

import numpy as np
import pytest

from jaxscale.planning.ensemble_belief import RESAMPLES, SEED, ensemble_value
from jaxscale.planning.pacing import share_discount
from jaxscale.planning.refits import first_fit, pooled_bootstrap
from jaxscale.planning.replay import _at_fit, strategy
from jaxscale.planning.targets import n_star
from tests.planning.test_replay import small_pool


def test_the_discount_is_the_share_the_runs_so_far_keep():
    costs = np.array([1.0, 2.0, 7.0, 3.0])
    chosen = np.array([True, True, False, False])
    np.testing.assert_allclose(share_discount(costs, chosen), [3 / 4, 3 / 5, 3 / 10, 3 / 6])
    assert share_discount(np.array([1e30, 1e10]), np.array([False, True]))[0] == pytest.approx(1e-20)


def test_the_paced_design_takes_the_largest_discounted_value_and_leaves_a_large_run_the_ensemble_design_takes():
    pool = small_pool(seed=3)
    c = pool.runs.c
    chosen = np.zeros(len(c), bool)
    chosen[np.argsort(c, kind="stable")[:12]] = True
    fit = first_fit(pool, chosen)
    target = n_star(pool.law, 1e22)
    at, _ = _at_fit(pool, chosen, fit)
    gain = ensemble_value(pool.law, target, pooled_bootstrap(pool, chosen, fit, RESAMPLES, SEED), at.inputs, at.noise)
    value = np.where(chosen, -np.inf, gain / c)
    paced = value * share_discount(c, chosen)
    assert strategy("paced_design", pool, target)(pool, chosen, fit, ~chosen) == int(np.argmax(paced))
    # a pair the discount reorders: the ensemble design takes the dearer run, the paced one the cheaper
    pairs = [(i, j) for i in np.flatnonzero(~chosen) for j in np.flatnonzero(~chosen)
             if c[i] < c[j] and value[j] > value[i] and paced[i] > paced[j]]
    assert pairs
    cheap, dear = max(pairs, key=lambda p: min(value[p[1]] / value[p[0]], paced[p[0]] / paced[p[1]]))
    allowed = np.zeros(len(c), bool)
    allowed[[cheap, dear]] = True
    assert strategy("ensemble_design", pool, target)(pool, chosen, fit, allowed) == dear
    assert strategy("paced_design", pool, target)(pool, chosen, fit, allowed) == cheap
