"""Check first, work after: every command refuses an output path it cannot write, and options out
of range, before any sampling, training or fitting starts (the work is replaced by a function
that fails the test if called), in one line naming the option as the user typed it."""

from __future__ import annotations

import importlib

import jax
import pytest

import jaxscale
from jaxscale.cli import main

GOOD = "N,D,loss\n1e8,2e9,3.1\n2e8,4e9,2.9\n4e8,8e9,2.7\n8e8,1.6e10,2.5\n1.6e9,3.2e10,2.4\n3.2e9,6.4e10,2.3\n"

#: Each command that writes files: its arguments (RUNS is the table, OUT the bad path) and the
#: work that must not start, as (module, attribute).
WRITERS = {
    "bayes": (["bayes", "RUNS", "--out", "OUT", "--no-progress"], ("jaxscale.inference.refit", "sample_posterior")),
    "bayes laplace": (["bayes", "RUNS", "--laplace", "--out", "OUT"], ("jaxscale.inference.refit",
                                                                        "approximate_posterior")),
    "fit": (["fit", "RUNS", "--out", "OUT"], ("jaxscale.fitting.approach3", "fit_approach3")),
    "sensitivity": (["sensitivity", "RUNS", "--out", "OUT"], ("jaxscale.fitting.approach3", "fit_approach3")),
    "curve": (["curve", "RUNS", "--fit-runs", "a", "--predict", "b", "--out", "OUT"],
              ("jaxscale.curves.lr_annealing_fit", "fit_groups")),
    "design": (["design", "RUNS", "--budget", "1e21", "--out", "OUT"], ("jaxscale", "design")),
    "compare": (["compare", "RUNS", "RUNS", "--out", "OUT"], ("jaxscale", "compare")),
    "hparams": (["hparams", "--published", "steplaw", "--n", "1e9", "--tokens", "1e11", "--out", "OUT"],
                ("jaxscale._api.hparams", "hparams")),
    "schedule": (["schedule", "--published", "luo-25m", "--steps", "100", "--peak-lr", "3e-4", "--out", "OUT"],
                 ("jaxscale._api.schedule", "schedule")),
    "allocate": (["allocate", "--compute", "1e22", "--unique-tokens", "1e10", "--out", "OUT"],
                 ("jaxscale", "allocate")),
    "reconcile": (["reconcile", "--out", "OUT"], ("jaxscale.reconciliation.pipeline", "reconcile_spec")),
    "runs": (["runs", "RUNS", "--out", "OUT"], ("jaxscale.tables.table", "read_runs_table")),
    "word2vec train": (["word2vec", "train", "RUNS", "--out", "OUT"], ("jaxscale.word2vec.train", "train_from_file")),
    "word2vec scaling": (["word2vec", "scaling", "--published", "mikolov-2013a", "--out", "OUT"],
                         ("jaxscale.word2vec.scaling", "run_published_study")),
    "sweep": (["sweep", "--preset", "smoke", "--out", "OUT", "--no-progress"], ("jaxscale.lm.sweep", "run_sweep")),
}


@pytest.fixture(autouse=True)
def _backend_running():
    """JAX's backend started before ``bayes`` runs: its ``prepare`` asks for one CPU device per
    chain only in a process whose backend has not started, which would give the rest of the test
    session four devices."""
    jax.devices()


@pytest.fixture(autouse=True)
def _public_names_resolved():
    """Every lazy name of ``jaxscale`` resolved before a test replaces a function: the first lookup
    of ``jaxscale.hparams`` keeps what it finds, which must not be the replacement (a later test
    of the same process would meet it)."""
    for name in jaxscale.__all__:
        getattr(jaxscale, name)


def _never(*_, **__):
    raise AssertionError("the work started before the options were checked")


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as parser_exit:  # argparse's own errors
        code = parser_exit.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("where", ["under a file", "a file"])
def test_an_out_path_that_cannot_be_a_directory_is_refused_before_the_work(tmp_path, capsys, monkeypatch, name, where):
    argv, (module, attribute) = WRITERS[name]
    monkeypatch.setattr(importlib.import_module(module), attribute, _never)
    runs = tmp_path / "runs.csv"
    runs.write_text(GOOD)
    out = runs / "figures" if where == "under a file" else runs
    code, err = _run(capsys, [str(runs) if a == "RUNS" else str(out) if a == "OUT" else a for a in argv])
    assert code == 2, err
    assert f"--out {out}: " in err and len(err.strip().splitlines()) == 1
    assert "Errno" not in err and "Traceback" not in err
    assert ("is a file, not a directory" if where == "under a file" else "exists and is not a directory") in err


def test_a_table_without_both_bases_is_refused_before_sampling(tmp_path, capsys, monkeypatch):
    from jaxscale.inference import refit

    monkeypatch.setattr(refit, "sample_posterior", _never)
    runs = tmp_path / "runs.csv"
    runs.write_text(GOOD)
    code, err = _run(capsys, ["bayes", str(runs), "--table-embedding", "--no-progress"])
    assert code == 2 and "needs both bases" in err and len(err.strip().splitlines()) == 1


def test_sensitivity_refuses_a_table_without_both_bases_before_fitting(tmp_path, capsys, monkeypatch):
    from jaxscale.fitting import approach3

    monkeypatch.setattr(approach3, "fit_approach3", _never)
    runs = tmp_path / "runs.csv"
    runs.write_text(GOOD)
    code, err = _run(capsys, ["sensitivity", str(runs), "--table-embedding"])
    assert code == 2 and "needs both bases" in err


@pytest.mark.parametrize("argv, message", [
    (["bayes", "RUNS", "--chains", "0"], "argument --chains: must be an integer >= 1, got 0"),
    (["bayes", "RUNS", "--samples", "0"], "argument --samples: must be an integer >= 1, got 0"),
    (["bayes", "RUNS", "--warmup", "-1"], "argument --warmup: must be an integer >= 0, got -1"),
    (["bayes", "RUNS", "--target-accept", "1"], "argument --target-accept: must be a number in (0, 1), got 1"),
    (["fit", "RUNS", "--bootstrap", "1"], "argument --bootstrap: must be 0 (none) or >= 2, got 1"),
    (["fit", "RUNS", "--drop-highest", "-1"], "argument --drop-highest: must be an integer >= 0, got -1"),
    (["compare", "RUNS", "RUNS", "--bootstrap", "0"], "argument --bootstrap: must be an integer >= 2, got 0"),
    (["sensitivity", "--published", "epoch", "--delta", "5"], "argument --delta: must be a number in (0, 1), got 5"),
    (["sensitivity", "--published", "epoch", "--gamma", "0"], "argument --gamma: must be a finite number > 0"),
    (["curve", "RUNS", "--protocol", "sweep", "--warmup-steps", "-5"],
     "argument --warmup-steps: must be an integer >= 0, got -5"),
    (["curve", "RUNS", "--protocol", "sweep", "--decay", "2"], "argument --decay: must be a number in [0, 1], got 2"),
    (["curve", "RUNS", "--protocol", "sweep", "--skip-warmups", "-1"], "argument --skip-warmups: must be a finite"),
    (["schedule", "--published", "luo-25m", "--steps", "0", "--peak-lr", "1e-3"], "argument --steps: must be an"),
    (["hparams", "--published", "steplaw", "--bootstrap", "-3"], "argument --bootstrap: must be an integer >= 0"),
    (["word2vec", "train", "RUNS", "--out", "o", "--batch", "0"], "argument --batch: must be an integer >= 1, got 0"),
    (["word2vec", "train", "RUNS", "--out", "o", "--alpha", "-1"], "argument --alpha: must be a finite number > 0"),
    (["word2vec", "neighbours", "RUNS", "a", "--topn", "0"], "argument --topn: must be an integer >= 1, got 0"),
    (["allocate", "--compute", "-1"], "argument --compute: must be a finite number > 0, got -1"),
    (["sweep", "--preset", "smoke", "--microbatches", "0"], "argument --microbatches: must be an integer >= 1"),
])
def test_options_out_of_range_are_refused_by_name_when_parsed(tmp_path, capsys, argv, message):
    runs = tmp_path / "runs.csv"
    runs.write_text(GOOD)
    code, err = _run(capsys, [str(runs) if a == "RUNS" else a for a in argv])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_schedule_option_the_table_would_ignore_is_refused(tmp_path, capsys):
    runs = tmp_path / "curves.csv"
    rows = [f"{run},{n},{step},{step * 1e6},{4 - step / 100},cosine,100,3e-4,10,0.1"
            for run, n in (("a", 1e6), ("b", 1e6)) for step in (20, 40, 60, 80, 100)]
    runs.write_text("run_id,N,step,D,loss,schedule,total_steps,peak_lr,warmup_steps,final_fraction\n"
                    + "\n".join(rows) + "\n")
    code, err = _run(capsys, ["curve", str(runs), "--fit-runs", "a", "--predict", "b", "--warmup-steps", "5"])
    assert code == 2 and "warmup_steps (--warmup-steps): the table's 'warmup_steps' column is complete" in err
    code, err = _run(capsys, ["curve", str(runs), "--fit-runs", "a", "--predict", "b", "--warmup-steps", "5",
                              "--lr-source", "recorded"])
    assert code == 2 and "warmup_steps (--warmup-steps) names the schedule of --lr-source named" in err
