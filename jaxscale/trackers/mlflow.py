"""MLflow tracking stores: every run of every active experiment, its params and metric histories.

A store is named by a tracking URI: ``sqlite:///path/mlflow.db`` (MLflow 3's local store), a
tracking server (``http://host:5000``), ``file:///path/mlruns`` or an ``mlruns`` directory (the
old file store, read by MLflow 3 too: :data:`_READING` allows it for the read, and only then),
or the path of an SQLite file itself.

Reading creates nothing: a local store that does not exist (a mistyped path) is an error, not a
new empty store, and an SQLite file must hold MLflow's tables; a damaged or locked SQLite file is
one line naming it. A tracking server that does not answer fails in seconds (:data:`_READING`: a
request timeout and one retry, where the user's environment sets none).

Runs, their params (text, parsed into numbers where they are numbers) and their names come from
the client's ``search_runs`` (in the order they started, names breaking ties); a run's id in the
runs table is its name (``mlflow.runName``) when the names are unique, else MLflow's run id.

Metric histories come from the client's ``get_metric_history``, one call per run and metric,
except in an SQLite store, whose ``metrics`` table is read in SQL straight into numpy columns
(one indexed query per run and metric, numbers only): the client builds a Python object per
point, about 0.1 ms each, so 1,000 runs x 1,000 steps take it minutes (``benchmarks/bench_readers.py``
times both).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd

from jaxscale.trackers.logged import Logged, Reader, config_value, scalars_frame

SQLITE_MAGIC = b"SQLite format 3\x00"
#: MLflow's environment while a store is read (values the user's environment sets are kept):
#: the file store allowed (MLflow 3 refuses it unless told), and a tracking server's requests
#: given 10 s each and one retry (MLflow's defaults, 120 s and 7 retries with backoff, take
#: minutes to give up on a server that does not answer).
_READING = {"MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
            "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1"}
#: Tables every MLflow SQLite store holds.
_MLFLOW_TABLES = ("experiments", "runs", "metrics", "params")
_LOCK_WAIT_S = 2.0  # how long the check of an SQLite file waits for another process's write
_PAGE = 1000  # runs per search_runs page
_HISTORY = np.dtype([("step", np.float64), ("value", np.float64), ("is_nan", np.bool_)])


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
        bulk_sql: read an SQLite store's histories in SQL (False: through the client).

    Raises:
        ValueError: naming the URI when it holds no run (or no such experiment).
    """
    from mlflow.exceptions import MlflowException

    logging.getLogger("mlflow").setLevel(logging.WARNING)  # its store migrations log at INFO
    uri = tracking_uri(source)
    _check_local_store(uri)
    try:
        with _environment(_READING):
            return _read(uri, metrics, experiment, bulk_sql)
    except MlflowException as err:  # the store's own refusal, as one line naming it
        raise ValueError(f"{uri}: {str(err.message).splitlines()[0]}") from None
    except _store_errors() as err:  # a store damaged or locked while it was read
        raise ValueError(f"{uri}: {_database_error(err)}") from None


def _store_errors() -> tuple[type[Exception], ...]:
    """The exceptions of a database store failing under the client: SQLite's, and SQLAlchemy's
    where MLflow has it (``mlflow-skinny`` has no database stores)."""
    try:
        from sqlalchemy.exc import SQLAlchemyError
    except ImportError:
        return (sqlite3.DatabaseError,)
    return (SQLAlchemyError, sqlite3.DatabaseError)


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """The environment variables ``values`` set where the environment does not set them, for the
    ``with`` block only."""
    added = [name for name in values if name not in os.environ]
    os.environ.update({name: values[name] for name in added})
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _check_local_store(uri: str) -> None:
    """Refuse, before MLflow opens it (and would create it), a local store that is not there:
    an SQLite path that is no MLflow database (no file, not SQLite, damaged, without MLflow's
    tables, locked by a writer), a file-store directory without experiments.

    Raises:
        FileNotFoundError: no such file or directory.
        ValueError: one line naming the path and what is wrong.
    """
    if uri.startswith("sqlite:///"):
        _check_sqlite(Path(uri.removeprefix("sqlite:///").split("?", 1)[0]))
    elif uri.startswith("file://"):
        path = Path(unquote(urlparse(uri).path))
        if not path.is_dir():
            raise FileNotFoundError(f"{path}: no such MLflow file store (directory)")
        if not _is_file_store(path):
            raise ValueError(f"{path}: not an MLflow file store (no experiment: */meta.yaml)")


def _check_sqlite(path: Path) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such MLflow database file")
    if not is_sqlite_file(path):
        raise ValueError(f"{path}: not an SQLite file (an MLflow database starts with {SQLITE_MAGIC[:-1].decode()!r})")
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=_LOCK_WAIT_S)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as err:
        raise ValueError(f"{path}: {_database_error(err)}") from None
    finally:
        connection.close()
    missing = [table for table in _MLFLOW_TABLES if table not in tables]
    if missing:
        raise ValueError(f"{path}: an SQLite file but not an MLflow database (no {', '.join(missing)} table)")


def _database_error(err: Exception) -> str:
    """What SQLite said of a file it could not read, as one line with what it means."""
    text = str(getattr(err, "orig", None) or err).splitlines()[0]
    if "locked" in text:
        return f"{text} (another process is writing to it; read it when that has finished)"
    if "malformed" in text or "not a database" in text:
        return f"{text} (the file is damaged or cut short)"
    return text


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
        scalars = _histories_sql(uri.removeprefix("sqlite:///"), runs, ids, keys)
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


def _histories_sql(path: str, runs: list[Any], ids: dict[str, str], keys: set[str]) -> pd.DataFrame:
    """The metric histories of an SQLite store read from its ``metrics`` table, one query per run
    and metric (found through the table's index on run_uuid), each in logged order
    (timestamp, then insertion), NaN where MLflow flagged one (``is_nan``); only numbers cross
    from SQLite into numpy columns."""
    query = ("SELECT step, value, is_nan FROM metrics WHERE run_uuid = ? AND +key = ? "  # +key: not the key's index
             "ORDER BY timestamp, rowid")
    names = list(ids.values())
    tags = sorted(keys)
    histories, run_codes, tag_codes = [], [], []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        for run in runs:
            for code, key in enumerate(tags):
                if key not in run.data.metrics:
                    continue
                history = np.fromiter(connection.execute(query, (run.info.run_id, key)), _HISTORY)
                histories.append(history)
                run_codes.append(np.full(len(history), names.index(ids[run.info.run_id])))
                tag_codes.append(np.full(len(history), code))
    rows = np.concatenate(histories) if histories else np.zeros(0, _HISTORY)
    run_code = np.concatenate(run_codes) if run_codes else np.zeros(0, np.int64)
    tag_code = np.concatenate(tag_codes) if tag_codes else np.zeros(0, np.int64)
    return scalars_frame(pd.Categorical.from_codes(run_code, categories=names),
                         pd.Categorical.from_codes(tag_code, categories=tags),
                         rows["step"], np.where(rows["is_nan"], np.nan, rows["value"]))


def is_sqlite_file(path: Path) -> bool:
    """True for an SQLite database file (its 16-byte header)."""
    with path.open("rb") as fh:
        return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def _is_file_store(path: Path) -> bool:
    return next(path.glob("*/meta.yaml"), None) is not None


READER = Reader("mlflow", read_mlflow, "an MLflow store (an SQLite file, an mlruns directory, a tracking URI)",
                claims_file=is_sqlite_file, claims_directory=_is_file_store,
                schemes=("sqlite", "http", "https", "file", "databricks"), modules=("mlflow",))
