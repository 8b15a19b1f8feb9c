"""The curvature of a fit: the prediction Jacobian is the law's derivative, the information is
J^T J / sigma^2, the Laplace covariance its inverse, and a design that cannot separate N from D
shows it as an ill-conditioned information matrix."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.determinacy.curvature import (
    condition_number,
    correlation,
    curvature,
    laplace_covariance,
    prediction_jacobian,
    robust_sigma,
)
from jaxscale.laws import chinchilla as ch
from jaxscale.planning.simulated_runs import simulated_runs

GRID = ch.LAW.init_grid()[::45]


def isoflop_design(budgets=(1e18, 1e19, 1e20, 1e21), sizes=8):
    n, d = [], []
    for c in budgets:
        ns = np.geomspace((c / 6 / 400) ** 0.5, (c / 6 / 2.5) ** 0.5, sizes)
        n.extend(ns)
        d.extend(c / 6 / ns)
    return np.array(n), np.array(d)


def test_the_jacobian_is_the_derivative_of_the_log_loss():
    n, d = isoflop_design()
    vector = np.asarray(ch.LAW.to_vector(ch.EPOCH))
    jac = prediction_jacobian(ch.LAW, vector, (n, d))
    step = 1e-6
    with jax.enable_x64(True):
        for k in range(len(vector)):
            up, down = vector.copy(), vector.copy()
            up[k] += step
            down[k] -= step
            fd = (np.log(ch.LAW.loss(n, d, ch.LAW.from_vector(up)))
                  - np.log(ch.LAW.loss(n, d, ch.LAW.from_vector(down)))) / (2 * step)
            np.testing.assert_allclose(jac[:, k], fd, rtol=1e-6, atol=1e-9)


def test_information_and_laplace_covariance_at_a_fit():
    n, d = isoflop_design()
    runs = simulated_runs(ch.LAW, ch.EPOCH, n, d, 0.01, seed=3)
    fit = fit_approach3(runs, grid=GRID)
    curv = curvature(fit)
    residuals = np.log(runs.loss) - np.log(fit.predict(n, d))
    assert curv.sigma == pytest.approx(1.4826 * np.median(np.abs(residuals)))
    np.testing.assert_allclose(curv.information, curv.jacobian.T @ curv.jacobian / curv.sigma**2, rtol=1e-12)
    np.testing.assert_allclose(curv.covariance @ curv.information, np.eye(5), atol=1e-6)
    assert curv.names == ch.LAW.vector_names
    assert np.allclose(np.diag(curv.correlation), 1.0)
    # the Hessian of the Huber sum is symmetric, of the law's own coordinates
    np.testing.assert_allclose(curv.hessian, curv.hessian.T, rtol=1e-8, atol=1e-12)
    # a prior adds its precision
    prior = np.diag(np.full(5, 4.0))
    assert np.allclose(curvature(fit, prior_precision=prior).precision, curv.information + prior)


def test_one_line_of_runs_leaves_the_information_ill_conditioned():
    n = np.geomspace(1e8, 1e10, 30)
    line = prediction_jacobian(ch.LAW, ch.LAW.to_vector(ch.EPOCH), (n, 20 * n))
    grid = prediction_jacobian(ch.LAW, ch.LAW.to_vector(ch.EPOCH), isoflop_design())
    ill, well = condition_number(line.T @ line), condition_number(grid.T @ grid)
    assert ill > 1e4 * well


def test_helpers_on_known_matrices():
    assert condition_number(np.diag([1.0, 1e-3])) == pytest.approx(1e3)
    assert condition_number(np.zeros((2, 2))) == np.inf
    assert np.all(np.isinf(laplace_covariance(np.array([[1.0, 2.0], [2.0, 1.0]]))))
    np.testing.assert_allclose(laplace_covariance(np.diag([4.0, 0.25])), np.diag([0.25, 4.0]))
    np.testing.assert_allclose(correlation(np.array([[4.0, 1.0], [1.0, 1.0]])), [[1.0, 0.5], [0.5, 1.0]])
    assert robust_sigma([1.0, -1.0, 100.0], weights=[1, 1, 0]) == pytest.approx(1.4826)
