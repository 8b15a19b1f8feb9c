"""Approaches 1, 2 and 3 agree on noise-free synthetic data from the Chinchilla law."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxscale.fit.approach1 import fit_approach1, padded_curves
from jaxscale.fit.approach2 import fit_approach2, isoflop_groups
from jaxscale.fit.approach3 import fit_approach3
from jaxscale.laws import chinchilla as ch
from jaxscale.runs import from_arrays

P = ch.EPOCH
A_TRUE = P.beta / (P.alpha + P.beta)


def loss(n, d):
    with jax.enable_x64(True):
        return np.asarray(ch.loss(n, d, P))


@pytest.fixture(scope="module")
def curves():
    """Training curves: 40 model sizes, each evaluated at 200 token counts."""
    n, d = np.meshgrid(np.geomspace(1e7, 1e11, 40), np.geomspace(1e8, 1e13, 200), indexing="ij")
    return n.ravel(), 6 * n.ravel() * d.ravel(), loss(n, d).ravel()


@pytest.fixture(scope="module")
def isoflops():
    """Nine isoFLOP slices of 15 sizes each, spread by a factor 8 around the optimum."""
    budgets = np.geomspace(1e18, 1e22, 9)
    with jax.enable_x64(True):
        centre = np.asarray(ch.compute_optimal_n(budgets, P))
    n = np.concatenate([np.geomspace(m / 8, m * 8, 15) for m in centre])
    c = np.repeat(budgets, 15)
    return n, c, loss(n, c / (6 * n))


def test_approach1_frontier_recovers_the_allocation_exponent(curves):
    result = fit_approach1(*curves, n_budgets=100)
    assert result.a == pytest.approx(A_TRUE, abs=2e-3)
    assert result.a + result.b == pytest.approx(1.0, abs=1e-12)
    assert len(result.c) > 50


def test_approach2_isoflop_recovers_the_allocation_exponent(isoflops):
    result = fit_approach2(*isoflops)
    assert len(result.c) == 9
    assert result.a == pytest.approx(A_TRUE, abs=1e-6)
    assert result.b == pytest.approx(1 - A_TRUE, abs=1e-6)


def test_three_approaches_agree(curves, isoflops):
    n, c, l = isoflops
    third = fit_approach3(from_arrays(n, c / (6 * n), l), grid=ch.LAW.init_grid()[::45])
    a3 = third.summary()["a"]
    assert a3 == pytest.approx(A_TRUE, rel=1e-6)
    assert fit_approach2(*isoflops).a == pytest.approx(a3, abs=1e-6)
    assert fit_approach1(*curves, n_budgets=100).a == pytest.approx(a3, abs=2e-3)


def test_approach2_coefficient_matches_the_closed_form(isoflops):
    result = fit_approach2(*isoflops)
    with jax.enable_x64(True):
        closed = np.asarray(ch.compute_optimal_n(result.c, P))
    # the parabola's bias in log N is the same at every budget (the profile has one shape)
    ratio = result.n_opt / closed
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-6)
    np.testing.assert_allclose(ratio, 1.0, rtol=0.05)


def test_isoflop_groups_split_on_gaps():
    c = np.array([1e18, 1.05e18, 1e19, 1.1e19, 0.98e18])
    np.testing.assert_array_equal(isoflop_groups(c), [0, 0, 1, 1, 0])


def test_padded_curves_sort_each_run_by_compute():
    n = np.array([1.0, 1.0, 2.0, 1.0, 2.0])
    c = np.array([3.0, 1.0, 5.0, 2.0, 4.0])
    sizes, log_c, curves = padded_curves(n, c, np.array([30.0, 10.0, 50.0, 20.0, 40.0]), n)
    np.testing.assert_array_equal(sizes, [1.0, 2.0])
    np.testing.assert_array_equal(curves[0], [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(curves[1, :2], [40.0, 50.0])
    assert np.isnan(curves[1, 2]) and np.isnan(log_c[1, 2])


def test_too_few_sizes_or_slices_raise():
    with pytest.raises(ValueError, match="at least 3 model sizes"):
        fit_approach1(np.array([1e8, 1e8, 2e8]), np.array([1e18, 2e18, 1e18]), np.array([3.0, 2.9, 3.1]))
    n = np.array([1e8, 2e8, 4e8])
    with pytest.raises(ValueError, match="need at least 2"):
        fit_approach2(n, np.full(3, 1e19), loss(n, 1e19 / (6 * n)))
