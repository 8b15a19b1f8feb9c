"""``jaxscale params`` and ``jaxscale runs`` on tables: what they print, and bad input in one line."""

from __future__ import annotations

import json

import pandas as pd

from jaxscale.cli import main
from tests.tables.test_accounting import LLAMA2_7B


def test_params_prints_the_counts_and_every_convention(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA2_7B))
    assert main(["params", str(path), "--json"]) == 0
    numbers = json.loads(capsys.readouterr().out)
    assert numbers["n_total"] == 6_738_415_616 == numbers["n_embedding"] + numbers["n_nonembedding"]
    assert numbers["n_embedding"] == 2 * 32000 * 4096
    assert set(numbers["flops_per_token"]) == {"6N", "6N_nonembedding", "kaplan", "chinchilla", "deepseek"}
    assert numbers["flops_per_token"]["6N"] == 6 * 6_738_415_616
    assert main(["params", str(path)]) == 0
    text = capsys.readouterr().out
    assert "6,738,415,616" in text and "DeepSeek LLM" in text


def test_params_bad_config_is_one_line(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "bert"}))
    assert main(["params", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "model_type 'bert'" in err and len(err.splitlines()) == 1


def test_runs_on_a_table_with_runs_and_a_policy(tmp_path, capsys):
    rows = [{"run_id": f"r{n}", "step": s, "n_total": n * 1e6, "tokens": s * 1e6, "loss": 2 + 1 / n + 1 / s}
            for n in (1, 2, 4) for s in (1, 2, 3, 4)]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert main(["runs", str(path), "--loss-policy", "min", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kind"] == "table" and report["rows"] == 3
    assert [r["last_step"] for r in report["runs"]] == [4, 4, 4]
    assert main(["runs", str(path), "--out", str(path)]) == 2  # a file where the directory goes
    assert "is not a directory" in capsys.readouterr().err


def _short_run_table(tmp_path):
    """Three runs of four checkpoints and one of two (fewer than the default policy's three)."""
    rows = [{"run_id": f"r{n}", "step": s, "n_total": n * 1e6, "tokens": s * 1e6, "loss": 2 + 1 / n + 1 / s}
            for n in (1, 2, 4) for s in (1, 2, 3, 4)]
    rows += [{"run_id": "short", "step": s, "n_total": 8e6, "tokens": s * 1e6, "loss": 2 + 1 / s} for s in (1, 2)]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_runs_on_a_table_without_a_policy_claims_no_checks(tmp_path, capsys):
    """Without --loss-policy a table's rows are taken as given: the report must not name a
    policy whose exclusions were never applied (the run of two points is kept)."""
    path = _short_run_table(tmp_path)
    assert main(["runs", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == 14 and not any(r["excluded"] for r in report["runs"])
    assert report["loss_policy"] is None and "excluded" not in report["loss_policy_text"]
    assert main(["runs", str(path)]) == 0
    text = capsys.readouterr().out
    assert "4 runs, 4 kept" in text and "excluded" not in text


def test_runs_on_a_table_lists_the_runs_its_policy_leaves_out(tmp_path, capsys):
    """Under a loss policy, a run the checks leave out is listed with why (as for a tracker), not
    dropped from the report with the count of runs kept equal to the runs listed."""
    path = _short_run_table(tmp_path)
    assert main(["runs", str(path), "--loss-policy", "min", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == 3 and report["loss_policy"]["kind"] == "min"
    excluded = {r["run_id"]: r["excluded"] for r in report["runs"]}
    assert excluded == {"r1": None, "r2": None, "r4": None, "short": "too few points (2 < 3)"}
    assert main(["runs", str(path), "--loss-policy", "min"]) == 0
    text = capsys.readouterr().out
    assert "4 runs, 3 kept" in text and "left out: too few points (2 < 3)" in text
