"""Approach 3 and its bootstrap: recovery of known parameters from noisy synthetic data made
by the laws package, determinism, the engine's other laws and options."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

from jaxscale.core import lbfgs
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.fitting.bootstrap import bootstrap, resample_counts
from jaxscale.fitting.holdout import holdout_check
from jaxscale.laws import chinchilla as ch
from jaxscale.laws import kaplan
from jaxscale.optimum.allocation import allocation_table
from jaxscale.tables.table import drop_highest_loss, from_arrays

CHINCHILLA, KAPLAN_ND, KAPLAN_NS = ch.LAW, kaplan.LAW_ND, kaplan.LAW_NS

TRUE = ch.EPOCH
GRID = CHINCHILLA.init_grid()[::45]  # 100 of Epoch's 4500 starts, spread over the grid


def synthetic_runs(seed: int = 1, size: int = 200, noise: float = 0.003, p=TRUE):
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(np.log(1e7), np.log(1e11), size))
    d = np.exp(rng.uniform(np.log(1e9), np.log(1e12), size))
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, d, p)) * np.exp(rng.normal(0.0, noise, size))
    return from_arrays(n, d, loss)


@pytest.fixture(scope="module")
def noisy_fit():
    fit = fit_approach3(synthetic_runs(), grid=GRID)
    return fit, bootstrap(fit, 200, seed=0)


def test_recovers_known_parameters_from_noisy_data(noisy_fit):
    fit, boot = noisy_fit
    se = boot.se()
    for name in ("A", "B", "E", "alpha", "beta"):
        truth = getattr(TRUE, name)
        assert abs(getattr(fit.params, name) - truth) < 4 * se[name], name
    assert fit.params.A == pytest.approx(TRUE.A, rel=0.1)
    assert fit.params.B == pytest.approx(TRUE.B, rel=0.15)
    for name in ("E", "alpha", "beta"):
        assert getattr(fit.params, name) == pytest.approx(getattr(TRUE, name), rel=0.01), name
    assert isinstance(fit.params, ch.ChinchillaParams)
    assert fit.n_points == 200 and fit.n_converged > 50


def test_bootstrap_summaries_are_consistent(noisy_fit):
    fit, boot = noisy_fit
    assert boot.converged.all()
    names = boot.names
    assert names[:5] == ["A", "B", "E", "alpha", "beta"] and set(names[5:]) == {"a", "b", "G"}
    assert isinstance(boot.params, ch.ChinchillaParams) and boot.params.alpha.shape == (200,)
    np.testing.assert_allclose(np.sqrt(np.diag(boot.cov())), [boot.se()[k] for k in names], rtol=1e-12)
    for name, (lo, hi) in boot.ci95().items():
        assert lo < hi
    np.testing.assert_allclose(boot.draws["a"] + boot.draws["b"], 1.0, rtol=1e-12)
    # the full-data optimum sits inside the bootstrap cloud
    for name in ("alpha", "beta", "E"):
        lo, hi = boot.ci95()[name]
        assert lo < getattr(fit.params, name) < hi


def test_bootstrap_is_deterministic_for_a_seed(noisy_fit):
    fit, boot = noisy_fit
    again = bootstrap(fit, 200, seed=0)
    for name in boot.names:
        np.testing.assert_array_equal(again.draws[name], boot.draws[name])
    assert not np.array_equal(resample_counts(fit.n_points, 200, 1), resample_counts(fit.n_points, 200, 0))
    counts = resample_counts(fit.n_points, 200, 0)
    np.testing.assert_array_equal(counts.sum(axis=1), fit.n_points)


def test_fit_is_deterministic_and_exact_on_noise_free_data():
    runs = synthetic_runs(noise=0.0)
    first = fit_approach3(runs, grid=GRID)
    second = fit_approach3(runs, grid=GRID)
    np.testing.assert_array_equal(first.vector, second.vector)
    for name in ("A", "B", "E", "alpha", "beta"):
        assert getattr(first.params, name) == pytest.approx(getattr(TRUE, name), rel=1e-6), name
    assert first.objective < 1e-20


def test_allocation_matches_closed_form_and_bands_cover_it(noisy_fit):
    fit, boot = noisy_fit
    budgets = np.array([1e21, 5.76e23])
    out = allocation_table(fit.law, fit.params, budgets, boot.parameter_draws)
    with jax.enable_x64(True):
        closed = np.asarray(ch.compute_optimal_n(budgets, fit.params))
    np.testing.assert_allclose(out["N"], closed, rtol=1e-9)
    np.testing.assert_allclose(out["N"] * out["D"] * 6, budgets, rtol=1e-12)
    assert np.all(out["N_lo"] < out["N"]) and np.all(out["N"] < out["N_hi"])
    assert np.all(out["tokens_per_param_lo"] < out["tokens_per_param"])


def test_tied_exponents_recover_a_tied_law():
    p = ch.ChinchillaParams(A=400.0, B=1500.0, E=1.8, alpha=0.33, beta=0.33)
    fit = fit_approach3(synthetic_runs(noise=0.0, p=p), law=ch.TIED, grid=CHINCHILLA.init_grid()[::45, :4])
    assert isinstance(fit.params, ch.TiedParams)
    assert fit.params.alpha == pytest.approx(0.33, rel=1e-6)
    assert fit.summary()["a"] == pytest.approx(0.5, rel=1e-12)
    assert fit.params.A == pytest.approx(400.0, rel=1e-5)


def test_asymmetry_pushes_the_fit_below_the_runs():
    runs = synthetic_runs(noise=0.01, seed=3)
    plain = fit_approach3(runs, grid=GRID[::4])
    lower = fit_approach3(runs, grid=GRID[::4], asymmetry=10.0)
    over = lambda fit: np.mean(fit.predict(runs.n, runs.d) > runs.loss)
    assert over(lower) < over(plain) - 0.2


def test_holdout_on_noise_free_data_predicts_the_large_runs():
    runs = synthetic_runs(noise=0.0)
    held = holdout_check(runs, 3e9, by="n", grid=GRID)
    summary = held.summary()
    assert summary["n_fit"] + summary["n_heldout"] == len(runs)
    assert summary["max_abs_rel_error"] < 1e-6
    with pytest.raises(ValueError, match="threshold"):
        holdout_check(runs, 1.0)


def test_kaplan_log_forms_equal_the_papers_equations():
    """Eq. 1.5 and 1.6 as written in the paper, against the laws' log-space forms."""
    n, d = np.geomspace(1e6, 1e11, 7), np.geomspace(1e8, 1e12, 7)
    s = np.geomspace(1e3, 1e6, 7)
    nd, ns = kaplan.KAPLAN_ND, kaplan.KAPLAN_NS
    eq_1_5 = ((nd.N_c / n) ** (nd.alpha_N / nd.alpha_D) + nd.D_c / d) ** nd.alpha_D
    eq_1_6 = (ns.N_c / n) ** ns.alpha_N + (ns.S_c / s) ** ns.alpha_S
    with jax.enable_x64(True):
        np.testing.assert_allclose(kaplan.loss_nd(n, d, nd), eq_1_5, rtol=1e-12)
        np.testing.assert_allclose(kaplan.loss_ns(n, s, ns), eq_1_6, rtol=1e-12)


@pytest.mark.parametrize("law, make", [
    (KAPLAN_ND, lambda n, x, p: kaplan.loss_nd(n, x, p)),
    (KAPLAN_NS, lambda n, x, p: kaplan.loss_ns(n, x, p)),
])
def test_kaplan_laws_are_recovered_by_the_same_engine(law, make):
    rng = np.random.default_rng(2)
    n = np.exp(rng.uniform(np.log(1e6), np.log(1e10), 120))
    x = np.exp(rng.uniform(np.log(1e8), np.log(1e11), 120)) if law is KAPLAN_ND \
        else np.exp(rng.uniform(np.log(1e3), np.log(1e6), 120))
    p = kaplan.KAPLAN_ND if law is KAPLAN_ND else kaplan.KAPLAN_NS
    with jax.enable_x64(True):
        loss = np.asarray(make(n, x, p))
    fit = fit_approach3(from_arrays(n, x, loss), law=law)
    for name, value in zip(p._fields, p):
        assert getattr(fit.params, name) == pytest.approx(value, rel=1e-4), name


def rosenbrock(theta, data):
    return (data - theta[0]) ** 2 + 100.0 * (theta[1] - theta[0] ** 2) ** 2


ROSENBROCK_STARTS = np.array([[-1.2, 1.0], [0.0, 0.0], [2.0, -1.0], [-2.0, 3.0], [1.5, 2.5]])


def test_batched_lbfgs_solves_rosenbrock_on_any_pool_size():
    starts = ROSENBROCK_STARTS
    options = lbfgs.Options(max_iter=500, ftol=0.0, gtol=1e-10)
    with jax.enable_x64(True):
        wide = lbfgs.solver(rosenbrock, options, slots=8)(starts, 1.0)
        narrow = lbfgs.solver(rosenbrock, options, slots=2)(starts, 1.0)
    np.testing.assert_allclose(np.asarray(wide.theta), 1.0, atol=1e-8)
    assert np.asarray(wide.converged).all()
    np.testing.assert_array_equal(np.asarray(wide.theta), np.asarray(narrow.theta))
    np.testing.assert_array_equal(np.asarray(wide.n_iter), np.asarray(narrow.n_iter))


def test_solver_compiled_for_fast_compilation_finds_the_same_minima():
    """lbfgs.FAST_COMPILE_OPTIONS change how XLA emits the kernels, not what they compute."""
    starts = ROSENBROCK_STARTS
    options = lbfgs.Options(max_iter=500, ftol=0.0, gtol=1e-10)
    pool = jax.jit(lambda th, d: lbfgs._pool(rosenbrock, options, "starts", 2, False, th, d, None))
    with jax.enable_x64(True):
        default = pool(starts, 1.0)
        fast = lbfgs.solver(rosenbrock, options, slots=2)(starts, 1.0)
    np.testing.assert_array_equal(np.asarray(fast.n_iter), np.asarray(default.n_iter))
    np.testing.assert_allclose(np.asarray(fast.theta), np.asarray(default.theta), rtol=0, atol=1e-12)


def ill_conditioned_quadratic(theta, data):
    """0.5 (x - c)' Q (x - c), Q with eigenvalues 1e-3 .. 10 along a rotated basis."""
    q, centre = data
    r = theta - centre
    return 0.5 * r @ (q @ r)


def test_curvature_memory_of_one_minimisation_speeds_up_a_related_one():
    rng = np.random.default_rng(0)
    basis, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    q = basis @ np.diag([1e-3, 1e-2, 0.1, 1.0, 10.0]) @ basis.T
    options = lbfgs.Options(max_iter=2000, ftol=0.0, gtol=1e-12, memory_size=10)
    with jax.enable_x64(True):
        first = lbfgs.minimize(ill_conditioned_quadratic, np.zeros(5), (q, np.ones(5)), options)
        assert bool(first.converged) and np.asarray(first.memory.s).any(axis=1).sum() > 0
        # related problems: the same curvature, other minima, started where the first one ended
        centres = 1.0 + 0.1 * rng.normal(size=(16, 5))
        solve = lbfgs.solver(ill_conditioned_quadratic, options, batch="data", slots=4)
        data = (np.broadcast_to(q, (16, 5, 5)), centres)
        theta0 = np.asarray(first.theta)
        cold = solve(theta0, data)
        warm = solve(theta0, data, first.memory.resized(options.memory_size))
    for sol in (cold, warm):
        assert np.asarray(sol.converged).all()
        np.testing.assert_allclose(np.asarray(sol.theta), centres, atol=1e-6)
    assert cold.memory is None  # not asked for
    assert np.mean(np.asarray(warm.n_iter)) < 0.5 * np.mean(np.asarray(cold.n_iter))
    with pytest.raises(ValueError, match=r"Memory.resized\(10\)"):
        solve(theta0, data, first.memory.resized(4))


def test_memory_resized_keeps_the_newest_pairs():
    memory = lbfgs.Memory(np.arange(1.0, 7.0).reshape(3, 2), np.arange(2.0, 8.0).reshape(3, 2))
    longer, shorter = memory.resized(5), memory.resized(2)
    np.testing.assert_array_equal(longer.s[:3], memory.s)
    np.testing.assert_array_equal(longer.y[3:], 0.0)  # empty slots after the oldest
    np.testing.assert_array_equal(shorter.y, memory.y[:2])


def test_bootstrap_from_the_fits_memory_matches_an_empty_one(noisy_fit):
    fit, boot = noisy_fit
    assert fit.curvature is not None and np.asarray(fit.curvature.s).any()
    empty = bootstrap(dataclasses.replace(fit, curvature=None), 200, seed=0)
    for name in ("A", "B", "E", "alpha", "beta"):
        np.testing.assert_allclose(boot.ci95()[name], empty.ci95()[name], rtol=1e-4)


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(grid=np.zeros((3, 4))), r"grid must be a finite \(k, 5\)"),
    (dict(asymmetry=-1.0), "asymmetry must be > 0"),
])
def test_bad_arguments_raise_value_error(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        fit_approach3(synthetic_runs(), **kwargs)


def test_too_few_runs_for_the_law():
    with pytest.raises(ValueError, match="2 runs for the chinchilla law's 5 parameters: fewer runs than parameters"):
        fit_approach3(drop_highest_loss(synthetic_runs(), 198), grid=GRID)


def test_bad_inputs_name_the_row_and_column():
    n, d = np.geomspace(1e8, 1e10, 6), np.geomspace(1e9, 1e11, 6)
    d[4] = -1.0
    with pytest.raises(ValueError, match="row 5, column 'tokens': must be > 0"):
        from_arrays(n, d, np.full(6, 3.0))


def test_bootstrap_intervals_are_centred_on_the_fit_log_scale_for_scales(noisy_fit):
    """The 95% intervals of ``ci95``: about the full-data estimate, with the refits' robust scale,
    on log scale for A, B, E and G, on the natural scale for the exponents and a, b."""
    from jaxscale.core.intervals import robust_normal

    fit, boot = noisy_fit
    summary = fit.summary()
    for name, (lo, hi) in boot.ci95().items():
        log = name in ("A", "B", "E", "G")
        assert (lo, hi) == pytest.approx(robust_normal(summary[name], boot.draws[name], log=log), rel=1e-12), name
        if log:
            assert np.sqrt(lo * hi) == pytest.approx(summary[name], rel=1e-9)  # symmetric in log
        else:
            assert (lo + hi) / 2 == pytest.approx(summary[name], rel=1e-9)
