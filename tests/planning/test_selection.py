"""Which runs next: the targets are the law's quantities with their exact gradients, the expected
variance reduction of a run is what a full recomputation of the posterior variance gives, and
greedy selection spends no more than its budget."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.determinacy.curvature import prediction_jacobian
from jaxscale.laws import chinchilla as ch
from jaxscale.planning.target_intervals import gaussian_interval
from jaxscale.planning.selection import (
    Belief,
    greedy,
    laplace_interval,
    plan_runs,
    prior_belief,
    reductions,
    target_gradient,
    updated,
)
from jaxscale.planning.simulated_runs import simulated_runs
from jaxscale.planning.targets import parse_target
from jaxscale.plots.planning import candidates_figure
from tests.determinacy.test_curvature import GRID, isoflop_design

VECTOR = np.asarray(ch.LAW.to_vector(ch.EPOCH))


def test_targets_are_the_laws_quantities():
    with jax.enable_x64(True):
        n_star = float(ch.compute_optimal_n(1e24, ch.EPOCH))
        a, _ = ch.allocation_exponents(ch.EPOCH)
        loss = float(ch.loss(7e10, 1.4e12, ch.EPOCH))
    assert target_gradient(parse_target("N*:1e24", ch.LAW), VECTOR)[0] == pytest.approx(np.log(n_star), rel=1e-12)
    assert target_gradient(parse_target("D*:1e24", ch.LAW), VECTOR)[0] == pytest.approx(
        np.log(1e24 / 6 / n_star), rel=1e-12)
    assert target_gradient(parse_target("a:1e22", ch.LAW), VECTOR)[0] == pytest.approx(float(a), rel=1e-9)
    assert target_gradient(parse_target("L:7e10,1.4e12", ch.LAW), VECTOR)[0] == pytest.approx(np.log(loss), rel=1e-12)


@pytest.mark.parametrize("spec", ["N*:1e24", "a:1e22"])
def test_target_gradients_match_finite_differences(spec):
    target = parse_target(spec, ch.LAW)
    _, grad = target_gradient(target, VECTOR)
    step = 1e-6
    for k in range(5):
        up, down = VECTOR.copy(), VECTOR.copy()
        up[k] += step
        down[k] -= step
        fd = (target_gradient(target, up)[0] - target_gradient(target, down)[0]) / (2 * step)
        assert grad[k] == pytest.approx(fd, rel=1e-4, abs=1e-8)


def test_a_target_of_a_vector_off_to_infinity_is_undefined():
    far = VECTOR.copy()
    far[0] = 800.0  # log A: A overflows float64
    assert np.isnan(target_gradient(parse_target("N*:1e24", ch.LAW), far)[0])


@pytest.mark.parametrize("spec", ["N*", "N*:-1", "L:1e9", "b:1e24", "N*:1e24,2"])
def test_bad_target_specs_are_refused(spec):
    with pytest.raises(ValueError, match="target"):
        parse_target(spec, ch.LAW)


def test_the_expected_reduction_is_the_recomputed_variance_drop():
    rng = np.random.default_rng(0)
    root = rng.normal(size=(5, 5))
    cov = root @ root.T + np.eye(5)
    g, jac, sigma = rng.normal(size=5), rng.normal(size=(7, 5)), 0.3
    expected = [g @ cov @ g - g @ np.linalg.inv(np.linalg.inv(cov) + np.outer(j, j) / sigma**2) @ g for j in jac]
    np.testing.assert_allclose(reductions(cov, g, jac, sigma), expected, rtol=1e-10)
    np.testing.assert_allclose(updated(cov, jac[0], sigma),
                               np.linalg.inv(np.linalg.inv(cov) + np.outer(jac[0], jac[0]) / sigma**2), rtol=1e-9)
    # an undefined target falls back to the information gain
    np.testing.assert_allclose(reductions(cov, np.full(5, np.nan), jac, sigma),
                               np.log1p(np.einsum("kp,pq,kq->k", jac, cov, jac) / sigma**2))


def test_greedy_spends_within_its_budget_and_lowers_the_variance_each_time():
    n, d = isoflop_design(budgets=(1e18, 1e19, 1e20))
    belief = prior_belief(ch.LAW)
    _, g = target_gradient(parse_target("N*:1e22", ch.LAW), belief.vector)
    jac = prediction_jacobian(ch.LAW, belief.vector, (n, d))
    cost = 6 * n * d
    choices = greedy(belief, g, jac, cost, budget=3e19)
    assert sum(cost[c.index] for c in choices) <= 3e19
    assert len({c.index for c in choices}) == len(choices) > 2
    variances = [g @ belief.covariance @ g] + [c.variance for c in choices]
    assert np.all(np.diff(variances) < 0)
    # the variance after the choices is the posterior variance with all of them added at once
    idx = [c.index for c in choices]
    direct = np.linalg.inv(np.linalg.inv(belief.covariance) + jac[idx].T @ jac[idx] / belief.sigma**2)
    assert choices[-1].variance == pytest.approx(g @ direct @ g, rel=1e-8)
    assert len(greedy(Belief(belief.vector, belief.covariance, belief.sigma), g, jac, cost, 3e19, max_runs=2)) == 2


def test_a_plan_at_a_fit_and_one_from_the_prior():
    n, d = isoflop_design(budgets=(1e18, 1e19))
    fit = fit_approach3(simulated_runs(ch.LAW, ch.EPOCH, n, d, 0.01, seed=1), grid=GRID)
    cand_n, cand_d = isoflop_design(budgets=(1e19, 1e20, 1e21), sizes=6)
    target = parse_target("N*:1e23", ch.LAW)
    plan = plan_runs(ch.LAW, target, cand_n, cand_d, budget=2e21, fit=fit)
    assert plan.criterion == "variance" and plan.spent <= 2e21 and len(plan.choices) >= 1
    assert plan.estimate == pytest.approx(np.exp(target_gradient(target, fit.vector)[0]))
    table = plan.table()
    assert list(table.columns[:4]) == ["N", "D", "tokens_per_param", "C"]
    assert np.all(np.diff(table["sd_after"]) < 0)
    assert table["sd_after"].iloc[-1] < np.sqrt(plan.variance)
    assert len(candidates_figure(plan, n, d).axes) == 2  # the plot and its colour bar
    prior = plan_runs(ch.LAW, target, cand_n, cand_d, budget=2e21)
    assert prior.belief.sigma == 0.01 and prior.spent <= 2e21
    with pytest.raises(ValueError, match="budget"):
        plan_runs(ch.LAW, target, cand_n, cand_d, budget=0.0)
    with pytest.raises(ValueError, match="candidate D"):
        plan_runs(ch.LAW, target, cand_n, -cand_d, budget=1e21)


def test_laplace_intervals():
    interval = gaussian_interval(np.log(100.0), 0.1, 0.9, True)
    assert interval.lower == pytest.approx(100 * np.exp(-1.6448536 * 0.1)) and interval.estimate == pytest.approx(100)
    assert interval.width == pytest.approx(2 * 1.6448536 * 0.1 / np.log(10))
    assert gaussian_interval(np.nan, 0.1, 0.9, False).width == np.inf
    belief = prior_belief(ch.LAW)
    target = parse_target("a:1e24", ch.LAW)
    value, g = target_gradient(target, belief.vector)
    expected = gaussian_interval(value, np.sqrt(g @ belief.covariance @ g), 0.95, False)
    assert laplace_interval(belief, target, 0.95) == pytest.approx(expected)
