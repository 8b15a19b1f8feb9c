"""MLflow tracking stores: every run of every active experiment, its params and metric histories.

A store is named by a tracking URI: ``sqlite:///path/mlflow.db`` (MLflow 3's local store), a
tracking server (``http://host:5000``), ``file:///path/mlruns`` or an ``mlruns`` directory (the
old file store), or the path of an SQLite file itself. Runs, their params (text, parsed into
numbers where they are numbers) and their names come from the client's ``search_runs`` (in the
order they started, names breaking ties); a run's
id in the runs table is its name (``mlflow.runName``) when the names are unique, else MLflow's
run id.

Metric histories come from the client's ``get_metric_history``, one call per run and metric,
except in an SQLite store, which is read with one SQL query on its ``metrics`` table: measured
on 50 runs x 1,000 steps, the client took 1.8 s and the query 0.05 s, so 1,000 runs would take
the client half a minute (``benchmarks/bench_readers.py`` times both).
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jaxscale.runs.logged import STEP, TAG, VALUE, Logged, config_value, scalars_frame

SQLITE_MAGIC = b"SQLite format 3\x00"
_PAGE = 1000  # runs per search_runs page


def tracking_uri(source: str | Path) -> str:
    """The tracking URI of ``source``: a URI as given, an SQLite file as ``sqlite:///ABS``, a
    directory as ``file:///ABS`` (a file store)."""
    text = str(source)
    if "://" in text:
        return text
    path = Path(text).resolve()
    if path.is_dir():
        return path.as_uri()
    return f"sqlite:///{path}"


def read_mlflow(source: str | Path, metrics: tuple[str, ...] | None = None, experiment: str | None = None,
                bulk_sql: bool = True) -> Logged:
    """Every run's params and metric histories in the MLflow store ``source`` (:func:`tracking_uri`).

    Args:
        source: a tracking URI, an SQLite file or a file-store directory.
        metrics: the metric keys to read (default: every key any run logged).
        experiment: read only this experiment (its name); default every active one.
        bulk_sql: read an SQLite store's histories with one query (False: through the client).

    Raises:
        ValueError: naming the URI when it holds no run (or no such experiment).
    """
    from mlflow.exceptions import MlflowException

    logging.getLogger("mlflow").setLevel(logging.WARNING)  # its store migrations log at INFO
    uri = tracking_uri(source)
    try:
        return _read(uri, metrics, experiment, bulk_sql)
    except MlflowException as err:  # the store's own refusal, as one line naming it
        raise ValueError(f"{uri}: {str(err.message).splitlines()[0]}") from None


def _read(uri: str, metrics: tuple[str, ...] | None, experiment: str | None, bulk_sql: bool) -> Logged:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    runs = _runs(client, uri, experiment)
    names = [run.info.run_name or run.info.run_id for run in runs]
    unique = len(set(names)) == len(names)
    ids = {run.info.run_id: (name if unique else run.info.run_id) for run, name in zip(runs, names)}
    configs = {ids[run.info.run_id]: {k: config_value(v) for k, v in run.data.params.items()} for run in runs}
    keys = set(metrics) if metrics is not None else {k for run in runs for k in run.data.metrics}
    if bulk_sql and uri.startswith("sqlite:///"):
        scalars = _histories_sql(uri.removeprefix("sqlite:///"), ids, keys)
    else:
        scalars = _histories_client(client, runs, ids, keys)
    places = {name: f"{uri} run {run_id}" for run_id, name in ids.items()}
    return Logged("mlflow", uri, scalars, configs, places)


def _runs(client: Any, uri: str, experiment: str | None) -> list[Any]:
    from mlflow.entities import ViewType

    experiments = client.search_experiments(view_type=ViewType.ACTIVE_ONLY)
    if experiment is not None:
        experiments = [e for e in experiments if e.name == experiment]
        if not experiments:
            raise ValueError(f"{uri}: no experiment named {experiment!r}")
    ids = [e.experiment_id for e in experiments]
    runs, token = [], None
    while ids:
        page = client.search_runs(ids, max_results=_PAGE, page_token=token, order_by=["attributes.start_time ASC"])
        runs.extend(page)
        token = page.token
        if not token:
            break
    if not runs:
        raise ValueError(f"{uri}: no MLflow runs in this store")
    return sorted(runs, key=lambda run: (run.info.start_time or 0, run.info.run_name or "", run.info.run_id))


def _histories_client(client: Any, runs: list[Any], ids: dict[str, str], keys: set[str]) -> pd.DataFrame:
    run_col, tags, steps, values = [], [], [], []
    for run in runs:
        for key in sorted(keys & set(run.data.metrics)):
            history = sorted(client.get_metric_history(run.info.run_id, key), key=lambda m: m.timestamp)
            for metric in history:
                run_col.append(ids[run.info.run_id])
                tags.append(key)
                steps.append(metric.step)
                values.append(metric.value)
    return scalars_frame(run_col, tags, steps, values)


def _histories_sql(path: str, ids: dict[str, str], keys: set[str]) -> pd.DataFrame:
    """The metrics table of an SQLite store, in logged order (timestamp, then insertion), NaN
    where MLflow flagged one (``is_nan``)."""
    marks = ",".join("?" * len(keys))
    query = (f"SELECT run_uuid, key, step, CASE WHEN is_nan THEN NULL ELSE value END FROM metrics "
             f"WHERE key IN ({marks}) ORDER BY run_uuid, key, timestamp, rowid")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        rows = connection.execute(query, sorted(keys)).fetchall()
    frame = pd.DataFrame(rows, columns=["uuid", TAG, STEP, VALUE])
    position = {uuid: i for i, uuid in enumerate(ids)}  # the runs' order, as the client lists them
    frame = frame[frame["uuid"].isin(list(ids))]
    frame = frame.iloc[np.argsort(frame["uuid"].map(position).to_numpy(), kind="stable")]
    return scalars_frame(frame["uuid"].map(ids).tolist(), frame[TAG].tolist(),
                         frame[STEP].astype(float).tolist(), frame[VALUE].astype(float).tolist())


def is_sqlite_file(path: Path) -> bool:
    """True for an SQLite database file (its 16-byte header)."""
    with path.open("rb") as fh:
        return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC

