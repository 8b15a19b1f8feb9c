"""The learning rate of every update of a run, from its named schedule or its recorded rates.

A learning-curve law (:mod:`jaxscale.laws.lr_annealing`) needs eta_1..eta_T, the rate of the
update that produces step i, for every step, while a runs table holds a few checkpoints. The rates
come from:

- a named schedule: ``constant`` and ``cosine`` are jaxscale's own :class:`Schedule`
  (linear warmup from 0 to the peak over ``warmup_steps``, then constant, or cosine to
  ``final_fraction`` x peak at ``total_steps`` and that floor after it), evaluated as training
  evaluates it, so eta_i = ``Schedule(i - 1)``; ``wsd`` is warmup-stable-decay (Hägele et al.
  2024, "Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations"): the constant
  schedule, times a linear cooldown to ``final_fraction`` over its last ``decay_fraction`` of steps;
- the rates recorded at the checkpoints (the runs table's ``learning_rate`` column), linearly
  interpolated between checkpoints from eta = 0 at step 0: exact for linear pieces, an
  approximation of a cosine between checkpoints.

:func:`run_learning_rates` reads each run's schedule from its columns (``schedule``, ``peak_lr``,
``total_steps``, ``warmup_steps``, ``final_fraction``), with defaults for tables that lack some
(the (Mis)Fitting table: cosine, 50 warmup steps, floor 0.1).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from typing import Any, Literal

import jax
import numpy as np
import optax
import pandas as pd

from jaxscale.core.numerics import float64
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Linear warmup from 0 to ``peak_lr`` over ``warmup_steps``, then constant, or cosine decay
    to ``final_fraction * peak_lr`` at ``total_steps`` (Loshchilov & Hutter 2017)."""

    peak_lr: float
    total_steps: int
    warmup_steps: int = 0
    kind: Literal["constant", "cosine"] = "constant"
    final_fraction: float = 0.1

    def __post_init__(self) -> None:
        if not (math.isfinite(self.peak_lr) and self.peak_lr > 0):
            raise ValueError(f"peak_lr must be finite and > 0; got {self.peak_lr}")
        if self.total_steps < 1 or not 0 <= self.warmup_steps < self.total_steps:
            raise ValueError(
                f"need total_steps >= 1 and 0 <= warmup_steps < total_steps; "
                f"got {self.total_steps}, {self.warmup_steps}"
            )
        if self.kind not in ("constant", "cosine"):
            raise ValueError(f"schedule kind must be 'constant' or 'cosine'; got {self.kind!r}")
        if not 0 <= self.final_fraction <= 1:  # a decay ends at or below its peak
            raise ValueError(f"final_fraction must be in [0, 1]; got {self.final_fraction}")

    @functools.cached_property
    def optax_schedule(self) -> optax.Schedule:
        """The schedule as an optax schedule of the update count, built once per instance."""
        warmup = optax.linear_schedule(0.0, self.peak_lr, max(self.warmup_steps, 1))
        decay_steps = self.total_steps - self.warmup_steps
        if self.kind == "cosine":
            after = optax.cosine_decay_schedule(self.peak_lr, decay_steps, self.final_fraction)
        else:
            after = optax.constant_schedule(self.peak_lr)
        return optax.join_schedules([warmup, after], [self.warmup_steps])

    @functools.cached_property
    def rates(self) -> np.ndarray:
        """Every update's learning rate in float32, ``rates[step]`` producing step ``step + 1``:
        computed once on the host, so a training loop reads its rates without waiting on the device."""
        with jax.disable_jit():
            rates = np.asarray(self.optax_schedule(np.arange(1, self.total_steps + 1)), np.float32)
        rates.flags.writeable = False
        return rates

    def __call__(self, step: int) -> float:
        """The learning rate used for the update that produces step ``step + 1`` (:attr:`rates`
        within the run, the schedule's floor or constant after it)."""
        if 0 <= step < self.total_steps:
            return float(self.rates[step])
        return float(self.optax_schedule(step + 1))



KINDS = ("constant", "cosine", "wsd")
#: Columns that describe a run's schedule, with their types.
SCHEDULE_COLUMNS = {rs.SCHEDULE: str, rs.PEAK_LR: float, rs.TOTAL_STEPS: int, rs.WARMUP_STEPS: int,
                    rs.FINAL_FRACTION: float}


@float64
def named_learning_rates(kind: str, peak_lr: float, total_steps: int, warmup_steps: int = 0,
                         final_fraction: float = 0.1, *, steps: int | None = None,
                         decay_fraction: float = 0.2) -> np.ndarray:
    """eta_1..eta_steps (``steps`` defaults to ``total_steps``) of a named schedule."""
    if kind not in KINDS:
        raise ValueError(f"schedule must be one of {KINDS}; got {kind!r}")
    steps = total_steps if steps is None else steps
    if steps < 1:
        raise ValueError(f"steps must be >= 1; got {steps}")
    schedule = Schedule(peak_lr, total_steps, warmup_steps, "constant" if kind == "wsd" else kind,  # type: ignore[arg-type]
                        final_fraction)
    with jax.disable_jit():  # optax compiles once per schedule length; eager, every run costs ~1 ms
        lrs = np.asarray(schedule.optax_schedule(np.arange(1, steps + 1)), dtype=np.float64)
    if kind == "wsd":
        if not 0 < decay_fraction <= 1 - warmup_steps / total_steps:
            raise ValueError(f"decay_fraction must be in (0, 1 - warmup/total]; got {decay_fraction}")
        decay_steps = decay_fraction * total_steps
        progress = np.clip((np.arange(1, steps + 1) - (total_steps - decay_steps)) / decay_steps, 0.0, 1.0)
        lrs = lrs * (1.0 - (1.0 - final_fraction) * progress)
    return lrs


def recorded_learning_rates(steps: np.ndarray, lrs: np.ndarray, length: int) -> np.ndarray:
    """eta_1..eta_length interpolated linearly through (0, 0) and the recorded (step, rate)."""
    order = np.argsort(steps)
    return np.interp(np.arange(1, length + 1), np.r_[0.0, steps[order]], np.r_[0.0, lrs[order]])


def _schedule_of(run: pd.DataFrame, defaults: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    """The schedule columns of one run (or ``defaults`` where the table lacks one); a constant
    schedule needs no final fraction (its rate never falls)."""
    values: dict[str, Any] = {}
    for column, kind in SCHEDULE_COLUMNS.items():
        present = column in run.columns and run[column].notna().all()
        if present and run[column].nunique() > 1:
            raise ValueError(f"run {run_id}: column {column!r} changes between checkpoints")
        if not present and column not in defaults:
            if column == rs.FINAL_FRACTION and values.get(rs.SCHEDULE) == "constant":
                values[column] = 1.0
                continue
            raise ValueError(f"run {run_id}: no {column!r} column to name its schedule; give the column, or "
                             f"{column}=VALUE for the runs without it")
        value = run[column].iloc[0] if present else defaults[column]
        values[column] = kind(value)
    return values


def run_learning_rates(table: RunsTable, *, source: str = "named",
                       defaults: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Per run (by run id), the rates of every update up to its last checkpoint or the end of its
    schedule, whichever is later. ``source`` is ``"named"`` (the schedule its columns name) or
    ``"recorded"`` (its ``learning_rate`` column, interpolated); ``defaults`` fill schedule
    columns the table lacks."""
    if source not in ("named", "recorded"):
        raise ValueError(f"source must be 'named' or 'recorded'; got {source!r}")
    if table.run_id is None or table.step is None:
        raise ValueError("learning curves need run identity (a run_id column or --run-by) and a step column")
    if source == "recorded" and rs.LEARNING_RATE not in table.frame.columns:
        raise ValueError(f"recorded rates need a {rs.LEARNING_RATE!r} column")
    frame = table.frame.assign(**{rs.RUN_ID: table.run_id, rs.STEP: table.step})
    out = {}
    for run_id, run in frame.groupby(rs.RUN_ID, sort=False):
        if source == "recorded":
            length = int(run[rs.STEP].max())
            out[run_id] = recorded_learning_rates(run[rs.STEP].to_numpy(float),
                                                  run[rs.LEARNING_RATE].to_numpy(float), length)
            continue
        s = _schedule_of(run, defaults or {}, str(run_id))
        length = max(s[rs.TOTAL_STEPS], int(run[rs.STEP].max()))
        out[run_id] = named_learning_rates(s[rs.SCHEDULE], s[rs.PEAK_LR], s[rs.TOTAL_STEPS], s[rs.WARMUP_STEPS],
                                           s[rs.FINAL_FRACTION], steps=length)
    return out
