"""Reading runs from trackers: 1,000 runs x 1,000 steps from TensorBoard and from MLflow.

TensorBoard: the log directory is written by the ``tensorboard`` package's writers (hparams with
``hparams_pb``, scalars with ``tensorboard.summary.Writer``): ten distinct runs, each copied to
make the runs (the writer's pure-Python checksums take ~0.3 ms an event, so writing a million
events would take the benchmark five minutes; reading is what is measured). Anchor: TensorBoard's
own Python loader (``EventFileLoader``, what ``EventAccumulator`` and tbparse read with) over the
same files; jaxscale: ``read_tensorboard`` and the whole ``read_runs_table``.

MLflow: an SQLite store written by the MLflow client (``log_batch``), ten distinct runs, each
copied row by row in SQL to make the runs (the client takes half a second a run). Anchor: the
client's ``get_metric_history`` per run (``read_mlflow(bulk_sql=False)``); jaxscale: ``read_mlflow``
(the metrics table read in SQL into numpy columns) and the whole ``read_runs_table``.

    python benchmarks/bench_readers.py [--runs 1000] [--steps 1000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from jaxscale.trackers.mlflow import read_mlflow
from jaxscale.tables.table import read_runs_table
from jaxscale.trackers.tensorboard import event_files, read_tensorboard

SHAPES = [(64, 2), (96, 2), (128, 2), (128, 4), (192, 4), (256, 4), (256, 6), (384, 6), (512, 6), (512, 8)]


def _config(i: int) -> dict:
    d_model, n_layer = SHAPES[i % len(SHAPES)]
    return {"d_model": d_model, "n_layer": n_layer, "n_head": 8, "vocab_size": 32000, "n_ctx": 512,
            "batch_size": 32, "seed": i}


def _losses(i: int, steps: int) -> np.ndarray:
    step = np.arange(1, steps + 1)
    return (2.0 + 3.0 * step ** -0.3 + 0.02 * (i % len(SHAPES))).astype(np.float32)


def write_tensorboard(root: Path, runs: int, steps: int) -> None:
    from tensorboard.compat.proto import event_pb2
    from tensorboard.plugins.hparams.summary_v2 import hparams_pb
    from tensorboard.summary import Writer
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    for i in range(min(runs, len(SHAPES))):
        events = EventFileWriter(str(root / f"run{i:04d}"))
        events.add_event(event_pb2.Event(summary=hparams_pb(_config(i))))
        events.close()
        writer = Writer(str(root / f"run{i:04d}"))
        for step, loss in enumerate(_losses(i, steps), start=1):
            writer.add_scalar("val/loss", loss, step)
        writer.close()
    for i in range(len(SHAPES), runs):
        shutil.copytree(root / f"run{i % len(SHAPES):04d}", root / f"run{i:04d}")


def write_mlflow(path: Path, runs: int, steps: int) -> None:
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{path}")
    experiment = client.create_experiment("bench")
    now = int(time.time() * 1000)
    for i in range(min(runs, len(SHAPES))):
        run = client.create_run(experiment, run_name=f"run{i:04d}", start_time=now + i)
        for start in range(0, steps, 1000):  # log_batch takes at most 1,000 metrics
            metrics = [Metric("val_loss", float(loss), now + s, s + 1)
                       for s, loss in enumerate(_losses(i, steps)[start:start + 1000], start=start)]
            client.log_batch(run.info.run_id, metrics=metrics,
                             params=[Param(k, str(v)) for k, v in _config(i).items()] if start == 0 else [])
    _copy_mlflow_runs(path, runs, now)


def _copy_mlflow_runs(path: Path, runs: int, now: int) -> None:
    """Runs len(SHAPES)... as copies of the runs the client wrote, every row of each run's
    tables (the run, its params, tags, metric history and latest metrics) under a new run id
    and name: the client takes half a second to log a run's 1,000 metrics."""
    import sqlite3
    import uuid

    with sqlite3.connect(path) as db:
        written = [row[0] for row in db.execute("SELECT run_uuid FROM runs ORDER BY start_time")]
        tables = {table: [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
                  for table in ("runs", "params", "tags", "metrics", "latest_metrics")}
        for i in range(len(written), runs):
            new, name = uuid.uuid4().hex, f"run{i:04d}"
            for table, columns in tables.items():
                chosen = ", ".join("?" if c == "run_uuid" else c for c in columns)
                db.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {chosen} FROM {table} "
                           "WHERE run_uuid = ?", (new, written[i % len(written)]))
            db.execute("UPDATE runs SET name = ?, start_time = ? WHERE run_uuid = ?", (name, now + i, new))
            db.execute("UPDATE tags SET value = ? WHERE run_uuid = ? AND key = 'mlflow.runName'", (name, new))


def _timed(label: str, call):
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    print(f"  {label:<48} {seconds:8.2f} s")
    return result, seconds


def _anchor_tensorboard(root: Path) -> int:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    count = 0
    for paths in event_files(root).values():
        for path in paths:
            for event in EventFileLoader(str(path)).Load():
                count += len(event.summary.value) if event.HasField("summary") else 0
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the stores (default: a temp dir)")
    args = parser.parse_args()
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    warnings.simplefilter("ignore")
    import mlflow.tracking  # noqa: F401  (imports are not what is timed)
    import tensorboard.compat.proto.event_pb2  # noqa: F401

    import jaxscale.trackers.sources  # noqa: F401
    base = args.dir or Path(tempfile.mkdtemp(prefix="bench_readers_"))
    n = args.runs * args.steps
    print(f"{args.runs} runs x {args.steps} steps = {n:,} losses per store, in {base}")

    tb = base / "tensorboard"
    _timed("write TensorBoard (10 runs written, then copied)", lambda: write_tensorboard(tb, args.runs, args.steps))
    anchor_count, anchor_s = _timed("anchor: TensorBoard's EventFileLoader", lambda: _anchor_tensorboard(tb))
    logged, ours_s = _timed("jaxscale: read_tensorboard", lambda: read_tensorboard(tb))
    table, _ = _timed("jaxscale: read_runs_table(tensorboard dir)", lambda: read_runs_table(tb))
    print(f"  scalars read: anchor {anchor_count:,} (+ hparams values), jaxscale {len(logged.scalars):,}; "
          f"table rows {len(table):,}; anchor / jaxscale = {anchor_s / ours_s:.1f}x")

    db = base / "mlflow.db"
    _timed("write MLflow (10 runs logged, then copied)", lambda: write_mlflow(db, args.runs, args.steps))
    client, client_s = _timed("anchor: MLflow client get_metric_history per run",
                              lambda: read_mlflow(db, bulk_sql=False))
    bulk, bulk_s = _timed("jaxscale: read_mlflow (SQL into numpy)", lambda: read_mlflow(db))
    table, _ = _timed("jaxscale: read_runs_table(mlflow.db)", lambda: read_runs_table(db))
    same = np.array_equal(np.sort(client.scalars["value"].to_numpy()), np.sort(bulk.scalars["value"].to_numpy()))
    print(f"  metrics read: client {len(client.scalars):,}, SQL {len(bulk.scalars):,} (same values: {same}); "
          f"table rows {len(table):,}; client / SQL = {client_s / bulk_s:.1f}x")
    if args.dir is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
