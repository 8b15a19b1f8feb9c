"""Weights & Biases exports: the files a W&B user downloads, read without the ``wandb`` package.

Three kinds of file, found by their columns:

- the line-plot CSV export (a panel's "Export CSV"): wide, one row per step, a step column
  (``Step``, or the panel's x axis such as ``_step``) and per run and metric a column
  ``"<run> - <metric>"`` beside ``"<run> - <metric>__MIN"`` and ``"__MAX"`` (the range of the
  points a sampled panel merged; the value column is read and the two ranges are not);
- the runs-table CSV export (the project's runs table, "Export CSV"): one row per run, its name
  in ``Name``, then columns such as ``State``, ``Created``, ``Runtime``, and the run's config and
  summary values, which become the run's configuration;
- a run's history saved from the API (``run.history()`` or ``run.scan_history()`` written as
  Parquet or JSON Lines): ``_step`` and one column per metric; the run is named by a ``name``
  (or ``run``, ``run_id``) column when the file holds several, else by the file's stem.

A source is one of these files or a directory of them (e.g. a line-plot export beside the runs
table). Where the ``wandb`` package and a network exist, ``wandb.Api().runs(path)`` gives the same
data: save each run's ``history()`` and the runs' configs to these files, then read them here.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jaxscale.trackers.logged import Logged, Reader, config_value, scalars_frame

HISTORY_SUFFIXES = (".parquet", ".jsonl", ".ndjson")
NAME_COLUMNS = ("name", "run", "run_name", "run_id", "id", "display_name")
#: Columns of the runs-table export that describe the run's record, not its configuration.
RECORD_COLUMNS = {"state", "notes", "user", "tags", "created", "runtime", "sweep", "group", "job type",
                  "job_type", "host", "commit"}
_RANGE_SUFFIXES = ("__MIN", "__MAX")
_SEP = " - "


def wide_header(columns: list[str]) -> bool:
    """True for the header of a line-plot CSV export: a step column and ``"<run> - <metric>"`` columns."""
    return len(columns) >= 2 and _SEP not in columns[0] and all(_SEP in c for c in columns[1:])


def export_files(source: Path) -> list[Path]:
    """The export files of ``source``: itself, or the CSV, Parquet and JSON Lines files of a directory."""
    if source.is_dir():
        return sorted(p for p in source.iterdir() if p.suffix.lower() in (".csv", *HISTORY_SUFFIXES))
    return [source]


def read_wandb(source: str | Path, config: str | Path | None = None) -> Logged:
    """Every run's history and configuration in W&B export files (module docstring).

    Args:
        source: an export file or a directory of them.
        config: a runs-table CSV export to take configurations from, when ``source`` lacks one.

    Raises:
        ValueError: naming the file when it is none of the three kinds, or no file holds a history.
    """
    source = Path(source)
    files = export_files(source) + ([Path(config)] if config is not None else [])
    histories, configs, dropped = [], {}, []
    for path in files:
        if path.suffix.lower() in HISTORY_SUFFIXES:
            histories.append((path, _history(path, dropped)))
            continue
        frame = _read_export(path)
        columns = [str(c) for c in frame.columns]
        if wide_header(columns):
            histories.append((path, _wide(frame, path)))
        elif _name_column(columns) is not None:
            configs.update(_runs_table(frame, path))
        else:
            raise ValueError(f"{path}: neither a W&B line-plot export (Step, \"<run> - <metric>\" columns) "
                             f"nor a runs-table export (a Name column); columns are {columns}")
    if not histories:
        raise ValueError(f"{source}: no W&B history (a line-plot CSV export, or Parquet/JSON Lines of run.history())")
    runs, tags, steps, values = ([x for _, h in histories for x in h[i]] for i in range(4))
    places = {run: str(path) for path, h in histories for run in h[0]}
    return Logged("wandb", str(source), scalars_frame(runs, tags, steps, values), configs, places, tuple(dropped))


def _read_export(path: Path) -> pd.DataFrame:
    """A CSV export as text columns; one line naming the file when it is not UTF-8 CSV text."""
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not a W&B CSV export (not UTF-8 text: byte {err.object[err.start]:#04x} at "
                         f"offset {err.start})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"{path}: not a W&B CSV export ({str(err).splitlines()[0]})") from None


def _name_column(columns: list[str]) -> str | None:
    folded = {c.strip().lower(): c for c in columns}
    return next((folded[n] for n in NAME_COLUMNS if n in folded), None)


def _wide(frame: pd.DataFrame, path: Path) -> tuple[list, list, list, list]:
    step_col = frame.columns[0]
    step = _numbers(frame[step_col], path, step_col)
    runs, tags, steps, values = [], [], [], []
    for column in frame.columns[1:]:
        if column.endswith(_RANGE_SUFFIXES):
            continue
        run, _, metric = column.rpartition(_SEP)
        value = _numbers(frame[column], path, column)
        logged = frame[column].str.strip() != ""
        runs += [run] * int(logged.sum())
        tags += [metric] * int(logged.sum())
        steps += step[logged.to_numpy()].tolist()
        values += value[logged.to_numpy()].tolist()
    return runs, tags, steps, values


def _numbers(column: pd.Series, path: Path, name: str) -> np.ndarray:
    """A column of numbers ('' for a step the run did not log; NaN, inf as W&B writes them)."""
    text = column.str.strip()
    values = pd.to_numeric(text.where(text != "", "nan").replace({"Infinity": "inf", "-Infinity": "-inf"}),
                           errors="coerce").to_numpy(np.float64)
    bad = np.isnan(values) & ~text.str.lower().isin(["", "nan"]).to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{path}: row {i + 1} (line {i + 2}), column {name!r}: not a number ({text.iloc[i]!r})")
    return values


def _runs_table(frame: pd.DataFrame, path: Path) -> dict[str, dict[str, Any]]:
    name = _name_column([str(c) for c in frame.columns])
    configs = {}
    for _, row in frame.iterrows():
        run = str(row[name]).strip()
        if not run:
            raise ValueError(f"{path}: a row without a run name in column {name!r}")
        configs[run] = {c: config_value(v) for c, v in row.items()
                        if c != name and c.strip().lower() not in RECORD_COLUMNS and str(v).strip() != ""}
    return configs


def _history(path: Path, dropped: list[str]) -> tuple[list, list, list, list]:
    """A history saved from the API: ``_step`` and metric columns, the run named by a name column
    or the file's stem; columns that are not numbers (nor W&B's own, ``_``-prefixed) are named in
    ``dropped``."""
    if path.suffix.lower() == ".parquet":
        frame = pd.read_parquet(path)
    else:
        try:
            frame = pd.DataFrame([json.loads(line) for line in path.read_text().splitlines() if line.strip()])
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: line {err.lineno}: not JSON ({err.msg})") from None
    if "_step" not in frame.columns:
        raise ValueError(f"{path}: a W&B history has a _step column; columns are {list(frame.columns)}")
    name = _name_column([str(c) for c in frame.columns])
    run = frame[name].astype(str) if name else pd.Series(path.stem, index=frame.index)
    columns = [c for c in frame.columns if c != name and not str(c).startswith("_")]
    metrics = [c for c in columns if pd.api.types.is_numeric_dtype(frame[c])]
    dropped.extend(f"{path}: column {c!r} is not numbers, not read as a metric" for c in columns if c not in metrics)
    runs, tags, steps, values = [], [], [], []
    for metric in metrics:
        logged = frame[metric].notna()
        runs += run[logged].tolist()
        tags += [metric] * int(logged.sum())
        steps += frame.loc[logged, "_step"].astype(float).tolist()
        values += frame.loc[logged, metric].astype(float).tolist()
    return runs, tags, steps, values


def _is_export_file(path: Path) -> bool:
    """True for a history file (Parquet, JSON Lines) or a line-plot CSV export (its header)."""
    if path.suffix.lower() in HISTORY_SUFFIXES:
        return True
    with path.open(newline="", errors="replace") as fh:
        header = next(csv.reader([fh.readline()]), [])
    return wide_header(header)


def _holds_exports(path: Path) -> bool:
    return bool(export_files(path))


READER = Reader("wandb", read_wandb, "W&B exports (CSV, Parquet, JSON Lines)", claims_file=_is_export_file,
                claims_directory=_holds_exports, options=("config",))
