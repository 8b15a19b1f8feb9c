"""The ensemble belief: read off refits that are linear in a Gaussian vector, Eq. (3) is Eq. (1)
with the refits' covariance; winsorising bounds a few refits off on a ridge; a target undefined
at too many refits is replaced by the indicator of being undefined; a replay step picks a run."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxscale.fitting.bootstrap import BootstrapResult
from jaxscale.laws import chinchilla as ch
from jaxscale.planning.ensemble_belief import (
    ensemble_reductions,
    ensemble_value,
    refit_predictions,
    winsorised,
)
from jaxscale.planning.refits import first_fit, pool_of
from jaxscale.planning.replay import strategy
from jaxscale.planning.selection import reductions
from jaxscale.planning.simulated_runs import simulated_runs
from jaxscale.planning.targets import n_star
from tests.planning.test_replay import small_pool


def test_linear_refits_give_the_sherman_morrison_reduction():
    rng = np.random.default_rng(0)
    p, k, draws = 4, 6, 200_000
    root = rng.standard_normal((p, p))
    covariance = root @ root.T / p
    gradient, jacobians = rng.standard_normal(p), rng.standard_normal((k, p))
    noise = rng.uniform(0.3, 1.0, k)
    theta = rng.multivariate_normal(np.zeros(p), covariance, draws)
    found = ensemble_reductions(theta @ gradient, theta @ jacobians.T, noise, trim=0.0)
    np.testing.assert_allclose(found, reductions(covariance, gradient, jacobians, noise), rtol=0.03)


def test_winsorising_bounds_a_few_refits_far_off():
    values = np.concatenate([np.linspace(-1, 1, 98), [50.0, -80.0]])[:, None]
    clipped = winsorised(values, 0.05)
    assert clipped.max() <= 1.0 and clipped.min() >= -1.0
    q = np.concatenate([np.linspace(-1, 1, 98), [1e3, 1e3]])
    f = np.concatenate([np.zeros(98), [1.0, 1.0]])[:, None]
    assert ensemble_reductions(q, f, np.array([0.1]), trim=0.05)[0] < 0.01 * ensemble_reductions(
        q, f, np.array([0.1]), trim=0.0)[0]


def _refits(vectors: np.ndarray) -> BootstrapResult:
    return BootstrapResult(ch.LAW, ch.LAW.from_vector(vectors), vectors, np.zeros(len(vectors)),
                           np.ones(len(vectors), bool), 0, 0.0)


def test_predictions_are_the_laws_and_an_undefined_target_becomes_its_indicator():
    rng = np.random.default_rng(1)
    vectors = np.asarray(ch.LAW.to_vector(ch.EPOCH))[None, :] + 0.02 * rng.standard_normal((60, 5))
    n, d = np.array([1e8, 1e9, 1e10]), np.array([2e9, 2e10, 2e11])
    predicted = refit_predictions(ch.LAW, _refits(vectors), (n, d))
    with jax.enable_x64(True):
        expected = np.log(np.asarray(ch.LAW.loss(n, d, ch.LAW.from_vector(vectors[7]))))
    np.testing.assert_allclose(predicted[7], expected, rtol=1e-12)
    target = n_star(ch.LAW, 1e24)
    noise = np.full(3, 0.01)
    assert np.all(ensemble_value(ch.LAW, target, _refits(vectors), (n, d), noise) > 0)
    broken = vectors.copy()
    broken[:10, 3] = -0.1  # alpha < 0 at a sixth of the refits: no N* there
    broken[10:, 3] = np.asarray(ch.LAW.to_vector(ch.EPOCH))[3]  # the others differ in E, A, B, beta only
    value = ensemble_value(ch.LAW, target, _refits(broken), (n, d), noise)
    undefined = (np.arange(60) < 10).astype(float)
    f = refit_predictions(ch.LAW, _refits(broken), (n, d))
    np.testing.assert_allclose(value, ensemble_reductions(undefined, f, noise, trim=0.0), rtol=1e-12)
    assert ensemble_value(ch.LAW, target, _refits(vectors[:10]), (n, d), noise) is None  # too few refits


def test_the_ensemble_design_picks_a_run_not_chosen():
    pool = small_pool(seed=3)
    chosen = np.zeros(len(pool.runs), bool)
    chosen[::2] = True
    fit = first_fit(pool, chosen)
    index = strategy("ensemble_design", pool, n_star(pool.law, 1e22))(pool, chosen, fit, ~chosen)
    assert not chosen[index]


def test_a_plan_from_the_ensemble_reads_eq_3_and_narrows_the_bootstraps_spread():
    """The plan ahead of the runs: its first gains are Eq. (3) of the same refits (the moments,
    computed apart), its variance now is the winsorised spread of the target over them, and each
    chosen run lowers it."""
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.fitting.bootstrap import bootstrap
    from jaxscale.planning.ensemble_belief import RESAMPLES, SEED, TRIM
    from jaxscale.planning.selection import plan_runs
    from jaxscale.planning.target_intervals import target_values

    fit = fit_approach3(small_pool(seed=4).runs)
    target = n_star(ch.LAW, 1e22)
    n, d = np.geomspace(1e8, 1e9, 5), np.geomspace(2e9, 2e10, 5)[::-1]
    plan = plan_runs(ch.LAW, target, n, d, 1e20, fit=fit, belief="ensemble")
    refits = bootstrap(fit, RESAMPLES, SEED)
    q, f = target_values(target, refits.vectors), refit_predictions(ch.LAW, refits, (n, d))
    kept = np.asarray(refits.converged) & np.isfinite(q) & np.all(np.isfinite(f), axis=1)
    np.testing.assert_allclose(plan.value * plan.cost, ensemble_reductions(q[kept], f[kept], plan.noise), rtol=1e-9)
    assert plan.variance == pytest.approx(np.var(winsorised(q[kept], TRIM), ddof=1), rel=1e-9)
    left = [plan.variance] + [c.variance for c in plan.choices]
    assert plan.kind == "ensemble" and len(plan.choices) >= 1 and np.all(np.diff(left) < 0)
    robust = plan_runs(ch.LAW, target, n, d, 1e20, fit=fit)
    assert robust.kind == "robust" and robust.variance != pytest.approx(plan.variance, rel=1e-3)


def test_the_ensemble_needs_runs_and_a_known_belief():
    target = n_star(ch.LAW, 1e22)
    from jaxscale.planning.selection import plan_runs

    with pytest.raises(ValueError, match="belief 'ensemble' reads the bootstrap of a fit"):
        plan_runs(ch.LAW, target, [1e8], [2e9], 1e20, belief="ensemble")
    with pytest.raises(ValueError, match="belief 'laplace' is not one of robust, ensemble"):
        plan_runs(ch.LAW, target, [1e8], [2e9], 1e20, belief="laplace")
