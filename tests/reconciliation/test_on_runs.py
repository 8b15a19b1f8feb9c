"""Pearce & Song on a runs table's own data, and calibrated extrapolation of held-out runs."""

from __future__ import annotations

import contextlib
import io
import json

import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.fitting.holdout import calibration, holdout_check
from jaxscale.laws import chinchilla as ch
from jaxscale.reconciliation.on_runs import reconcile_runs, summary
from jaxscale.tables.table import from_arrays, read_runs_table

P = ch.EPOCH
GAMMA, DELTA = 3e4, 0.34
RUN_BY = ["model", "total_tokens"]


def sweep_table(noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Runs of 8 models whose embedding follows N_T = N_E + gamma N_E^delta, each trained to
    three lengths (1e10, 1e11, 1e12 tokens) and evaluated along the way, loss from the
    Chinchilla law in total parameters."""
    rng = np.random.default_rng(seed)
    n_ne = np.geomspace(3e5, 3e8, 8)
    rows = []
    for i, (ne, nt) in enumerate(zip(n_ne, n_ne + GAMMA * n_ne**DELTA)):
        for length in (1e10, 1e11, 1e12):
            for d in np.geomspace(1e8, length, 20):
                rows.append({"model": f"m{i}", "total_tokens": length, "N": nt, "N_no_emb": ne, "D": d})
    frame = pd.DataFrame(rows)
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(frame.N.to_numpy(), frame.D.to_numpy(), P))
    return frame.assign(loss=loss * np.exp(noise * rng.standard_normal(len(frame))))


@pytest.fixture(scope="module")
def result():
    return reconcile_runs(read_runs_table(sweep_table(), run_by=RUN_BY), bootstrap_resamples=20)


def test_the_tables_own_embedding_relation_and_law(result):
    assert float(result.embedding.gamma) == pytest.approx(GAMMA, rel=1e-6)
    assert float(result.embedding.delta) == pytest.approx(DELTA, rel=1e-6)
    for name in ("alpha", "beta", "E"):
        assert getattr(result.law.params, name) == pytest.approx(getattr(P, name), rel=1e-4)


def test_prediction_matches_the_observed_exponents_of_a_table_from_the_law(result):
    """Data made by the law itself: Section 2's prediction and the observed frontier agree on
    both bases (to the discreteness of 8 models), and the basis change raises the exponent."""
    numbers = summary(result)
    for basis in ("total", "nonembedding"):
        assert numbers["predicted"][basis]["a"] == pytest.approx(numbers["observed"][basis]["a"], abs=0.06), basis
    assert numbers["observed"]["shift"]["a"] > 0.05 and numbers["predicted"]["shift"]["a"] > 0.05
    lo, hi = numbers["predicted"]["nonembedding"]["ci95"]
    assert lo <= numbers["predicted"]["nonembedding"]["a"] <= hi


def test_reconcile_command_on_a_table(tmp_path, capsys):
    path = tmp_path / "sweep.csv"
    sweep_table().to_csv(path, index=False)
    argv = ["reconcile", str(path), "--run-by", ",".join(RUN_BY), "--bootstrap", "20",
            "--out", str(tmp_path / "f")]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["observed"]) == {"total", "nonembedding", "shift"} and out["models"] == 8
    assert {p.split("/")[-1] for p in out["files"]} == {"fig1_embedding_fit_runs.png", "fig4_frontier_runs.png"}
    sweep_table().drop(columns=["N_no_emb"]).to_csv(path, index=False)
    assert main(argv) == 2
    assert "non-embedding size column" in capsys.readouterr().err
    sweep_table().to_csv(path, index=False)
    assert main(["reconcile", str(path)]) == 2
    assert "run identity: a run_id column, or --run-by COLS" in capsys.readouterr().err


def test_calibration_counts_coverage_and_errors():
    observed = np.array([1.0, 2.0, 3.0, 4.0])
    draws = np.stack([observed + shift for shift in np.linspace(-1, 1, 201)])  # symmetric around each
    out = calibration(observed, observed + 0.1, draws, np.zeros(4), 0.0)
    assert out["mae_nats"] == pytest.approx(0.1) and out["mean_signed_error_nats"] == pytest.approx(0.1)
    assert out["coverage"] == {"50%": 1.0, "80%": 1.0, "90%": 1.0}
    far = calibration(observed + 5, observed, draws, np.zeros(4), 0.0)
    assert far["coverage"]["90%"] == 0.0 and far["mean_signed_error_nats"] == pytest.approx(-5)


def test_holdout_on_a_known_law_is_calibrated():
    rng = np.random.default_rng(3)
    n = np.exp(rng.uniform(np.log(1e7), np.log(1e10), 300))
    d = np.exp(rng.uniform(np.log(1e9), np.log(1e12), 300))
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, d, P)) * np.exp(0.01 * rng.standard_normal(300))
    out = holdout_check(from_arrays(n, d, loss), 1e9, resamples=200, grid=ch.LAW.init_grid()[::45]).summary()
    assert out["mae_nats"] < 0.04 and abs(out["mean_signed_error_nats"]) < 0.01
    assert 0.8 <= out["coverage"]["90%"] <= 1.0 and 0.35 <= out["coverage"]["50%"] <= 0.75


@pytest.mark.slow
def test_bayes_holdout_and_table_embedding_through_the_cli(tmp_path):
    path = tmp_path / "sweep.csv"
    sweep_table(noise=0.005).to_csv(path, index=False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["bayes", str(path), "--run-by", ",".join(RUN_BY), "--laplace", "--json", "--table-embedding",
                     "--holdout-threshold", "1e20", "--holdout-by", "c"]) == 0
    # every checkpoint, held out by C: the holdout's backtest fits the lower half of the fitted runs, which
    # by N spans 0.41 decades of N (embeddings dominate) and of the last checkpoints holds two token counts,
    # too few to determine the law (fitting.design)
    out = json.loads(buf.getvalue())
    assert out["embedding"].startswith("table (gamma = 3e+04")
    assert set(out["holdout"]["coverage"]) == {"50%", "80%", "90%"} and out["holdout"]["n_heldout"] > 0
    lo, hi = out["reconciled_exponent"]["hdi95"]
    assert lo < out["reconciled_exponent"]["median"] < hi


def test_runs_of_one_checkpoint_each_are_refused_in_one_line(tmp_path, capsys):
    """A table of final losses crashed with "zero-size array to reduction operation minimum"."""
    finals = sweep_table().groupby(RUN_BY, as_index=False).last()
    path = tmp_path / "finals.csv"
    finals.to_csv(path, index=False)
    code = main(["reconcile", str(path), "--run-by", ",".join(RUN_BY), "--n-col", "N"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "each of the 24 runs holds one checkpoint" in err and "zero-size" not in err


def test_a_law_whose_loss_does_not_fall_with_n_is_refused_naming_its_exponents():
    """A table whose fitted alpha is negative stopped inside Step 4 with "PearceSongParams.alpha must be > 0"."""
    frame = sweep_table()
    frame["loss"] = frame["loss"] * (frame["N"] / 1e6) ** 0.3  # a loss that grows with the model
    with pytest.raises(ValueError, match=r"fitted to the table's final runs has alpha = -.*both must be > 0"):
        reconcile_runs(read_runs_table(frame, run_by=RUN_BY), bootstrap_resamples=4)
