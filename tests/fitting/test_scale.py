"""Fits at any size: objectives summed in chunks of rows, the start screen in batches, large tables
screened on a subsample, bootstrap resamples drawn and refitted in blocks, and memory refused
before the work; each against the unchunked path, which it must reproduce (to 1e-10 of the
objective) wherever both fit in memory."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.cli import main
from jaxscale.fitting import approach3, bootstrap, objective
from jaxscale.fitting.objective import fit_data, huber_fn, nll_fn
from jaxscale.laws import chinchilla
from jaxscale.tables.table import drop_highest_loss, read_runs_table
from jaxscale.support import memory
from tests.conftest import shared_data_file
from tests.fitting.test_approach3 import synthetic_runs

UNCHUNKED = 2**62


@pytest.fixture
def unchunked(monkeypatch):
    """The path before chunking: every sum over all rows at once, the grid screened in one
    evaluation, no subsample."""
    for module, name in ((objective, "ROWS_PER_CHUNK"), (approach3, "SCREEN_TERMS"), (approach3, "SUBSAMPLE")):
        monkeypatch.setattr(module, name, UNCHUNKED)
    return monkeypatch


@pytest.fixture(scope="module")
def epoch_runs():
    return drop_highest_loss(read_runs_table(shared_data_file("chinchilla_svg_extracted_data.csv")), 5)


def test_chunked_sums_have_the_value_and_derivatives_of_one_sum(x64, monkeypatch):
    law = chinchilla.LAW
    runs = synthetic_runs(seed=4, size=1000, noise=0.01)
    data = fit_data(runs.law_inputs(law.inputs), runs.loss, np.random.default_rng(0).integers(0, 3, len(runs)))
    theta = law.to_vector(chinchilla.EPOCH) + 0.01
    with_sigma = jnp.append(theta, -4.0)
    one = [huber_fn(law), nll_fn(law)]
    monkeypatch.setattr(objective, "ROWS_PER_CHUNK", 96)  # 1000 rows: 10 chunks and a padded one
    chunked = [huber_fn(law), nll_fn(law)]
    for whole, parts, x in zip(one, chunked, (theta, with_sigma)):
        for derivative in (lambda f: f, jax.grad, jax.hessian):  # the hessian: forward over reverse mode
            expected, got = (np.asarray(jax.jit(derivative(f))(x, data)) for f in (whole, parts))
            np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-14 * np.max(np.abs(expected)))


def _fits(runs, unchunked, changes):
    """The unchunked fit of ``runs``, then the fit with ``changes`` to the module settings."""
    full = approach3.fit_approach3(runs)
    unchunked.undo()
    for (module, name), value in changes.items():
        unchunked.setattr(module, name, value)
    return full, approach3.fit_approach3(runs)


@pytest.mark.slow
def test_fit_of_10k_rows_in_chunks_and_on_a_subsample_is_the_unchunked_fit(unchunked):
    runs = synthetic_runs(seed=5, size=10_000, noise=0.01)
    full, chunked = _fits(runs, unchunked, {(objective, "ROWS_PER_CHUNK"): 1024})
    unchunked.setattr(approach3, "SUBSAMPLE", 2048)
    subsampled = approach3.fit_approach3(runs)
    for fit in (chunked, subsampled):
        assert abs(fit.objective - full.objective) <= 1e-10 * full.objective
        np.testing.assert_allclose(fit.vector, full.vector, rtol=1e-5)


def test_fit_of_2k_rows_in_chunks_and_on_a_subsample_is_the_unchunked_fit(unchunked):
    runs = synthetic_runs(seed=6, size=2000, noise=0.01)
    full, subsampled = _fits(runs, unchunked, {(objective, "ROWS_PER_CHUNK"): 256, (approach3, "SUBSAMPLE"): 512})
    assert subsampled.n_minimised == approach3.SCREEN
    assert abs(subsampled.objective - full.objective) <= 1e-10 * full.objective
    np.testing.assert_allclose(subsampled.vector, full.vector, rtol=1e-5)


def test_epochs_runs_screened_on_a_subsample_of_128_reach_the_full_optimum(epoch_runs, unchunked):
    full, subsampled = _fits(epoch_runs, unchunked, {(approach3, "SUBSAMPLE"): 128})
    assert abs(subsampled.objective - full.objective) <= 1e-10 * full.objective


def test_subsample_is_drawn_without_replacement_only_from_larger_tables():
    data = fit_data((np.arange(1.0, 101.0), np.arange(2.0, 102.0)), np.linspace(2, 3, 100))
    assert approach3.subsample(data, 100) is None
    sample = approach3.subsample(data, 40)
    n = np.exp(sample.log_x[0])
    assert len(n) == 40 and len(np.unique(n)) == 40 and np.all(np.diff(n) > 0)


def test_distinct_optima_and_contenders():
    vectors = np.array([[0.0, 1.0], [0.0, 1.0 + 1e-6], [0.5, 1.0], [0.5, 1.0], [2.0, 1.0]])
    assert list(approach3.distinct(vectors, np.arange(5), 4)) == [0, 2, 4]
    assert list(approach3.distinct(vectors, np.arange(5), 2)) == [0, 2]
    rng = np.random.default_rng(0)
    best = rng.exponential(1.0, 4000)
    close = best + rng.normal(0.0, 0.5, 4000)  # mean difference ~0, within noise
    worse = best + 0.2 + rng.normal(0.0, 0.5, 4000)  # 0.2 above, ~25 standard errors
    assert list(approach3.contenders(np.stack([best, close, worse]), 100_000)) == [True, True, False]


def test_resample_blocks_are_the_resample_counts():
    counts = bootstrap.resample_counts(300, 23, seed=7)
    blocks = list(bootstrap.resample_blocks(300, 23, 7, 5))
    assert [len(b) for b in blocks] == [5, 5, 5, 5, 3]
    assert np.array_equal(np.concatenate(blocks), counts)
    assert np.all(counts.sum(axis=1) == 300)


def test_bootstrap_in_blocks_is_the_bootstrap_at_once(epoch_runs, monkeypatch):
    fit = approach3.fit_approach3(epoch_runs)
    at_once = bootstrap.bootstrap(fit, 40, seed=3)
    monkeypatch.setattr(bootstrap, "BLOCK_TERMS", 7 * fit.n_points)  # blocks of 7: 5 of them and one of 5
    assert bootstrap.block_size(fit.n_points) == 7
    in_blocks = bootstrap.bootstrap(fit, 40, seed=3)
    # the same refits; each block pads its resamples to its own row count, so sums add in another
    # order and the refits stop elsewhere within their tolerance: the same optimum to 1e-10
    np.testing.assert_allclose(in_blocks.objective, at_once.objective, rtol=1e-10)
    np.testing.assert_allclose(in_blocks.vectors, at_once.vectors, rtol=1e-6)
    assert np.array_equal(in_blocks.converged, at_once.converged)


def test_memory_that_would_not_fit_is_refused_with_the_estimate():
    memory.check_memory(2**30, "a small thing", available=2**31)
    with pytest.raises(ValueError, match=r"a big thing needs about 4\.0 GiB of memory and 1\.0 GiB is available"):
        memory.check_memory(2**32, "a big thing", available=2**30)


def test_fit_cli_refuses_a_table_too_large_for_memory_before_loading_it(tmp_path, capsys, monkeypatch):
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n" + "".join(f"{1e8 * (1 + i)},{2e9 * (1 + i % 7)},{3 - i / 100}\n" for i in range(50)))
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    code = main(["fit", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "loading" in err and "needs about" in err and "is available" in err


def test_fit_refuses_before_screening_when_the_rows_would_not_fit(epoch_runs, monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: approach3.FIT_BYTES_FIXED)
    with pytest.raises(ValueError, match="the Approach-3 fit of 240 rows needs about"):
        approach3.fit_approach3(epoch_runs)


def test_holdout_refuses_draws_that_would_not_fit_before_fitting(epoch_runs, monkeypatch):
    from jaxscale.fitting import extrapolation_rule, holdout

    monkeypatch.setattr(memory, "available_bytes", lambda: 10**6)
    monkeypatch.setattr(extrapolation_rule, "fit_approach3", lambda *a, **k: pytest.fail("fitted"))
    with pytest.raises(ValueError, match=r"the holdout's predictive draws \(1,000 resamples x \d+ held-out runs\)"):
        holdout.holdout_check(epoch_runs, 1e9)
