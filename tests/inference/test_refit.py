"""Bayesian refits: recovery of known parameters, diagnostics, reproducibility, the CLI contract."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import arviz as az
import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.inference import diagnostics, law_model, refit
from jaxscale.inference.sample import NutsConfig, run_nuts
from jaxscale.laws import chinchilla
from jaxscale.laws.chinchilla import ChinchillaParams
from jaxscale.laws.draws import derived_draws
from jaxscale.optimum.allocation import loss_draws, optimal_allocation
from jaxscale.reconciliation import per_draw as derived
from jaxscale.tables.table import read_runs_table
from jaxscale.sensitivities import elasticity

TRUTH = ChinchillaParams(A=400.0, B=1500.0, E=1.8, alpha=0.34, beta=0.32)
NOISE = 0.01  # SD of the log-loss noise of the synthetic runs


def synthetic_runs(p: ChinchillaParams, seed: int = 0, sizes: int = 8, budgets: int = 8) -> pd.DataFrame:
    """Runs on a grid of model sizes x tokens, loss from the law times log-normal noise."""
    rng = np.random.default_rng(seed)
    n, d = (g.ravel() for g in np.meshgrid(np.logspace(7.5, 10, sizes), np.logspace(9, 11.5, budgets)))
    with jax.enable_x64(True):
        loss = np.asarray(chinchilla.loss(n, d, p)) * np.exp(NOISE * rng.standard_normal(n.size))
    return pd.DataFrame({"n_total": n, "tokens": d, "loss": loss})


@pytest.fixture(scope="module")
def synthetic_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bayes") / "runs.csv"
    synthetic_runs(TRUTH).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def cli_result(synthetic_csv: Path, tmp_path_factory) -> dict:
    """One run of ``jaxscale bayes --json`` on the synthetic table (shared by several tests)."""
    out_dir = tmp_path_factory.mktemp("bayes_out")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["bayes", str(synthetic_csv), "--chains", "2", "--warmup", "300", "--samples", "300",
                     "--seed", "1", "--no-progress", "--json", "--out", str(out_dir)])
    assert code == 0
    return json.loads(buf.getvalue())


def test_cli_json_contract(cli_result: dict) -> None:
    for name in ("A", "B", "E", "alpha", "beta", "a", "b"):
        entry = cli_result["posterior"][name]
        assert set(entry) >= {"mean", "sd", "hdi95", "r_hat", "ess_bulk"}
        assert entry["hdi95"][0] < entry["mean"] < entry["hdi95"][1]
    assert set(cli_result["reconciled_exponent"]) == {"median", "hdi95"}
    assert isinstance(cli_result["divergences"], int)
    assert cli_result["seconds"] > 0
    assert {Path(f).name for f in cli_result["files"]} == {
        "posterior.nc", "corner.png", "optimal_bands.png", "reconciled_exponent.png"}


def test_recovers_known_parameters(cli_result: dict) -> None:
    a_true, b_true = chinchilla.allocation_exponents(TRUTH)
    truth = TRUTH._asdict() | {"a": float(a_true), "b": float(b_true)}
    for name, value in truth.items():
        lo, hi = cli_result["posterior"][name]["hdi95"]
        assert lo <= value <= hi, f"{name}: true {value} outside 95% HDI [{lo}, {hi}]"
    assert cli_result["divergences"] == 0
    assert max(s["r_hat"] for s in cli_result["posterior"].values()) <= 1.05  # 2 short chains
    # The reconciled exponent of the truth must sit inside its posterior interval too.
    truth_exp = derived.reconciled_exponents(ChinchillaParams(*(np.array([v]) for v in TRUTH)))
    lo, hi = cli_result["reconciled_exponent"]["hdi95"]
    assert lo <= float(truth_exp.nonembedding[0]) <= hi


def test_netcdf_round_trip(cli_result: dict) -> None:
    path = next(f for f in cli_result["files"] if f.endswith("posterior.nc"))
    idata = az.from_netcdf(path)
    assert idata.posterior.sizes["chain"] == 2 and idata.posterior.sizes["draw"] == 300
    assert {"A", "alpha", "a", "G", "sigma"} <= set(idata.posterior.data_vars)
    assert "diverging" in idata.sample_stats and "energy" in idata.sample_stats


def _short_run(seed: int) -> object:
    runs = read_runs_table(synthetic_runs(TRUTH))
    init = law_model.sites(chinchilla.LAW, TRUTH, (runs.n, runs.d), NOISE)
    config = NutsConfig(chains=2, warmup=10, samples=40, seed=seed, progress_bar=False, init_jitter=0.5)
    return run_nuts(partial(law_model.law_model, chinchilla.LAW), (runs.n, runs.d), runs.loss, init=init, config=config)


@pytest.fixture(scope="module")
def short_runs() -> tuple:
    return _short_run(3), _short_run(3)


def test_same_seed_identical_draws(short_runs) -> None:
    first, second = (m.get_samples() for m in short_runs)
    for name in first:
        np.testing.assert_array_equal(np.asarray(first[name]), np.asarray(second[name]))


def test_diagnostics_flag_a_bad_run(short_runs) -> None:
    with jax.enable_x64(True):
        diag = diagnostics.diagnose(az.from_numpyro(short_runs[0]))
    assert not diag.ok
    assert any("R-hat" in p for p in diag.problems)
    assert max(diag.r_hat.values()) > diagnostics.R_HAT_MAX
    with pytest.warns(diagnostics.SamplingWarning):
        diagnostics.warn_problems(diag)


def test_a_quantity_the_law_fixes_is_not_a_mixing_problem() -> None:
    # chinchilla-tied's a = b = 1/2 in every draw: R-hat and ESS are 0/0, and a warning that the
    # chains have not mixed would be false
    rng = np.random.default_rng(0)
    idata = az.from_dict(posterior={"alpha": rng.normal(size=(4, 500)), "a": np.full((4, 500), 0.5)},
                         sample_stats={"diverging": np.zeros((4, 500), bool), "energy": rng.normal(size=(4, 500))})
    diag = diagnostics.diagnose(idata)
    assert diag.problems == () and set(diag.r_hat) == {"alpha"} and set(diag.ess_bulk) == {"alpha"}
    assert diagnostics.varies(idata.posterior["alpha"]) and not diagnostics.varies(idata.posterior["a"])


def test_one_chain_says_once_that_it_cannot_show_mixing(caplog) -> None:
    # R-hat compares chains: with one it is undefined, said in one sentence (not "R-hat nan: chains
    # have not mixed" per quantity, nor ArviZ's shape warning)
    rng = np.random.default_rng(0)
    idata = az.from_dict(posterior={"alpha": rng.normal(size=(1, 500)), "beta": rng.normal(size=(1, 500))},
                         sample_stats={"diverging": np.zeros((1, 500), bool), "energy": rng.normal(size=(1, 500))})
    with caplog.at_level("WARNING"):
        diag = diagnostics.diagnose(idata)
    assert [p for p in diag.problems if "R-hat" in p] == [
        "R-hat is undefined with one chain: sample two or more to see whether chains mix"]
    assert all(np.isnan(v) for v in diag.r_hat.values()) and set(diag.r_hat) == {"alpha", "beta"}
    assert not any("chains have not mixed" in p for p in diag.problems) and caplog.records == []


def test_no_progress_bar_where_stderr_is_a_log(capfd) -> None:
    # NumPyro's bar redraws with carriage returns and escape codes: in a file (2> log) it would
    # leave lines of control characters, so there is none where stderr is not a terminal
    runs = read_runs_table(synthetic_runs(TRUTH, sizes=3, budgets=3))
    init = law_model.sites(chinchilla.LAW, TRUTH, (runs.n, runs.d), NOISE)
    config = NutsConfig(chains=1, warmup=5, samples=5, progress_bar=True)
    run_nuts(partial(law_model.law_model, chinchilla.LAW), (runs.n, runs.d), runs.loss, init=init, config=config)
    err = capfd.readouterr().err
    assert "\r" not in err and "\x1b" not in err


BAD_TABLES = {
    "nan_loss": "n_total,tokens,loss\n1e8,1e9,3.0\n2e8,2e9,nan\n4e8,4e9,2.8\n8e8,8e9,2.7\n1.6e9,1.6e10,2.6\n",
    "negative_n": "n_total,tokens,loss\n1e8,1e9,3.0\n-2e8,2e9,2.9\n4e8,4e9,2.8\n8e8,8e9,2.7\n1.6e9,1.6e10,2.6\n",
    "no_loss_column": "n_total,tokens,ppl\n1e8,1e9,3.0\n2e8,2e9,2.9\n4e8,4e9,2.8\n8e8,8e9,2.7\n1.6e9,1.6e10,2.6\n",
    "text_cell": "n_total,tokens,loss\n1e8,1e9,3.0\n2e8,two,2.9\n4e8,4e9,2.8\n8e8,8e9,2.7\n1.6e9,1.6e10,2.6\n",
    "header_only": "n_total,tokens,loss\n",
}


@pytest.mark.parametrize("kind", sorted(BAD_TABLES))
def test_bad_tables_give_the_fit_commands_errors(kind: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / f"{kind}.csv"
    path.write_text(BAD_TABLES[kind])
    assert main(["fit", str(path)]) == 2
    fit_err = capsys.readouterr().err.strip().split(": error: ", 1)[1]
    assert main(["bayes", str(path)]) == 2
    bayes_err = capsys.readouterr().err.strip()
    assert bayes_err == f"jaxscale bayes: error: {fit_err}"


def test_missing_file_and_bad_options(tmp_path: Path, capsys) -> None:
    assert main(["bayes", str(tmp_path / "absent.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as parser_exit:  # refused as parsed, before the file is looked at
        main(["bayes", str(tmp_path / "absent.csv"), "--chains", "0"])
    assert parser_exit.value.code == 2 and "argument --chains: must be an integer >= 1" in capsys.readouterr().err


def test_derived_quantities_match_the_law_draw_by_draw() -> None:
    rng = np.random.default_rng(0)
    draws = ChinchillaParams(*(v * (1 + 0.05 * rng.standard_normal(5)) for v in TRUTH))
    c = np.array([1e20, 1e24])
    alloc = derived_draws(chinchilla.LAW, draws)
    bands = optimal_allocation(chinchilla.LAW, draws, c)
    planned = loss_draws(chinchilla.LAW, draws, 7e10, 1.4e12)
    with jax.enable_x64(True):
        for i in range(5):
            p = ChinchillaParams(*(float(v[i]) for v in draws))
            a, b = chinchilla.allocation_exponents(p)
            np.testing.assert_allclose([alloc["a"][i], alloc["b"][i], alloc["G"][i]],
                                       [a, b, chinchilla.coefficient_g(p)], rtol=1e-12)
            np.testing.assert_allclose(bands.n[i], chinchilla.compute_optimal_n(c, p), rtol=1e-12)
            np.testing.assert_allclose(planned[i], chinchilla.loss(7e10, 1.4e12, p), rtol=1e-12)


def test_reconciled_exponents_match_the_reconcile_pipeline() -> None:
    from jaxscale.reconciliation.synthetic_curves import frontier_exponents

    draws = ChinchillaParams(*(np.array([v, w]) for v, w in zip(chinchilla.EPOCH, chinchilla.CHINCHILLA)))
    got = derived.reconciled_exponents(draws)
    with jax.enable_x64(True):
        for i, p in enumerate((chinchilla.EPOCH, chinchilla.CHINCHILLA)):
            want = frontier_exponents(ChinchillaParams(*(jax.numpy.float64(v) for v in p)), 47491.0)
            np.testing.assert_allclose(got.nonembedding[i], want.nonembedding, rtol=1e-12)
            np.testing.assert_allclose(got.total[i], want.total, rtol=1e-12)


def test_elasticities_of_the_optimal_size_are_the_closed_form() -> None:
    c = 1e24
    e = elasticity.elasticities(lambda p: chinchilla.compute_optimal_n(c, p), TRUTH)
    s = TRUTH.alpha + TRUTH.beta
    # log N* = log(alpha A / (beta B)) / (alpha+beta) + beta/(alpha+beta) log(C/6)  (Eq. 14)
    log_ratio = np.log(TRUTH.alpha * TRUTH.A / (TRUTH.beta * TRUTH.B))
    want = {
        "A": 1 / s, "B": -1 / s, "E": 0.0,
        "alpha": TRUTH.alpha * (1 / (TRUTH.alpha * s) - log_ratio / s**2 - TRUTH.beta * np.log(c / 6) / s**2),
        "beta": TRUTH.beta * (-1 / (TRUTH.beta * s) - log_ratio / s**2 + TRUTH.alpha * np.log(c / 6) / s**2),
    }
    for name, value in want.items():
        assert e[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name


@pytest.mark.slow
def test_laplace_fit_covers_held_out_runs() -> None:
    """The fast path fitted on 3/4 of a synthetic table: its 95% predictive interval covers
    most of the held-out quarter and its means lie near the true parameters."""
    runs = read_runs_table(synthetic_runs(TRUTH, seed=5, sizes=12, budgets=12))
    fit_rows, held_rows = diagnostics.holdout_split(len(runs), 0.25, seed=0)
    fit = refit.approximate_posterior(runs.select(fit_rows), draws=2000)
    held = runs.select(held_rows)
    checks = refit.predictive_checks(fit, held)
    assert 0.8 <= checks["coverage"] <= 1.0
    assert checks["residual_median_abs"] < 3 * NOISE
    summary = refit.summarize(fit)
    for name, value in TRUTH._asdict().items():  # the approximation is close to the truth
        assert abs(summary[name]["mean"] - value) < 3 * summary[name]["sd"], name


def test_kaplan_law_laplace_cli_recovers_parameters(tmp_path: Path) -> None:
    """The Kaplan L(N, D) model through the fast path of the CLI, on data drawn from it."""
    from jaxscale.laws import kaplan

    truth = kaplan.KAPLAN_ND
    grid = synthetic_runs(TRUTH)[["n_total", "tokens"]]
    rng = np.random.default_rng(1)
    with jax.enable_x64(True):
        loss = np.asarray(kaplan.loss_nd(grid.n_total.to_numpy(), grid.tokens.to_numpy(), truth))
    path = tmp_path / "kaplan.csv"
    grid.assign(loss=loss * np.exp(NOISE * rng.standard_normal(len(grid)))).to_csv(path, index=False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["bayes", str(path), "--law", "kaplan", "--laplace", "--json"]) == 0
    result = json.loads(buf.getvalue())
    assert result["reconciled_exponent"] is None and result["total_exponent"] is None
    assert result["reconciled_exponent_undefined"].startswith("undefined for the kaplan law: it needs Chinchilla's")
    for name, value in truth._asdict().items():
        s = result["posterior"][name]
        assert abs(np.log(s["mean"]) - np.log(value)) < 3 * s["sd"] / s["mean"], name


@pytest.mark.slow
def test_bayes_asks_for_one_cpu_device_per_chain(synthetic_csv: Path, tmp_path) -> None:
    """A user's run: one CPU device per chain, and NumPyro's progress bars, which update from
    callback threads that do not see the thread-local float64 switch (this failed with
    "Incorrect output dtype ... Expected: int64, Actual: int32"). The bars are shown on a
    terminal only: the subprocess's stderr, a pipe, is taken for one."""
    code = (f"from jaxscale.cli import main; import jax; from jaxscale.inference import sample; "
            f"sample.interactive = lambda: True; "
            f"assert main(['bayes', {str(synthetic_csv)!r}, '--chains', '3', '--warmup', '20', '--samples', '20', "
            f"'--json', '--out', {str(tmp_path)!r}]) == 0; print('devices', jax.local_device_count())")
    # NumPyro turns its progress bars off where CI or PYTEST_XDIST_WORKER is set; a user has neither.
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "CI", "PYTEST_XDIST_WORKER")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("devices 3") and "Running chain 2" in proc.stderr


@pytest.mark.slow
def test_bayes_called_from_python_leaves_the_environment_alone(synthetic_csv: Path, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    jax.devices()  # this process's backend is running: new flags would only leak into subprocesses
    assert main(["bayes", str(synthetic_csv), "--chains", "2", "--warmup", "20", "--samples", "20",
                 "--no-progress", "--json", "--out", str(tmp_path)]) == 0
    assert "XLA_FLAGS" not in os.environ
