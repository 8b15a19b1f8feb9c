"""Runs where they live: TensorBoard, MLflow and W&B exports read into runs tables; one set of runs
written four ways fits to identical parameters; curve defects are named by run and step."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.trackers.sources import detect_kind, read_source
from jaxscale.tables.table import read_runs_table
from tests.trackers import trackers

pytest.importorskip("tensorboard")
pytest.importorskip("mlflow")


@pytest.fixture(scope="module")
def four_ways(tmp_path_factory):
    root = tmp_path_factory.mktemp("trackers")
    runs = trackers.curves()
    return {
        "tensorboard": trackers.write_tensorboard(root / "tb", runs),
        "mlflow": trackers.write_mlflow(root / "mlflow.db", runs),
        "wandb": trackers.write_wandb(root / "wandb", runs),
        "table": trackers.write_tidy(root / "runs.csv", runs),
    }


def _fit(source) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        # every checkpoint: the last ones of these 12 runs sit at two token counts, too few to determine the law
        assert main(["fit", str(source), "--loss-policy", "every", "--json"]) == 0
    return json.loads(out.getvalue())


def test_each_kind_is_detected(four_ways):
    assert {kind: detect_kind(path) for kind, path in four_ways.items()} == {k: k for k in four_ways}
    assert detect_kind(f"sqlite:///{four_ways['mlflow']}") == "mlflow"


def test_one_set_of_runs_fits_to_identical_parameters_from_all_four(four_ways):
    fits = {kind: _fit(path) for kind, path in four_ways.items()}
    names = ("A", "B", "E", "alpha", "beta")
    reference = [fits["table"][k] for k in names]
    for kind, fit in fits.items():
        assert [fit[k] for k in names] == reference, kind
        assert fit["n_points"] == sum(len(points) for _, points in trackers.curves().values())


@pytest.mark.parametrize("kind", ["tensorboard", "mlflow", "wandb"])
def test_readers_give_the_tidy_table(four_ways, kind):
    tidy = read_runs_table(four_ways["table"])
    read = read_runs_table(four_ways[kind])
    order = np.lexsort((read.step, read.run_id))
    expected = np.lexsort((tidy.step, tidy.run_id))
    for field in ("run_id", "step", "n", "d", "c", "loss"):
        np.testing.assert_array_equal(getattr(read, field)[order], getattr(tidy, field)[expected], err_msg=field)
    assert read.report.kind == kind and read.report.metric in ("val/loss", "val_loss")
    assert len(read.report.runs) == 12 and not read.report.excluded


def test_mlflow_client_histories_equal_the_bulk_query(four_ways):
    from jaxscale.trackers.mlflow import read_mlflow

    bulk, client = read_mlflow(four_ways["mlflow"]), read_mlflow(four_ways["mlflow"], bulk_sql=False)
    key = ["run_id", "tag", "step"]
    pd.testing.assert_frame_equal(bulk.scalars.astype({"run_id": str, "tag": str}).sort_values(key).reset_index(drop=True),
                                  client.scalars.astype({"run_id": str, "tag": str}).sort_values(key).reset_index(drop=True))
    assert bulk.configs == client.configs


def test_loss_policies_choose_final_min_and_ema(four_ways):
    every = read_runs_table(four_ways["tensorboard"])
    final = read_runs_table(four_ways["tensorboard"], loss_policy="final")
    minimum = read_runs_table(four_ways["tensorboard"], loss_policy="min")
    ema = read_runs_table(four_ways["tensorboard"], loss_policy="ema:4")
    assert len(final) == len(minimum) == len(ema) == 12 and len(every) == 12 * 8
    # the law's curves fall: the final point is the minimum, and an EMA of a falling curve lies above it
    np.testing.assert_array_equal(final.loss, minimum.loss)
    assert np.all(ema.loss > final.loss)
    assert "ema" in ema.report.policy.describe() and "span 4" in ema.report.policy.describe()


def test_restart_nan_and_a_run_without_size_are_named_and_the_rest_fitted(tmp_path, capsys):
    runs = trackers.curves()
    name_restart, name_nan, name_nosize = "d64-l2-h1200", "d128-l3-h1200", "d32-l2-h400"
    cfg, points = runs[name_restart]  # resumed at step 500 from a checkpoint after logging to 800
    runs[name_restart] = (cfg, points[:8] + [(s, l + 0.01) for s, l in points[4:]])
    cfg, points = runs[name_nan]
    runs[name_nan] = (cfg, [(s, float("nan") if s == 700 else l) for s, l in points])
    runs[name_nosize] = ({"lr": 0.001, "batch_size": 16, "n_ctx": 128}, runs[name_nosize][1])
    root = trackers.write_tensorboard(tmp_path / "tb", runs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_runs_table(root, loss_policy="final")
    messages = [str(w.message) for w in caught]
    assert any(name_restart in m and "restart at step 500 after step 800" in m for m in messages)
    assert any(name_nan in m and "non-finite loss at step 700" in m for m in messages)
    assert any(name_nosize in m and "no model size" in m for m in messages)
    assert len(table) == 11 and name_nosize not in set(table.run_id)
    restarted = table.loss[list(table.run_id).index(name_restart)]
    assert restarted == pytest.approx(dict(runs[name_restart][1][8:])[1200])  # the later segment's final loss
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["fit", str(root), "--loss-policy", "every", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_points"] == len(read_runs_table(root, loss_policy="every"))
    for name in (name_restart, name_nan, name_nosize):
        assert any(name in str(w.message) for w in caught)


def test_jaxscale_runs_lists_each_run_and_writes_the_tidy_table(four_ways, tmp_path, capsys):
    assert main(["runs", str(four_ways["wandb"]), "--loss-policy", "final", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "wandb" in out and "12 runs, 12 kept" in out and "loss policy final" in out
    assert sum(line.strip().startswith("d") for line in out.splitlines()) == 12
    written = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert len(written) == 12 and {"run_id", "step", "n_total", "tokens", "loss"} <= set(written.columns)
    assert main(["runs", str(four_ways["mlflow"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kind"] == "mlflow" and report["rows"] == 96
    line = next(r for r in report["runs"] if r["run_id"] == "d32-l2-h400")
    assert (line["points"], line["first_step"], line["last_step"], line["tokens_per_step"]) == (4, 100, 400, 2048)


@pytest.mark.parametrize("args, message", [
    (["--source", "mlflow"], "not an MLflow file store"),  # a directory without experiments
    (["--metric", "perplexity"], "no metric 'perplexity'"),
    (["--loss-policy", "median"], "loss policy must be one of"),
])
def test_bad_input_is_one_line_and_exit_2(four_ways, tmp_path, capsys, args, message):
    source = tmp_path if args[0] == "--source" else four_ways["tensorboard"]  # an empty file store
    assert main(["runs", str(source), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_damaged_event_file_names_the_file_and_offset(tmp_path):
    root = trackers.write_tensorboard(tmp_path / "tb", dict(list(trackers.curves().items())[:1]))
    path = max(root.rglob("*tfevents*"))
    data = bytearray(path.read_bytes())
    data[40:60] = b"\xff" * 20
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"tfevents.*: byte \d+: not a TensorBoard event record"):
        read_source(root)


def test_a_directory_of_two_kinds_asks_for_the_kind(four_ways, tmp_path):
    trackers.write_tensorboard(tmp_path / "mixed", dict(list(trackers.curves().items())[:1]))
    trackers.write_wandb(tmp_path / "mixed", dict(list(trackers.curves().items())[:1]))
    with pytest.raises(ValueError, match="holds tensorboard and wandb runs at once; name the kind"):
        detect_kind(tmp_path / "mixed")
    assert read_runs_table(tmp_path / "mixed", source_kind="wandb", sizes_vary=False, min_rows=1).report.kind == "wandb"


def test_wandb_history_files_parquet_and_jsonl(tmp_path):
    runs = dict(list(trackers.curves().items())[:3])
    frames = []
    for name, (_, points) in runs.items():
        frames.append(pd.DataFrame({"name": name, "_step": [s for s, _ in points], "_runtime": 1.0,
                                    "val/loss": [l for _, l in points]}))
    history = pd.concat(frames)
    history.to_parquet(tmp_path / "history.parquet")
    pd.DataFrame([{"Name": n, **cfg} for n, (cfg, _) in runs.items()]).to_csv(tmp_path / "config.csv", index=False)
    from_parquet = read_runs_table(tmp_path / "history.parquet", config=tmp_path / "config.csv", sizes_vary=False)
    (tmp_path / "jsonl").mkdir()
    for name, frame in history.groupby("name"):  # as json.dumps writes each history row
        lines = [json.dumps(row) for row in frame.drop(columns="name").to_dict("records")]
        (tmp_path / "jsonl" / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    from_jsonl = read_runs_table(tmp_path / "jsonl", config=tmp_path / "config.csv", sizes_vary=False)
    assert not from_parquet.report.dropped and not from_jsonl.report.dropped
    order = np.lexsort((from_jsonl.step, from_jsonl.run_id))
    np.testing.assert_array_equal(from_parquet.loss, from_jsonl.loss[order])
    np.testing.assert_array_equal(from_parquet.n, from_jsonl.n[order])


def test_importing_the_runs_table_loads_no_tracker_library():
    # (pyarrow is not checked: pandas itself imports it when it is installed)
    code = ("import sys, jaxscale.tables.table, jaxscale.trackers.sources; "
            "print(sorted(m for m in ('tensorboard', 'mlflow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_mlflow_histories_in_logged_order_with_nan_from_sql_and_client(tmp_path):
    import logging

    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    from jaxscale.trackers.mlflow import read_mlflow

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}")
    experiment = client.create_experiment("order")
    logged = {"b": [("val_loss", 1, 3.0), ("lr", 1, 0.1), ("val_loss", 2, float("nan")), ("val_loss", 1, 2.5)],
              "a": [("val_loss", 5, 4.0), ("val_loss", 6, 3.5)]}  # b restarts at step 1
    for start, (name, metrics) in enumerate(logged.items()):
        run = client.create_run(experiment, run_name=name, start_time=1000 + start)
        client.log_batch(run.info.run_id, metrics=[Metric(k, v, 10 + i, s) for i, (k, s, v) in enumerate(metrics)])
    expected = [(name, k, float(s), v) for name in ("b", "a") for k in ("lr", "val_loss")
                for key, s, v in logged[name] if key == k]
    for bulk_sql in (True, False):
        scalars = read_mlflow(tmp_path / "m.db", bulk_sql=bulk_sql).scalars
        rows = list(zip(scalars["run_id"].astype(str), scalars["tag"].astype(str), scalars["step"], scalars["value"]))
        assert [r[:3] for r in rows] == [e[:3] for e in expected]
        np.testing.assert_array_equal([r[3] for r in rows], [e[3] for e in expected])


def test_a_wandb_history_column_of_text_is_named(tmp_path):
    runs = dict(list(trackers.curves().items())[:3])
    history = pd.concat([pd.DataFrame({"name": name, "_step": [s for s, _ in points], "phase": "train",
                                       "val/loss": [l for _, l in points]}) for name, (_, points) in runs.items()])
    history.to_parquet(tmp_path / "history.parquet")
    pd.DataFrame([{"Name": n, **cfg} for n, (cfg, _) in runs.items()]).to_csv(tmp_path / "config.csv", index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_runs_table(tmp_path / "history.parquet", config=tmp_path / "config.csv", sizes_vary=False)
    line = f"{tmp_path / 'history.parquet'}: column 'phase' is not numbers, not read as a metric"
    assert table.report.dropped == (line,) and any(line in str(w.message) for w in caught)


def test_a_binary_config_export_is_named_not_a_codec_error(four_ways, tmp_path, capsys):
    """`--config binary.csv` printed a bare 'utf-8' codec error that named no file."""
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\x00\x01\xff\xfe" * 8)
    assert main(["runs", str(four_ways["wandb"]), "--config", str(binary)]) == 2
    err = capsys.readouterr().err
    assert f"{binary}: not a W&B CSV export (not UTF-8 text: byte 0xff at offset 2)" in err
    assert len(err.strip().splitlines()) == 1
