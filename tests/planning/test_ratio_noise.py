"""The design's robust belief: the residual scale grows with the distance from the compute-optimal
ratio as the runs say, and a plan prices the runs far from it higher."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.laws import chinchilla as ch
from jaxscale.planning.ratio_noise import ratio_distance, run_noise, scale_by_distance
from jaxscale.planning.selection import plan_runs
from jaxscale.planning.targets import parse_target
from jaxscale.tables.table import from_arrays
from tests.determinacy.test_curvature import GRID


def test_the_scale_by_distance_is_recovered_and_never_negative():
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 3, 5000)
    r = (0.004 + 0.003 * t) * rng.standard_normal(5000)
    c0, c1 = scale_by_distance(t, r)
    assert c0 == pytest.approx(0.004, rel=0.1) and c1 == pytest.approx(0.003, rel=0.1)
    assert scale_by_distance(t, 0.01 * (3 - t) * rng.standard_normal(5000))[1] >= 0.0
    assert scale_by_distance(t, np.zeros(5000)) == (1.0, 0.0)


def test_noise_averages_to_the_base_over_the_fitted_runs_and_grows_with_distance():
    rng = np.random.default_rng(1)
    t = rng.uniform(0, 3, 400)
    r = (0.002 + 0.004 * t) * rng.standard_normal(400)
    noise = run_noise(5, t, r, 0.01, t)
    assert np.mean(noise) == pytest.approx(0.01, rel=1e-12)
    assert run_noise(5, t, r, 0.01, np.array([3.0]))[0] > 2 * run_noise(5, t, r, 0.01, np.array([0.0]))[0]


def test_the_distance_is_from_the_fits_own_optimal_ratio():
    with jax.enable_x64(True):
        n_star = float(ch.compute_optimal_n(1e22, ch.EPOCH))
    d_star = 1e22 / 6 / n_star
    t = ratio_distance(ch.LAW, ch.EPOCH, np.array([n_star, n_star / 10]), np.array([d_star, d_star * 10]))
    assert t[0] == pytest.approx(0.0, abs=1e-6) and t[1] == pytest.approx(np.log(100.0), rel=1e-6)


def test_a_plan_from_a_fit_prices_runs_far_from_the_ratio_higher():
    rng = np.random.default_rng(2)
    n = np.geomspace(5e7, 5e9, 60)
    d = n * np.geomspace(2, 200, 60)[rng.permutation(60)]
    sigma = 0.002 + 0.006 * np.abs(np.log(d / n / 20))  # the law fits worse away from ~20 tokens per parameter
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, d, ch.EPOCH)) * np.exp(sigma * rng.standard_normal(60))
    fit = fit_approach3(from_arrays(n, d, loss), grid=GRID)
    cand_n = np.array([1e9, 1e9, 1e9])
    cand_d = np.array([2e10, 2e11, 1e9])
    plan = plan_runs(ch.LAW, parse_target("N*:1e24", ch.LAW), cand_n, cand_d, 1e30, fit=fit, max_runs=1)
    t = ratio_distance(ch.LAW, fit.params, cand_n, cand_d)
    assert np.array_equal(np.argsort(plan.noise), np.argsort(t))
    assert plan.noise[np.argmax(t)] > 1.5 * plan.noise[np.argmin(t)]
