"""Compute multipliers between recipes: exact where the recipes' laws are known, undefined where a
recipe cannot reach the other's loss, recovered with calibrated intervals from simulated runs of
two recipes 2x apart, and measured between the two extractions of Chinchilla's isoFLOP curves."""

from __future__ import annotations

import numpy as np
import pytest

from jaxscale.fitting.grouped import Layout, fit_grouped, stratified_counts
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws import chinchilla as ch
from jaxscale.planning.multiplier import multipliers, per_decade
from jaxscale.planning.recipes import compare_recipes, stacked
from jaxscale.planning.simulated_runs import simulated_runs
from jaxscale.plots.planning import multiplier_figure
from jaxscale.tables.table import read_runs_table
from tests.conftest import shared_data_file
from tests.determinacy.test_curvature import isoflop_design

TRUE_K = 2.0


def scaled(p, k=TRUE_K):
    """The law of a recipe worth ``k`` times the compute of ``p``'s: N and D each count sqrt(k)
    times, L'(N, D) = L(sqrt(k) N, sqrt(k) D), so its frontier is L*(k C) at every C."""
    return p._replace(A=p.A * k ** (-p.alpha / 2), B=p.B * k ** (-p.beta / 2))


def two_recipes(seed, sizes=8):
    n, d = isoflop_design(budgets=(1e18, 3e18, 1e19, 3e19, 1e20, 3e20, 1e21), sizes=sizes)
    return stacked({"A": simulated_runs(ch.LAW, ch.EPOCH, n, d, 0.01, 2 * seed),
                    "B": simulated_runs(ch.LAW, scaled(ch.EPOCH), n, d, 0.01, 2 * seed + 1)})


def test_the_multiplier_of_known_laws():
    c = np.array([1e18, 1e21, 1e24])
    np.testing.assert_allclose(multipliers(ch.LAW, ch.EPOCH, scaled(ch.EPOCH), c), TRUE_K, rtol=1e-9)
    np.testing.assert_allclose(multipliers(ch.LAW, scaled(ch.EPOCH), ch.EPOCH, c), 1 / TRUE_K, rtol=1e-9)
    # a lower irreducible loss makes the multiplier grow with scale
    lower = scaled(ch.EPOCH)._replace(E=ch.EPOCH.E * 0.98)
    trend = per_decade(ch.LAW, ch.EPOCH, lower, 1e22)
    assert trend.per_decade > 1 and trend.below < trend.at < trend.above
    # a recipe whose loss the baseline never reaches: undefined, not a number
    floor = ch.EPOCH._replace(E=ch.EPOCH.E * 0.5)
    assert np.isnan(multipliers(ch.LAW, ch.EPOCH, floor, [1e26])[0])
    draws = ch.ChinchillaParams(*(np.full(4, v) for v in ch.EPOCH))
    other = ch.ChinchillaParams(*(np.full(4, v) for v in scaled(ch.EPOCH)))
    assert multipliers(ch.LAW, draws, other, c).shape == (4, 3)


def test_the_grouped_layout_and_fit():
    layout = Layout(ch.LAW, 2, ("alpha", "beta"))
    vectors = np.array([[1.0, 2.0, 3.0, 0.3, 0.4], [4.0, 5.0, 6.0, 0.5, 0.6]])
    packed = layout.pack(vectors)
    np.testing.assert_allclose(packed, [0.4, 0.5, 1, 2, 3, 4, 5, 6])
    np.testing.assert_allclose(layout.expand(packed)[:, 3:], [[0.4, 0.5], [0.4, 0.5]])
    assert layout.names(["x", "y"])[:3] == ("alpha", "beta", "log_A[x]")
    counts = stratified_counts(np.array([0, 0, 0, 1, 1]), 6, seed=0)
    np.testing.assert_array_equal(counts[:, :3].sum(1), 3)
    np.testing.assert_array_equal(counts[:, 3:].sum(1), 2)
    runs = two_recipes(seed=5)
    group = (runs.frame["recipe"] == "B").to_numpy().astype(int)
    fit = fit_grouped(runs, group, ["A", "B"], ("alpha", "beta"))
    assert fit.vectors[0, 3] == fit.vectors[1, 3]
    truth = np.stack([ch.LAW.to_vector(ch.EPOCH), ch.LAW.to_vector(scaled(ch.EPOCH))])
    np.testing.assert_allclose(fit.vectors[:, 3:], truth[:, 3:], atol=0.05)
    with pytest.raises(ValueError, match="no coordinate 'gamma'"):
        fit_grouped(runs, group, ["A", "B"], ("gamma",))


def coverage(seeds, resamples):
    covered = []
    for seed in seeds:
        result = compare_recipes(two_recipes(seed), "recipe", 1e21, recipes=["A", "B"], resamples=resamples, seed=seed)
        interval = result.multipliers["B"].bootstrap[result.target_index]
        covered.append(interval.lower <= TRUE_K <= interval.upper)
    return np.mean(covered)


def test_the_95_percent_interval_covers_a_known_multiplier_in_most_seeds():
    assert coverage(range(8), resamples=200) >= 7 / 8


@pytest.mark.slow
def test_the_95_percent_interval_covers_a_known_multiplier_in_90_percent_of_50_seeds():
    assert coverage(range(100, 150), resamples=1000) >= 0.9


@pytest.mark.slow
def test_two_extractions_of_the_same_isoflop_curves():
    runs = read_runs_table(shared_data_file("isoflops_public.csv"))
    runs = runs.select(np.isin(runs.frame["source"], ["epochai_chinchilla", "ml_scalefit"]))
    result = compare_recipes(runs, "source", 1e22, recipes=["epochai_chinchilla", "ml_scalefit"], resamples=400)
    m = result.multipliers["ml_scalefit"]
    at = m.bootstrap[result.target_index]
    assert result.baseline == "epochai_chinchilla"
    assert 0 < at.lower <= at.estimate <= at.upper < np.inf
    assert m.per_decade.lower <= m.per_decade.estimate <= m.per_decade.upper
    assert len(multiplier_figure(result).axes) == 2


@pytest.mark.slow
def test_posterior_intervals_and_the_loo_test_of_sharing():
    result = compare_recipes(two_recipes(seed=3), "recipe", 1e21, recipes=["A", "B"], resamples=200,
                             bayes=NutsConfig(chains=2, warmup=300, samples=300, progress_bar=False))
    m = result.multipliers["B"]
    post = m.posterior[result.target_index]
    assert post.lower <= TRUE_K <= post.upper
    assert result.sharing["shared_fits"]  # the two recipes share their exponents by construction
    assert set(result.sharing) == {"elpd_diff", "se", "rule_se", "shared_fits"}
    free = result.unshared["B"].posterior[result.target_index]
    assert 0 < free.lower < free.upper < np.inf
