"""Runs tables of other labs: run identity from several columns, last checkpoints, units, bad
files, and bootstrap intervals of Approaches 1 and 2 that cover a known law's exponent."""

from __future__ import annotations

import json
import warnings

import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.fitting.approach1 import fit_approach1
from jaxscale.fitting.approach2 import fit_approach2
from jaxscale.laws import chinchilla as ch
from jaxscale.tables.table import final_checkpoints, read_runs_table

P = ch.EPOCH
A_TRUE = P.beta / (P.alpha + P.beta)
RUN_BY = ["model", "peak_lr", "total_steps"]


def _law_loss(n, d):
    with jax.enable_x64(True):
        return np.asarray(ch.loss(n, d, P))


def checkpoint_table() -> pd.DataFrame:
    """Two model sizes x two learning rates x two cosine lengths, 4 checkpoints each, in the
    (Mis)Fitting table's column names: a run is (model, peak_lr, total_steps)."""
    rows = []
    for model, n in (("m10", 1e7), ("m40", 4e7)):
        for lr in (1e-3, 4e-3):
            for total in (100, 200):
                for step in np.linspace(total / 4, total, 4):
                    d = step * 1e6
                    rows.append({"model": model, "peak_lr": lr, "total_steps": total, "current_steps": step,
                                 "N": n, "N_no_emb": 0.5 * n, "D": d, "loss": float(_law_loss(n, d)) + lr})
    return pd.DataFrame(rows)


def test_run_identity_from_several_columns_and_final_checkpoints():
    table = read_runs_table(checkpoint_table(), run_by=RUN_BY)
    assert len(set(table.run_id)) == 8 and table.step is not None
    assert table.run_id[0] == "model=m10|peak_lr=0.001|total_steps=100"
    last = final_checkpoints(table)
    assert len(last) == 8
    np.testing.assert_array_equal(last.step, last.frame["total_steps"].to_numpy(float))
    np.testing.assert_allclose(last.c_nonembedding, 6 * last.n_nonembedding * last.d)


def test_final_checkpoints_need_run_identity():
    with pytest.raises(ValueError, match="run identity"):
        final_checkpoints(read_runs_table(checkpoint_table()))


def test_where_keeps_the_matching_rows_and_names_a_miss():
    table = read_runs_table(checkpoint_table(), where={"peak_lr": "0.004"})
    assert set(table.frame["peak_lr"]) == {0.004} and len(table) == 16
    with pytest.raises(ValueError, match="no row has model = 'm99'"):
        read_runs_table(checkpoint_table(), where={"model": "m99"})
    with pytest.raises(ValueError, match=r"column 'colour' for --where colour=red not found; columns are"):
        read_runs_table(checkpoint_table(), where={"colour": "red"})  # was: "column 'colour' for run_id"


def test_losses_in_another_unit_draw_a_warning():
    frame = checkpoint_table().assign(loss=lambda f: np.exp(f["loss"]))  # a perplexity
    with pytest.warns(UserWarning, match="above 20 .* perplexity"):
        read_runs_table(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_runs_table(checkpoint_table())


def test_binary_file_is_named(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: a binary file" in err and "Traceback" not in err


@pytest.mark.parametrize("options, message", [
    (["--final-only"], "run identity"),
    (["--where", "model"], "--where takes COL=VALUE"),
    (["--where", "nope=1"], "column 'nope'"),
    (["--run-by", "model,nope"], "column 'nope'"),
])
def test_new_table_options_exit_2_with_one_line(tmp_path, capsys, options, message):
    path = tmp_path / "runs.csv"
    checkpoint_table().to_csv(path, index=False)
    assert main(["fit", str(path), *options]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_nonembedding_basis_needs_its_column(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    checkpoint_table().drop(columns=["N_no_emb"]).to_csv(path, index=False)
    assert main(["fit", str(path), "--basis", "nonembedding"]) == 2
    assert "non-embedding basis" in capsys.readouterr().err


def curves(seed: int, noise: float = 0.005):
    """Training curves of 10 sizes (3e7-3e9) under the Epoch law with log-normal noise."""
    rng = np.random.default_rng(seed)
    n, d = np.meshgrid(np.geomspace(3e7, 3e9, 10), np.geomspace(1e9, 3e12, 60), indexing="ij")
    loss = _law_loss(n, d) * np.exp(noise * rng.standard_normal(n.shape))
    return read_runs_table(pd.DataFrame({"run_id": np.repeat(np.arange(10), 60), "n_total": n.ravel(),
                                   "tokens": d.ravel(), "loss": loss.ravel()}))


def isoflops(seed: int, noise: float = 0.005):
    """Nine isoFLOP slices of 9 jittered sizes within a factor 4 of the optimum, noisy losses."""
    rng = np.random.default_rng(seed)
    budgets = np.geomspace(1e18, 1e22, 9)
    with jax.enable_x64(True):
        centre = np.asarray(ch.compute_optimal_n(budgets, P))
    n = np.concatenate([np.geomspace(m / 4, m * 4, 9) * np.exp(rng.uniform(-0.1, 0.1, 9)) for m in centre])
    c = np.repeat(budgets, 9)
    loss = _law_loss(n, c / (6 * n)) * np.exp(noise * rng.standard_normal(n.size))
    return read_runs_table(pd.DataFrame({"n_total": n, "compute_total": c, "loss": loss}))


@pytest.mark.parametrize("make, fit", [
    (curves, lambda t: fit_approach1(t, bootstrap=300, seed=1)),
    (isoflops, lambda t: fit_approach2(t, bootstrap=300, seed=1)),
], ids=["approach1-runs", "approach2-within-budgets"])
def test_bootstrap_intervals_cover_the_true_exponent(make, fit):
    """Over 50 noisy tables of a known law, the 95% interval holds a = beta/(alpha+beta) in at
    least 90% of them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hits = [lo <= A_TRUE <= hi for lo, hi in (fit(make(seed)).a_interval for seed in range(50))]
    assert np.mean(hits) >= 0.9


def test_approach2_reports_every_slice_with_its_status(tmp_path, capsys):
    table = isoflops(0)
    result = fit_approach2(table)
    assert len(result.slices) == 9 and all(s.status in ("fitted", "edge") for s in result.slices)
    frame = table.frame
    last = frame.compute_total == frame.compute_total.max()
    one_sided = read_runs_table(frame[~last | (frame.n_total > frame.n_total[last].median())])
    assert fit_approach2(one_sided).slices[-1].status == "outside"  # sampled only above its optimum
    path = tmp_path / "iso.csv"
    table.frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--method", "approach2", "--bootstrap", "100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["slices"]) == 9 and out["ci95"]["a"][0] < out["a"] < out["ci95"]["a"][1]
