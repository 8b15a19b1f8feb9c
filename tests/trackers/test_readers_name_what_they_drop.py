"""Readers say what they dropped and refuse what they cannot read in one line: event files cut
short or empty, MLflow parameters that are not sizes, SQLite files damaged, locked or mistyped,
a tracking server that does not answer (issue 37, items 10-12). Nothing is created by reading."""

from __future__ import annotations

import shutil
import socket
import sqlite3
import time
import warnings
from pathlib import Path

import pytest

from jaxscale.cli import main
from jaxscale.tables.table import read_runs_table
from tests.trackers import trackers

pytest.importorskip("tensorboard")
pytest.importorskip("mlflow")


def _runs_exit_2(source, capsys) -> str:
    """``jaxscale runs SOURCE``: exit 2 and one line on stderr, returned."""
    assert main(["runs", str(source)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def _loaded_with_warnings(source):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_runs_table(source, sizes_vary=False, min_rows=1)
    return table, [str(w.message) for w in caught]


def test_an_event_file_cut_in_half_is_named_with_what_was_read(tmp_path):
    cfg, _ = trackers.curves()["d32-l2-h400"]
    points = [(s, 5.0 - s / 1000) for s in range(100, 2001, 100)]  # 20 checkpoints
    root = trackers.write_tensorboard(tmp_path / "tb", {"cut": (cfg, points)})
    path = max(root.rglob("*tfevents*"), key=lambda p: p.stat().st_size)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    table, messages = _loaded_with_warnings(root)
    line = next(m for m in messages if str(path) in m)
    assert "cut short at byte" in line and f"of {len(data) // 2}" in line
    assert [d for d in table.report.dropped if str(path) in d] == [line.split(": ", 1)[1]]
    assert 0 < table.report.runs[0].points < 20


def test_an_empty_event_file_names_the_file_and_its_run_is_left_out_by_name(tmp_path):
    runs = dict(list(trackers.curves().items())[:3])
    root = trackers.write_tensorboard(tmp_path / "tb", runs)
    (root / "empty").mkdir()
    empty = root / "empty" / "events.out.tfevents.1700000000.host"
    empty.write_bytes(b"")
    table, messages = _loaded_with_warnings(root)
    assert any(str(empty) in m and "empty event file (0 bytes)" in m for m in messages)
    assert table.report.excluded == {"empty": "no 'val/loss' metric logged"}
    assert any("run empty left out" in m for m in messages)


def test_mlflow_params_that_are_not_sizes_are_named(tmp_path):
    sizes = {"a": 2e6, "b": "10M", "c": -5e6, "d": 8e6}  # logged sizes, no architecture to count instead
    points = [(s, 5.0 - s / 1000) for s in range(100, 1001, 100)]
    runs = {name: ({"params": size, "tokens_per_step": 2048}, points) for name, size in sizes.items()}
    names = ["b", "c"]
    path = trackers.write_mlflow(tmp_path / "mlflow.db", runs)
    table, messages = _loaded_with_warnings(path)
    assert table.report.excluded == {names[0]: "its model size params = '10M' is not a number of parameters > 0",
                                     names[1]: "its model size params = -5000000.0 is not a number of parameters > 0"}
    assert sum("params = " in m for m in messages) == 2
    counted = {"e": ({**trackers.config(64, 2, 400), "params": "10M"}, points)}  # an architecture to count instead
    table, messages = _loaded_with_warnings(trackers.write_mlflow(tmp_path / "counted.db", counted))
    assert not table.report.excluded
    assert any("run e: its model size params = '10M'" in m and "counted from its architecture" in m for m in messages)


@pytest.fixture(scope="module")
def written_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("mlflow") / "mlflow.db"  # written elsewhere: this process caches no store of it
    trackers.in_a_fresh_process(f"trackers.write_mlflow(__import__('pathlib').Path({str(path)!r}), "
                                "dict(list(trackers.curves().items())[:3]))")
    return path


@pytest.fixture
def mlflow_db(written_db, tmp_path):
    return Path(shutil.copy(written_db, tmp_path / "mlflow.db"))


def test_a_truncated_sqlite_store_is_one_line(mlflow_db, capsys):
    data = mlflow_db.read_bytes()
    mlflow_db.write_bytes(data[: len(data) // 9])
    assert "malformed" in _runs_exit_2(mlflow_db, capsys)


def test_a_locked_sqlite_store_is_one_line_in_seconds(mlflow_db, capsys):
    writer = sqlite3.connect(mlflow_db, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("UPDATE runs SET name = name")
        start = time.perf_counter()
        err = _runs_exit_2(mlflow_db, capsys)
        assert time.perf_counter() - start < 10
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert "database is locked" in err and "another process is writing" in err
    assert main(["runs", str(mlflow_db)]) == 0  # once the writer is done


@pytest.mark.parametrize("spelling", ["uri", "path", "file uri"])
def test_a_mistyped_store_is_not_created(tmp_path, capsys, spelling):
    missing = tmp_path / ("mlruns" if spelling == "file uri" else "mistyped.db")
    source = {"uri": f"sqlite:///{missing}", "path": str(missing), "file uri": missing.as_uri()}[spelling]
    assert "no such" in _runs_exit_2(source, capsys)
    assert not missing.exists() and list(tmp_path.iterdir()) == []


def test_an_sqlite_file_of_another_program_is_left_as_it_was(tmp_path, capsys):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (text)")
    before = path.read_bytes()
    assert "not an MLflow database" in _runs_exit_2(path, capsys)
    assert path.read_bytes() == before


def test_a_tracking_server_that_does_not_answer_fails_in_seconds(capsys):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.perf_counter()
    err = _runs_exit_2(f"http://127.0.0.1:{port}/", capsys)
    assert time.perf_counter() - start < 30
    assert f"127.0.0.1:{port}" in err
