"""Pearce & Song sweeps: Method-1 fit on known curves, the sweep's table against Approach 1,
configs, and the smoke preset end to end."""

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.fitting.approach1 import MIN_FRONTIER_SIZES, fit_approach1
from jaxscale.lm import presets
from jaxscale.lm.sweep import (
    best_learning_rates,
    budget_steps,
    fit_table,
    model_config,
    rate_beyond_edge,
    run_id,
    run_spec,
)
from jaxscale.lm.sweep_diagnostics import crossings, learning_rate_rows
from jaxscale.networks.transformer import TransformerConfig, param_counts
from jaxscale.tables import schema as rs
from jaxscale.tables.table import read_runs_table

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / presets.SHARED_CORPUS


def _chinchilla_curves(alpha: float, beta: float, sizes: np.ndarray) -> pd.DataFrame:
    """Loss curves L = E + A N^-alpha + B D^-beta of many sizes over tokens 1..1e14, so that the
    compute-optimal size stays inside the size range on the whole frontier grid."""
    rows = []
    for i, n in enumerate(sizes):
        for d in np.geomspace(1.0, 1e14, 200):
            loss = 1.7 + 400.0 * n**-alpha + 400.0 * d**-beta
            rows.append({rs.RUN_ID: f"r{i}", rs.N_TOTAL: n, rs.COMPUTE_TOTAL: 6 * n * d, rs.LOSS: loss})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("alpha, beta", [(0.34, 0.34), (0.3, 0.45)])
def test_method1_recovers_the_allocation_exponent_of_known_curves(alpha, beta):
    curves = read_runs_table(_chinchilla_curves(alpha, beta, np.geomspace(1e4, 1e11, 50)))
    fit = fit_approach1(curves, frontier_range="common", interior_only=False, n_budgets=150, bootstrap=200)
    expected = beta / (alpha + beta)  # Hoffmann et al. (2022): N_opt ∝ C^(beta / (alpha + beta))
    assert fit.a == pytest.approx(expected, abs=0.03)
    assert fit.a + fit.b == pytest.approx(1.0, abs=1e-9)
    low, high = fit.a_interval
    assert low <= fit.a <= high and high - low < 0.1
    assert len(fit.sizes) > 10


SIZES = tuple(presets.ModelSize(f"m{i}", 1, 8, 1, 10) for i in range(8))


def _sweep_runs(cfg: presets.SweepConfig, best: dict[str, float]) -> pd.DataFrame:
    """Constant-schedule curves of a Chinchilla-form law under the sweep's run names, N_T doubling
    from size to size; the learning rates other than ``best`` end 10% higher."""
    rows = []
    for i, size in enumerate(cfg.sizes):
        n = 1e6 * 2.0**i
        n_ne = n - 5e5 * (n / 1e6) ** (1 / 3)
        for lr in cfg.learning_rates:
            for step, d in enumerate(np.geomspace(1e6, 1e12, 60)):
                loss = (1.7 + 400.0 * n**-0.34 + 400.0 * d**-0.28) * (1.0 if lr == best[size.name] else 1.1)
                rows.append({rs.RUN_ID: run_id(size, lr, "constant"), rs.STEP: step, rs.N_TOTAL: n,
                             rs.N_NONEMBEDDING: n_ne, rs.TOKENS: d, rs.LOSS: loss})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("frontier_range", ["common", "largest_first", "all"])
def test_sweep_table_gives_the_exponents_of_approach_1(frontier_range):
    cfg = dataclasses.replace(presets.SMOKE, sizes=SIZES, schemes=(1, 2), frontier_range=frontier_range)
    best = {s.name: cfg.learning_rates[i % 2] for i, s in enumerate(SIZES)}
    frame = _sweep_runs(cfg, best)
    table = fit_table(cfg, read_runs_table(frame), best).set_index(["experiment", "basis"])
    experiment_1 = read_runs_table(frame[frame[rs.RUN_ID].isin([run_id(s, best[s.name], "constant") for s in SIZES])])
    for basis in ("total", "nonembedding"):
        fit = fit_approach1(experiment_1, basis=basis, frontier_range=frontier_range, interior_only=False,
                            n_budgets=cfg.frontier_points, bootstrap=cfg.bootstrap, resample="budgets",
                            seed=cfg.seed)
        row = table.loc[("experiment 1", basis)]
        assert len(fit.sizes) >= MIN_FRONTIER_SIZES and row.frontier_models == len(fit.sizes)
        assert (row.a, row.b, row.n_points) == (fit.a, fit.b, len(fit.c))
        assert (row.a_low, row.a_high, row.b_low, row.b_high) == (*fit.a_interval, *fit.b_interval)
    assert table.loc[("scheme 2", "total")].a == table.loc[("experiment 1", "total")].a


def test_config_file_round_trip_and_validation(tmp_path):
    raw = presets.SMOKE.to_dict()
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(raw))
    assert presets.load_config(path) == presets.SMOKE
    with pytest.raises(ValueError, match="unknown sweep config key"):
        presets.config_from_dict({**raw, "learning_rate": 1})
    with pytest.raises(ValueError, match="single_lr"):
        presets.config_from_dict({**raw, "single_lr": 0.5})
    with pytest.raises(ValueError, match="unknown preset"):
        presets.preset("huge")
    with pytest.raises(ValueError, match="a sweep config is a table of keys"):
        presets.config_from_dict([raw])
    with pytest.raises(ValueError, match=r"sizes\[1\]: expected a table of name, n_layer"):
        presets.config_from_dict({**raw, "sizes": [raw["sizes"][0], ["m", 2, 48, 2, 60]]})
    with pytest.raises(ValueError, match="bootstrap must be >= 0; got -1"):
        presets.config_from_dict({**raw, "bootstrap": -1})
    # the missing keys by name (it was "SweepConfig.__init__() missing 6 required positional arguments")
    with pytest.raises(ValueError, match=r"^the sweep config lacks the required key\(s\) name, sizes, learning_rates, "
                       r"single_lr, vocab_size, n_ctx, batch_size$"):
        presets.config_from_dict({})
    path.write_text(json.dumps({k: v for k, v in raw.items() if k != "n_ctx"}))
    with pytest.raises(ValueError, match=rf"^{path}: the sweep config lacks the required key\(s\) n_ctx$"):
        presets.load_config(path)


@pytest.mark.slow
def test_a_one_size_sweep_trains_and_reports_no_exponent(tmp_path, capsys):
    # one size never varies N: the fits say the frontier holds too few sizes, instead of the
    # runs table's loader refusing it after training
    if not CORPUS.is_file():
        pytest.skip(f"corpus {CORPUS} not present (fresh clone without ../shared/data)")
    cfg = dataclasses.replace(presets.SMOKE, name="one-size", sizes=(presets.ModelSize("xs", 1, 16, 1, 5),),
                              learning_rates=(0.003,), corpus=str(CORPUS), corpus_chars=200_000, bootstrap=10)
    path = tmp_path / "one.json"
    path.write_text(json.dumps(cfg.to_dict()))
    with pytest.warns(UserWarning, match=r"exponent undefined \(frontier holds [01] sizes?\)"):
        assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--json", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert all(row["frontier_models"] < MIN_FRONTIER_SIZES and row["a"] is None for row in json.loads(out)["table"])


def test_cli_rejects_bad_arguments_with_exit_2(tmp_path, capsys):
    assert main(["sweep"]) == 2
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["sweep", str(bad)]) == 2
    assert "cannot parse" in capsys.readouterr().err
    # multi-process arguments are checked before JAX sees them (it raised IndexError on the first)
    for argv, message in ((["--coordinator", "nohostport"], "--coordinator must be HOST:PORT"),
                          (["--num-processes", "0"], "--num-processes must be >= 1"),
                          (["--num-processes", "2", "--process-id", "2"],
                           "--process-id must be in [0, --num-processes)")):
        assert main(["sweep", "--preset", "smoke", *argv]) == 2
        assert message in capsys.readouterr().err


def test_first_sizes_of_a_preset():
    one = presets.first_sizes(presets.PAPER, 1)
    assert [s.name for s in one.sizes] == ["0.8M"] and one.schemes == (1, 2)  # no annealed runs for one size
    assert presets.first_sizes(presets.PAPER, 5) == presets.PAPER
    assert presets.first_sizes(presets.PAPER, 3).schemes == presets.PAPER.schemes
    for k in (0, 6):
        with pytest.raises(ValueError, match=f"has 5 model sizes; cannot train the first {k}"):
            presets.first_sizes(presets.PAPER, k)


@pytest.mark.parametrize("cfg", presets.PRESETS.values(), ids=lambda c: c.name)
def test_presets_embedding_share_falls_with_size(cfg):
    fractions = []
    for size in cfg.sizes:
        vocab = 50257 if cfg.name == "paper" else cfg.vocab_size
        counts = param_counts(TransformerConfig(vocab, cfg.n_ctx, size.n_layer, size.d_model, size.n_head))
        fractions.append(counts.embedding / counts.total)
    assert fractions == sorted(fractions, reverse=True)
    if cfg.name != "paper":  # the paper's 0.8M-4.6M models with a 50k vocabulary are all embedding-heavy
        assert fractions[0] > 0.7 and fractions[0] - fractions[-1] > 0.25


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    if not CORPUS.is_file():
        pytest.skip(f"corpus {CORPUS} not present (fresh clone without ../shared/data)")
    out = tmp_path_factory.mktemp("sweeps") / "smoke"  # where examples/colab_training.py --out DIR puts it: DIR/smoke
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(["sweep", "--preset", "smoke", "--out", str(out), "--json", "--no-progress"])
    assert status == 0
    return out, json.loads(buffer.getvalue())


def test_smoke_sweep_reports_exponents_runs_and_table(smoke):
    out, summary = smoke
    assert len(summary["runs"]) == len(presets.SMOKE.sizes)
    for run in summary["runs"]:
        assert run["n_total"] == run["n_embedding"] + run["n_nonembedding"]
    table = pd.read_csv(out / "table.csv")
    expected = {("experiment 1", "total"), ("experiment 1", "nonembedding")} | {(f"scheme {s}", "total") for s in range(1, 5)}
    assert set(zip(table.experiment, table.basis)) == expected
    defined = table.frontier_models >= MIN_FRONTIER_SIZES
    assert table.a.notna().eq(defined).all() and table.b.notna().eq(defined).all()
    assert (table.a + table.b)[defined].round(9).eq(1.0).all()
    first = table[(table.experiment == "experiment 1")].set_index("basis")
    for basis in ("total", "nonembedding"):
        a = first.a[basis]
        assert summary[f"exponent_{basis}"] == (None if pd.isna(a) else a)
    markdown = (out / "table.md").read_text()
    assert markdown.count("\n") == len(table) + 2
    assert markdown.count("undefined (frontier holds") == 2 * (~defined).sum()
    assert [Path(p).name for p in summary["figures"]] == [f"curves_{e}.png" for e in ("experiment1", "scheme1", "scheme3", "scheme4")]
    assert all(Path(p).is_file() for p in summary["figures"])
    assert json.loads((out / "summary.json").read_text()) == summary
    assert (out / "table_frontier_ranges.md").read_text().count("frontier range:") == 3


def test_smoke_runs_table_has_the_canonical_columns_and_loads_into_fit(smoke):
    out, summary = smoke
    frame = pd.read_csv(summary["runs_table"])
    schema = {value for name, value in vars(rs).items() if name.isupper() and isinstance(value, str)}
    assert set(frame.columns) <= schema
    for column in (rs.RUN_ID, rs.STEP, rs.N_TOTAL, rs.N_NONEMBEDDING, rs.N_EMBEDDING, rs.TOKENS, rs.COMPUTE_TOTAL,
                   rs.COMPUTE_NONEMBEDDING, rs.LOSS, rs.TRAIN_LOSS, rs.VAL_LOSS, rs.LEARNING_RATE, rs.SCHEDULE):
        assert column in frame.columns
    np.testing.assert_allclose(frame[rs.COMPUTE_TOTAL], 6 * frame[rs.N_TOTAL] * frame[rs.TOKENS])
    np.testing.assert_allclose(frame[rs.COMPUTE_NONEMBEDDING], 6 * frame[rs.N_NONEMBEDDING] * frame[rs.TOKENS])
    # 3 sizes x 2 learning rates (constant) + 3 sizes x 6 cosine budgets
    assert frame[rs.RUN_ID].nunique() == 3 * 2 + 3 * 6
    table = read_runs_table(summary["runs_table"])
    assert len(table.n) == len(frame)
    np.testing.assert_array_equal(table.c_nonembedding, frame[rs.COMPUTE_NONEMBEDDING])
    assert table.frame[rs.COMPUTE_NONEMBEDDING].dtype == np.float64
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["fit", summary["runs_table"], "--method", "approach1", "--json"]) == 0
    assert json.loads(buffer.getvalue())["n_points"] > 0


def test_rerun_skips_finished_runs(smoke):
    out, summary = smoke
    done = sorted((out / "runs").glob("*/done.json"))
    stamps = [p.stat().st_mtime_ns for p in done]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["sweep", "--preset", "smoke", "--out", str(out), "--json", "--no-progress"]) == 0
    again = json.loads(buffer.getvalue())
    assert [p.stat().st_mtime_ns for p in done] == stamps
    assert again["exponent_total"] == summary["exponent_total"]
    assert again["table"] == summary["table"]


def test_a_sweep_runs_from_any_directory_with_corpus_or_the_default(smoke, tmp_path):
    """From another directory, with --corpus or with no corpus (the default beside the clone),
    the smoke sweep finds its corpus and resumes the fixture's finished sweep to the same table."""
    out, summary = smoke
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(presets.CORPUS_VARIABLE, None)
    for corpus in (["--corpus", str(CORPUS)], []):
        command = [sys.executable, "-m", "jaxscale", "sweep", "--preset", "smoke", *corpus, "--out", str(out), "--json",
                   "--no-progress"]
        proc = subprocess.run(command, check=False, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert json.loads(proc.stdout)["table"] == summary["table"]
    assert json.loads((out / "config.json").read_text())["corpus"] == str(CORPUS.absolute())
    assert list(elsewhere.iterdir()) == []  # nothing written relative to the current directory


def test_an_installed_copy_finds_the_corpus_beside_the_clone_it_runs_in(tmp_path, monkeypatch):
    """After the README's ``pip install .`` the package lives in site-packages: the default corpus
    is found beside the clone of the working directory (or one of its parents), not refused."""
    monkeypatch.delenv(presets.CORPUS_VARIABLE, raising=False)
    monkeypatch.setattr(presets, "__file__", str(tmp_path / "site-packages" / "jaxscale" / "lm" / "presets.py"))
    clone, corpus = tmp_path / "jaxscale-clone", tmp_path / presets.SHARED_CORPUS
    (clone / "docs").mkdir(parents=True)
    (clone / "pyproject.toml").write_text('[project]\nname = "jaxscale"\n')
    corpus.parent.mkdir(parents=True)
    corpus.write_bytes(b"")
    monkeypatch.chdir(clone / "docs")
    assert presets.default_corpus() == corpus
    (clone / "pyproject.toml").write_text('[project]\nname = "another-project"\n')  # not a clone of jaxscale
    with pytest.raises(ValueError, match="no corpus"):
        presets.default_corpus()


def test_a_sweep_without_a_corpus_says_how_to_give_one(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(presets.CORPUS_VARIABLE, raising=False)
    monkeypatch.setattr(presets, "__file__", str(tmp_path / "site-packages" / "jaxscale" / "lm" / "presets.py"))
    monkeypatch.chdir(tmp_path)  # outside any clone
    assert main(["sweep", "--preset", "smoke", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no corpus: give one with --corpus PATH" in err and presets.CORPUS_VARIABLE in err
    monkeypatch.setenv(presets.CORPUS_VARIABLE, str(tmp_path / "missing.txt.gz"))
    assert main(["sweep", "--preset", "smoke", "--out", str(tmp_path / "out")]) == 2
    assert f"corpus not found: {tmp_path / 'missing.txt.gz'}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_a_sweep_is_not_resumed_on_another_corpus(smoke, tmp_path, capsys):
    out, _ = smoke
    other = tmp_path / "other.txt"
    other.write_text("some other text\n" * 1000)
    assert main(["sweep", "--preset", "smoke", "--corpus", str(other), "--out", str(out), "--no-progress"]) == 2
    assert f"holds a sweep on the corpus {CORPUS.absolute()}, not {other}" in capsys.readouterr().err


def test_colab_script_on_one_cpu_device_picks_the_smoke_mode(smoke, tmp_path):
    """examples/colab_training.py on a CPU (auto mode: smoke), resuming the fixture's sweep from
    another directory, prints the exponents of the sweep it resumed."""
    out, summary = smoke
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu"}
    env.pop("XLA_FLAGS", None)
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "colab_training.py"), "--out", str(out.parent), "--corpus", str(CORPUS)],
        check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ": 1 x cpu (cpu)" in proc.stdout and "training the smoke preset (3 sizes)" in proc.stdout
    exponent = summary["exponent_total"]
    assert f"exponent_total {'undefined' if exponent is None else f'{exponent:.3f}'}" in proc.stdout
    assert "in 1 microbatch(es) per device" in proc.stdout


@pytest.mark.parametrize("losses, expected", [
    ({0.003: 3.1, 0.006: 3.0, 0.012: 3.2}, None),  # inside the grid
    ({0.003: 3.3, 0.006: 3.1, 0.012: 3.0}, 0.024),  # best at the top: one step up
    ({0.003: 3.0, 0.006: 3.1, 0.012: 3.2}, 0.0015),  # best at the bottom: one step down
    ({0.003: 3.0, 0.006: 3.1, 0.012: float("inf")}, 0.0015),  # a diverged rate counts as infinite loss
    ({0.003: float("inf"), 0.006: float("inf")}, None),  # nothing finished
])
def test_a_best_rate_at_a_grid_edge_asks_for_the_next_rate_beyond_it(losses, expected):
    beyond = rate_beyond_edge(losses)
    assert beyond == (None if expected is None else pytest.approx(expected))


def test_learning_rate_diagnostics_flag_an_edge_optimum():
    losses = {"A": {0.003: 3.1, 0.006: 3.0, 0.012: 3.2}, "B": {0.003: 3.0, 0.006: 3.1}}
    rows = {r["size"]: r for r in learning_rate_rows(losses, best_learning_rates(losses))}
    assert (rows["A"]["best_lr"], rows["A"]["at_edge"]) == (0.006, False)
    assert (rows["B"]["best_lr"], rows["B"]["at_edge"]) == (0.003, True)


def test_crossings_find_where_the_larger_curve_drops_below_and_stays():
    c = np.geomspace(1e9, 1e12, 31)
    x = np.log10(c)
    smaller = (c, 4.0 - 0.10 * x)
    larger = (c, 6.11 - 0.30 * x)  # equal at C = 10^10.55, below after it
    assert crossings(smaller, larger) == (pytest.approx(10**10.6), pytest.approx(10**10.6), 1)
    other_budgets = np.geomspace(1e10, 1e12, 21)
    assert crossings(smaller, (other_budgets, 6.11 - 0.30 * np.log10(other_budgets)))[:2] == (
        pytest.approx(10**10.6), pytest.approx(10**10.6))
    wiggle = (c, smaller[1] + np.where((x > 9.45) & (x < 9.75), -0.01, 0.01) * (x < 11.05) - 0.01 * (x >= 11.05))
    first, stays, changes = crossings(smaller, wiggle)  # below early, back above, below for good from 10^11.1
    assert (first, stays, changes) == (pytest.approx(10**9.5), pytest.approx(10**11.1), 3)
    assert crossings(smaller, (c, smaller[1] + 0.01)) == (None, None, 0)  # never overtakes
    assert crossings(smaller, (np.geomspace(2e13, 1e14, 5), np.full(5, 1.0))) == (None, None, 0)


def test_equal_compute_budgets_end_every_size_at_the_same_compute():
    cfg = presets.CPU
    ends = []
    for size in cfg.sizes:
        n_total = param_counts(model_config(cfg, size, cfg.vocab_size)).total
        ends.append(6 * n_total * budget_steps(cfg, size, cfg.vocab_size) * cfg.tokens_per_step)
    np.testing.assert_allclose(ends, cfg.compute_budget, rtol=0.01)
    with pytest.raises(ValueError, match="compute_budget"):
        dataclasses.replace(cfg, compute_budget=None)


def test_constant_runs_go_on_to_a_common_nonembedding_compute():
    cfg = presets.CPU
    ends = []
    for size in cfg.sizes:
        counts = param_counts(model_config(cfg, size, cfg.vocab_size))
        constant = run_spec(cfg, size, cfg.vocab_size, cfg.single_lr, "constant").schedule.total_steps
        cosine = run_spec(cfg, size, cfg.vocab_size, cfg.single_lr, "cosine").schedule.total_steps
        assert constant >= cosine == budget_steps(cfg, size, cfg.vocab_size)
        ends.append(6 * counts.nonembedding * constant * cfg.tokens_per_step)
    np.testing.assert_allclose(ends, cfg.constant_compute_nonembedding, rtol=0.01)
    unset = dataclasses.replace(cfg, constant_compute_nonembedding=None)
    size = cfg.sizes[0]
    assert (run_spec(unset, size, cfg.vocab_size, 0.01, "constant").schedule.total_steps
            == budget_steps(cfg, size, cfg.vocab_size))


def test_smoke_sweep_writes_its_diagnostics(smoke):
    out, summary = smoke
    report = summary["diagnostics"]
    assert [r["size"] for r in report["learning_rates"]] == [s.name for s in presets.SMOKE.sizes]
    assert all(r["best_lr"] == summary["best_lr"][r["size"]] for r in report["learning_rates"])
    assert set(report["frontier"]) == {"total", "nonembedding"}
    for basis, rows in report["frontier"].items():
        row = pd.read_csv(out / "table.csv").set_index(["experiment", "basis"]).loc[("experiment 1", basis)]
        assert sum(r["fitted"] for r in rows) == row.frontier_models
    assert len(report["crossings"]) == len(presets.SMOKE.sizes) - 1
    assert "## Curve crossings" in (out / "diagnostics.md").read_text()
