"""The sweep's runs as TensorBoard logs: one directory per run, its configuration as hparams,
its curve as scalars by step, so a sweep can be watched with ``tensorboard --logdir OUT/tensorboard``.

Written with the ``tensorboard`` package alone (no TensorFlow, no PyTorch): its
``EventFileWriter`` (what ``tensorboard.summary.Writer`` writes through) and the summaries of its
scalars and HParams plugins (``scalar_pb``, ``hparams_pb``). ``tensorboard.summary.Writer`` writes
scalars only, and ``tensorboardX`` would add a dependency for what these two calls do. Each
step is one event holding every metric of that step. TensorBoard stores scalars as float32, so
losses come back rounded to float32; sizes, tokens per step and the schedule are hparams,
stored as float64, so the run's N, D and C come back exactly (:mod:`jaxscale.trackers.sources`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from jaxscale.tables import schema as rs

#: Per-step columns of the runs table logged as scalars; the rest that is constant within a run
#: (sizes, the schedule) is logged once as hparams, with the run's tokens per step.
SCALARS = (rs.LOSS, rs.TRAIN_LOSS, rs.VAL_LOSS, rs.LEARNING_RATE)
DERIVED = (rs.TOKENS, rs.COMPUTE_TOTAL, rs.COMPUTE_NONEMBEDDING, rs.STEP, rs.RUN_ID)


def write_run(curve: pd.DataFrame, directory: Path) -> None:
    """Write one run's curve (rows of the runs table, by step) as a fresh event file in
    ``directory`` (earlier event files there are replaced)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.plugins.hparams.summary_v2 import hparams_pb
    from tensorboard.plugins.scalar.summary_v2 import scalar_pb
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*tfevents*"):
        old.unlink()
    steps = curve[rs.STEP].to_numpy(np.int64)
    writer = EventFileWriter(str(directory))
    writer.add_event(event_pb2.Event(step=0, summary=hparams_pb(_hparams(curve), trial_id=str(curve[rs.RUN_ID].iloc[0]))))
    scalars = [c for c in SCALARS if c in curve.columns]
    for i, step in enumerate(steps):
        summary = summary_pb2.Summary()
        for column in scalars:
            summary.value.extend(scalar_pb(column, float(curve[column].iloc[i])).value)
        writer.add_event(event_pb2.Event(step=int(step), summary=summary))
    writer.close()


def _hparams(curve: pd.DataFrame) -> dict[str, float | str]:
    """The run's constant columns (sizes, schedule) and its tokens per step."""
    hparams: dict[str, float | str] = {}
    for column in curve.columns:
        if column in SCALARS or column in DERIVED or curve[column].nunique(dropna=False) != 1:
            continue
        value = curve[column].iloc[0]
        hparams[column] = value.item() if isinstance(value, np.generic) else value
    steps, tokens = curve[rs.STEP].to_numpy(np.float64), curve[rs.TOKENS].to_numpy(np.float64)
    moving = steps > 0
    hparams["tokens_per_step"] = float(tokens[moving][0] / steps[moving][0]) if moving.any() else 0.0
    return hparams
