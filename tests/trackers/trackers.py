"""One set of training runs written where labs keep them, by the trackers' own libraries:
TensorBoard (the ``tensorboard`` package's writers), MLflow (its client, into SQLite), W&B's
export files (its line-plot and runs-table CSV layouts), and the same runs as a tidy CSV."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from jaxscale.tables.accounting import param_counts
from jaxscale.tables.model_config import run_architecture

VOCAB, N_CTX, BATCH = 1000, 128, 16
TOKENS_PER_STEP = BATCH * N_CTX
SHAPES = [(32, 2), (64, 2), (64, 4), (128, 3), (128, 6), (256, 4)]  # (d_model, n_layer)
HORIZONS = (400, 1200)  # steps


def config(d_model: int, n_layer: int, horizon: int) -> dict:
    return {"d_model": d_model, "n_layer": n_layer, "n_head": 4, "vocab_size": VOCAB, "n_ctx": N_CTX,
            "batch_size": BATCH, "horizon": horizon}


def law_loss(n: float, d: float) -> float:
    """Chinchilla's form, L = E + A / N^alpha + B / D^beta, with constants that give losses of
    2-5 nats to these small models, rounded to float32 (what TensorBoard stores)."""
    return float(np.float32(1.8 + 40.0 / n**0.3 + 60.0 / d**0.28))


def curves() -> dict[str, tuple[dict, list[tuple[int, float]]]]:
    """Run name -> (config, [(step, loss)]) for 12 runs: 6 shapes x 2 horizons, logged every 100
    steps; in name order, the order a TensorBoard directory lists them, so every source holds the
    runs in the same order (a fit's sums then add in the same order)."""
    runs = {}
    for d_model, n_layer in SHAPES:
        for horizon in HORIZONS:
            cfg = config(d_model, n_layer, horizon)
            n = param_counts(run_architecture(cfg)).total
            points = [(s, law_loss(n, s * TOKENS_PER_STEP)) for s in range(100, horizon + 1, 100)]
            runs[f"d{d_model}-l{n_layer}-h{horizon}"] = (cfg, points)
    return dict(sorted(runs.items()))


def write_tensorboard(root: Path, runs: dict) -> Path:
    """Each run in its directory: hparams through ``hparams_pb`` on an ``EventFileWriter``,
    scalars through ``tensorboard.summary.Writer``."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.plugins.hparams.summary_v2 import hparams_pb
    from tensorboard.summary import Writer
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    for name, (cfg, points) in runs.items():
        if cfg is not None:
            events = EventFileWriter(str(root / name))
            events.add_event(event_pb2.Event(summary=hparams_pb(cfg)))
            events.close()
        writer = Writer(str(root / name))
        for step, loss in points:
            writer.add_scalar("val/loss", loss, step)
        writer.close()
    return root


def write_mlflow(path: Path, runs: dict) -> Path:
    """An SQLite store written by the MLflow client: params and a val_loss history per run."""
    import logging

    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    client = MlflowClient(tracking_uri=f"sqlite:///{path}")
    experiment = client.create_experiment("scaling")
    now = int(time.time() * 1000)
    for name, (cfg, points) in runs.items():
        run = client.create_run(experiment, run_name=name)
        metrics = [Metric("val_loss", loss, now + i, step) for i, (step, loss) in enumerate(points)]
        client.log_batch(run.info.run_id, metrics=metrics, params=[Param(k, str(v)) for k, v in cfg.items()])
        client.set_terminated(run.info.run_id)
    return path


def write_wandb(directory: Path, runs: dict) -> Path:
    """A line-plot CSV export (Step, "<run> - val/loss" with __MIN/__MAX) and a runs-table CSV export."""
    directory.mkdir(parents=True, exist_ok=True)
    steps = sorted({s for _, points in runs.values() for s, _ in points})
    wide = pd.DataFrame({"Step": steps})
    for name, (_, points) in runs.items():
        logged = dict(points)
        column = [repr(logged[s]) if s in logged else "" for s in steps]
        wide[f"{name} - val/loss"], wide[f"{name} - val/loss__MIN"], wide[f"{name} - val/loss__MAX"] = column, column, column
    wide.to_csv(directory / "wandb_export_val_loss.csv", index=False)
    table = pd.DataFrame([{"Name": name, "State": "finished", "Notes": "-", "User": "lab", "Tags": "",
                           "Created": "2025-01-01T00:00:00.000Z", "Runtime": 60, "Sweep": "", **cfg,
                           "val/loss": points[-1][1]} for name, (cfg, points) in runs.items()])
    table.to_csv(directory / "wandb_export_runs.csv", index=False)
    return directory


def write_tidy(path: Path, runs: dict) -> Path:
    rows = [{"run_id": name, "step": step, "n_total": param_counts(run_architecture(cfg)).total,
             "tokens": step * TOKENS_PER_STEP, "loss": repr(loss)}
            for name, (cfg, points) in runs.items() for step, loss in points]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


#: A known Chinchilla law (Hoffmann et al.'s fitted values) and the runs it gives: five sizes,
#: ten checkpoints each, tokens per step fixed.
CHINCHILLA = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
LAW_SIZES = (2e6, 5e6, 1.2e7, 3e7, 8e7)
LAW_TOKENS_PER_STEP = 65536
LAW_STEPS = tuple(range(200, 2001, 200))


def chinchilla_runs() -> dict[str, tuple[float, list[tuple[int, float]]]]:
    """Run name -> (N, [(step, loss)]) of :data:`CHINCHILLA`, the losses rounded to float32 (what
    TensorBoard stores), in name order."""
    p = CHINCHILLA
    runs = {}
    for n in LAW_SIZES:
        tokens = np.array(LAW_STEPS, np.float64) * LAW_TOKENS_PER_STEP
        loss = (p["E"] + p["A"] / n ** p["alpha"] + p["B"] / tokens ** p["beta"]).astype(np.float32)
        points = [(s, float(value)) for s, value in zip(LAW_STEPS, loss)]
        runs[f"n{int(n):09d}"] = (n, points)
    return runs


def write_law_csv(path: Path, runs: dict) -> Path:
    rows = [{"run_id": name, "step": s, "n_total": n, "tokens": s * LAW_TOKENS_PER_STEP, "loss": repr(loss)}
            for name, (n, points) in runs.items() for s, loss in points]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def write_summary_writer(root: Path, runs: dict) -> Path:
    """Each run as PyTorch's ``SummaryWriter`` API writes it (tensorboardX's, the same API):
    ``add_scalar("loss", ...)`` per step, then ``add_hparams`` with the size and tokens per step
    (which writes into a timestamped sub-directory of the run's)."""
    from tensorboardX import SummaryWriter

    for name, (n, points) in runs.items():
        writer = SummaryWriter(str(root / name))
        for step, loss in points:
            writer.add_scalar("loss", loss, step)
        writer.add_hparams({"params": n, "tokens_per_step": LAW_TOKENS_PER_STEP, "lr": 3e-4},
                           {"hparam/loss": points[-1][1]})
        writer.close()
    return root


def write_mlruns(root: Path, runs: dict) -> Path:
    """An ``mlruns`` file store written by the MLflow client (the caller allows the file store:
    ``MLFLOW_ALLOW_FILE_STORE=true`` on MLflow 3): params and a loss history per run."""
    import logging

    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    client = MlflowClient(tracking_uri=Path(root).resolve().as_uri())
    experiment = client.create_experiment("scaling")
    for start, (name, (n, points)) in enumerate(runs.items()):
        run = client.create_run(experiment, run_name=name, start_time=1000 + start)
        metrics = [Metric("loss", loss, 10_000 + i, step) for i, (step, loss) in enumerate(points)]
        params = [Param("params", repr(n)), Param("tokens_per_step", str(LAW_TOKENS_PER_STEP))]
        client.log_batch(run.info.run_id, metrics=metrics, params=params)
        client.set_terminated(run.info.run_id)
    return Path(root)


def in_a_fresh_process(code: str, **env: str) -> None:
    """Run ``code`` (``trackers`` imported) in a new Python process, with ``env`` added to its
    environment: MLflow caches a store per URI in the process that opened it, so a store written
    there and read here is read as a user's would be, from nothing cached."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))
    subprocess.run([sys.executable, "-c", f"from tests.trackers import trackers\n{code}"], check=True, cwd=root,
                   env={**os.environ, "PYTHONPATH": path, **env})
