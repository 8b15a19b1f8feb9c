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
