"""Evaluations of a ladder read into one long table: the door downstream data comes in through.

Two layouts are read:

- **long** (``pythia_evals.csv``): one row per (model, checkpoint, task, metric), with columns
  ``task``, ``metric``, ``value`` and optionally ``stderr``, ``model``, ``data``, ``step``,
  ``shots`` (where it is present, the rows of one number of shots are kept: zero-shot,
  :data:`SHOTS`, unless ``shots`` says otherwise);
- **wide**: one row per (model, checkpoint), one column per task holding its accuracy (the
  metric named by ``metric``), ``TASK:METRIC`` for another metric of a task (e.g.
  ``lambada_openai:ppl``), and ``TASK_stderr`` / ``TASK:METRIC_stderr`` for standard errors.

Both need each row's model size and tokens: ``n_params`` (or ``N``) and ``tokens`` (or ``D``).
The result has the columns :data:`COLUMNS`; a model without a name is named by its size, a row
without a step is a final checkpoint (step 0), a table without ``data`` is one recipe
(``"all"``), and an unknown standard error is NaN (fits then take the residuals as the noise).
Every refusal is one line naming the column or the row (rows counted from 1, after the header).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from jaxscale.accuracy.tasks import LOSS_METRICS

COLUMNS = ("model", "data", "n_params", "tokens", "step", "task", "metric", "value", "stderr")
#: Shots kept from a long table with a ``shots`` column, by default.
SHOTS = 0
_ALIASES = {"N": "n_params", "D": "tokens"}
_META = {"model", "data", "n_params", "tokens", "step", "shots", "n_nonembedding", "N", "D"}


def read_evaluations(source: str | Path | pd.DataFrame, metric: str = "acc", shots: int = SHOTS) -> pd.DataFrame:
    """The evaluations of ``source`` (a CSV path or a DataFrame) in the long layout of
    :data:`COLUMNS` (module docstring); ``metric`` names the metric of a wide table's task columns,
    ``shots`` the rows kept of a table with a ``shots`` column (refused where it has none of them).

    Raises:
        FileNotFoundError: if the path does not exist.
        ValueError: naming the column or row that is missing, empty or out of range.
    """
    frame = pd.read_csv(source) if not isinstance(source, pd.DataFrame) else source.copy()
    frame = frame.rename(columns={k: v for k, v in _ALIASES.items() if k in frame.columns and v not in frame.columns})
    for column in ("n_params", "tokens"):
        if column not in frame.columns:
            alias = {v: k for k, v in _ALIASES.items()}[column]
            raise ValueError(f"column {column!r} (or {alias!r}) is missing: every row needs the model's "
                             f"{'size' if column == 'n_params' else 'training tokens'}")
    _check_filled(frame, "n_params", zero=False)
    _check_filled(frame, "tokens", zero=True)
    frame["row"] = np.arange(1, len(frame) + 1)  # rows counted in the file, whatever is kept
    if "shots" in frame.columns:
        frame = _with_shots(frame, shots)
    long = _from_long(frame) if {"task", "metric", "value"} <= set(frame.columns) else _from_wide(frame, metric)
    _check_values(long)
    return long.reset_index(drop=True)


def _check_filled(frame: pd.DataFrame, column: str, zero: bool) -> None:
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64)
    bad = ~np.isfinite(values) | (values < 0 if zero else values <= 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        kind = "a number >= 0" if zero else "a positive number"
        raise ValueError(f"row {row}: {column} is empty or not a number ({str(frame[column].iloc[row - 1])!r}); it must be {kind}")


def _defaults(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    if "model" not in frame.columns:
        frame["model"] = [f"N={n:.3g}" for n in frame["n_params"]]
    if "data" not in frame.columns:
        frame["data"] = "all"
    if "step" not in frame.columns:
        frame["step"] = 0
    if "stderr" not in frame.columns:
        frame["stderr"] = np.nan
    return frame


def _with_shots(frame: pd.DataFrame, shots: int) -> pd.DataFrame:
    """The rows of ``frame`` evaluated with ``shots`` shots (rows keep their numbers in the file)."""
    kept = pd.to_numeric(frame["shots"], errors="coerce") == shots
    if not kept.any():
        found = ", ".join(str(v) for v in sorted(pd.unique(frame["shots"].dropna())))
        raise ValueError(f"--shots {shots}: no row was evaluated with {shots} shots (column shots holds {found})")
    return frame[kept.to_numpy()]


def _from_long(frame: pd.DataFrame) -> pd.DataFrame:
    return _defaults(frame)[list(COLUMNS) + ["row"]]


def _from_wide(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    frame = _defaults(frame)
    value_columns = [c for c in frame.columns if c not in _META | {"stderr", "row"} and not str(c).endswith("_stderr")]
    if not value_columns:
        raise ValueError("the table has no task column: a wide table needs one column per task "
                         "(a long one the columns task, metric, value)")
    parts = []
    for column in value_columns:
        task, _, own_metric = str(column).partition(":")
        stderr_column = f"{column}_stderr"
        part = frame[["model", "data", "n_params", "tokens", "step", "row"]].copy()
        part["task"], part["metric"] = task, own_metric or metric
        part["value"] = pd.to_numeric(frame[column], errors="coerce")
        part["stderr"] = frame[stderr_column] if stderr_column in frame.columns else np.nan
        parts.append(part)
    return pd.concat(parts, ignore_index=True)[list(COLUMNS) + ["row"]]


def _check_values(long: pd.DataFrame) -> None:
    values = long["value"].to_numpy(np.float64)
    is_accuracy = ~long["metric"].str.lower().isin(LOSS_METRICS).to_numpy()
    outside = is_accuracy & ~((values >= 0) & (values <= 1))
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        r = long.iloc[i]
        raise ValueError(f"row {r['row']}: {r['metric']} of {r['task']} is {r['value']:g}, outside [0, 1]; "
                         f"accuracies are fractions (a percentage? divide by 100)")
    stderr = long["stderr"].to_numpy(np.float64)
    if (stderr < 0).any():
        r = long.iloc[int(np.flatnonzero(stderr < 0)[0])]
        raise ValueError(f"row {r['row']}: stderr of {r['task']} is {r['stderr']}; it must be >= 0")
