"""Approaches 1, 2 and 3 agree on noise-free synthetic data from the Chinchilla law; Approach 1's
budget rules and its refusal of a frontier with too few sizes."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.fitting.approach1 import (
    MIN_FRONTIER_SIZES,
    budget_range,
    fit_approach1,
    padded_curves,
)
from jaxscale.fitting.approach2 import fit_approach2, isoflop_groups
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.laws import chinchilla as ch
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable, read_runs_table

P = ch.EPOCH
A_TRUE = P.beta / (P.alpha + P.beta)


def loss(n, d):
    with jax.enable_x64(True):
        return np.asarray(ch.loss(n, d, P))


def table(n: np.ndarray, c: np.ndarray, **columns: np.ndarray) -> RunsTable:
    """A runs table of rows (N, C, loss of the Chinchilla law), loaded as the fitters take it."""
    frame = pd.DataFrame({rs.N_TOTAL: n, rs.COMPUTE_TOTAL: c, rs.LOSS: loss(n, c / (6 * n)), **columns})
    return read_runs_table(frame, min_rows=1)


def curves_of(sizes: np.ndarray, tokens: np.ndarray = np.geomspace(1e8, 1e13, 200)) -> RunsTable:
    """Training curves: every size evaluated at every token count, one curve per size."""
    n, d = (g.ravel() for g in np.meshgrid(sizes, tokens, indexing="ij"))
    return table(n, 6 * n * d)


@pytest.fixture(scope="module")
def curves():
    """Training curves: 40 model sizes, each evaluated at 200 token counts."""
    return curves_of(np.geomspace(1e7, 1e11, 40))


@pytest.fixture(scope="module")
def isoflops():
    """Nine isoFLOP slices of 15 sizes each, spread by a factor 8 around the optimum."""
    budgets = np.geomspace(1e18, 1e22, 9)
    with jax.enable_x64(True):
        centre = np.asarray(ch.compute_optimal_n(budgets, P))
    n = np.concatenate([np.geomspace(m / 8, m * 8, 15) for m in centre])
    c = np.repeat(budgets, 15)
    return table(n, c)


def test_approach1_frontier_recovers_the_allocation_exponent(curves):
    result = fit_approach1(curves, n_budgets=100)
    assert result.a == pytest.approx(A_TRUE, abs=2e-3)
    assert result.a + result.b == pytest.approx(1.0, abs=1e-12)
    assert len(result.c) > 50
    assert result.a_interval[0] <= result.a <= result.a_interval[1]
    assert result.b_interval[0] <= result.b <= result.b_interval[1]
    assert len(result.sizes) > MIN_FRONTIER_SIZES and set(result.sizes) <= set(curves.n)


def test_approach1_interior_rule_drops_the_budgets_won_by_an_edge_size(curves):
    every = fit_approach1(curves, n_budgets=100, interior_only=False, bootstrap=0)
    interior = fit_approach1(curves, n_budgets=100, bootstrap=0)
    edges = np.isin(every.n_opt, [curves.n.min(), curves.n.max()])
    assert edges.any()
    np.testing.assert_array_equal(interior.c, every.c[~edges])
    assert every.a_interval is None and "ci95" not in every.summary()


def test_approach1_on_the_nonembedding_basis_fits_against_six_n_nonembedding_d(curves):
    kaplan = read_runs_table(curves.frame.assign(**{rs.N_NONEMBEDDING: curves.n / 2}))
    np.testing.assert_allclose(kaplan.c_nonembedding, 6 * kaplan.n_nonembedding * kaplan.d)
    half = fit_approach1(kaplan, basis="nonembedding", bootstrap=0)
    total = fit_approach1(curves, bootstrap=0)
    assert half.a == pytest.approx(total.a, abs=1e-12)
    np.testing.assert_allclose(half.n_opt, total.n_opt / 2)
    with pytest.raises(ValueError, match="n_nonembedding"):
        fit_approach1(curves, basis="nonembedding")


@pytest.mark.parametrize("trained, interior_only, n_sizes", [(3, True, 1), (2, False, 2)])
def test_approach1_frontier_of_too_few_sizes_gives_no_exponent(trained, interior_only, n_sizes):
    runs = curves_of(np.geomspace(1e8, 1e10, trained))
    with pytest.warns(UserWarning, match=fr"frontier holds {n_sizes} sizes?\)"):
        result = fit_approach1(runs, interior_only=interior_only)
    assert result.a is None and result.b is None and result.a_interval is None
    assert len(result.sizes) == n_sizes and len(result.c) > 0
    assert result.summary()["a"] is None and result.summary()["n_sizes"] == n_sizes


def test_approach1_frontier_of_three_sizes_gives_an_exponent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = fit_approach1(curves_of(np.geomspace(1e8, 1e10, MIN_FRONTIER_SIZES)), interior_only=False)
    assert len(result.sizes) == MIN_FRONTIER_SIZES and result.a is not None


def test_frontier_budget_ranges_nest():
    log_c = np.array([[1.0, 2.0, 3.0, np.nan], [2.0, 3.0, 4.0, 5.0], [2.5, 3.5, 6.0, 7.0]])
    n = np.array([1.0, 2.0, 3.0])
    assert budget_range(log_c, n, "common") == (2.5, 3.0)
    assert budget_range(log_c, n, "largest_first") == (2.5, 7.0)
    assert budget_range(log_c, n, "all") == (1.0, 7.0)
    with pytest.raises(ValueError, match="frontier range"):
        budget_range(log_c, n, "middle")
    with pytest.raises(ValueError, match="do not overlap"):
        budget_range(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 2.0]), "common")


def test_approach2_isoflop_recovers_the_allocation_exponent(isoflops):
    result = fit_approach2(isoflops)
    assert len(result.c) == 9
    assert result.a == pytest.approx(A_TRUE, abs=1e-6)
    assert result.b == pytest.approx(1 - A_TRUE, abs=1e-6)


def test_three_approaches_agree(curves, isoflops):
    third = fit_approach3(isoflops, grid=ch.LAW.init_grid()[::45])
    a3 = third.summary()["a"]
    assert a3 == pytest.approx(A_TRUE, rel=1e-6)
    assert fit_approach2(isoflops).a == pytest.approx(a3, abs=1e-6)
    assert fit_approach1(curves, n_budgets=100).a == pytest.approx(a3, abs=2e-3)


def test_approach2_coefficient_matches_the_closed_form(isoflops):
    result = fit_approach2(isoflops)
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


def test_approach2_on_the_nonembedding_basis_uses_its_sizes_and_compute(isoflops):
    kaplan = read_runs_table(isoflops.frame.assign(**{rs.N_NONEMBEDDING: isoflops.n / 2}))
    half, total = fit_approach2(kaplan, basis="nonembedding"), fit_approach2(isoflops)
    assert half.a == pytest.approx(total.a, abs=1e-9)
    np.testing.assert_allclose(half.n_opt, total.n_opt / 2, rtol=1e-9)


def test_approach2_with_too_few_slices_raises():
    n = np.array([1e8, 2e8, 4e8])
    with pytest.raises(ValueError, match="need at least 2"):
        fit_approach2(table(n, np.full(3, 1e19)))
