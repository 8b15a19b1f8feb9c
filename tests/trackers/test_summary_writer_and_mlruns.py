"""Runs logged the usual ways fit to the same parameters as the same runs in a CSV: a TensorBoard
directory written by the ``SummaryWriter`` API (``add_scalar`` per step, then ``add_hparams``,
whose summaries go into a sub-directory of each run) and an ``mlruns`` file store, which MLflow 3
refuses unless told and which reading leaves as it was (issue 37, items 1 and 3)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import jaxscale as js
from jaxscale.tables.table import read_runs_table
from tests.trackers import trackers

pytest.importorskip("mlflow")
pytest.importorskip("tensorboard")

NAMES = ("A", "B", "E", "alpha", "beta")


def _parameters(source) -> np.ndarray:
    fitted = js.fit(js.load_runs(source))
    return np.array([getattr(fitted.params, name) for name in NAMES])


@pytest.fixture(scope="module")
def from_the_csv(tmp_path_factory):
    path = trackers.write_law_csv(tmp_path_factory.mktemp("csv") / "runs.csv", trackers.chinchilla_runs())
    return _parameters(path)


def _listing(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*"))


def test_summary_writer_logs_with_add_hparams_fit_as_the_csv(tmp_path, from_the_csv):
    pytest.importorskip("tensorboardX", reason="tensorboardX writes PyTorch's SummaryWriter layout (its [test] extra)")
    runs = trackers.chinchilla_runs()
    name = next(iter(runs))
    root = trackers.write_summary_writer(tmp_path / "tb", runs)
    assert all(len(list((root / name).glob("*/*tfevents*"))) == 1 for name in runs)  # add_hparams' sub-directory
    table = js.load_runs(root)
    assert sorted(line.run_id for line in table.report.runs) == sorted(runs)  # one run each, not two
    assert not table.report.excluded and not table.report.dropped
    assert len(table) == sum(len(points) for _, points in runs.values())
    np.testing.assert_allclose(_parameters(root), from_the_csv, rtol=1e-8)
    np.testing.assert_allclose(from_the_csv, [trackers.CHINCHILLA[k] for k in NAMES], rtol=1e-3)  # the law put in
    one = read_runs_table(root / name, sizes_vary=False)  # one run's directory given: the run, its sub-directory merged
    assert [line.run_id for line in one.report.runs] == [name] and one.n[0] == runs[name][0]


def test_an_mlruns_store_fits_as_the_csv_and_reading_changes_nothing(tmp_path, monkeypatch, from_the_csv):
    root = tmp_path / "mlruns"
    # MLflow 3's client writes a file store only when told; written elsewhere, so that no store is cached here
    trackers.in_a_fresh_process(f"trackers.write_mlruns({str(root)!r}, trackers.chinchilla_runs())",
                                MLFLOW_ALLOW_FILE_STORE="true")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    before = _listing(root)
    np.testing.assert_allclose(_parameters(root), from_the_csv, rtol=1e-8)
    np.testing.assert_allclose(_parameters(root.as_uri()), from_the_csv, rtol=1e-8)
    assert _listing(root) == before
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ  # allowed for the read only


def test_a_run_nested_in_a_run_with_a_curve_of_its_own_stays_a_run(tmp_path):
    from jaxscale.trackers.tensorboard import read_tensorboard

    outer, inner = list(trackers.curves().items())[:2]
    root = trackers.write_tensorboard(tmp_path / "tb", {"a": outer[1], "a/b": inner[1]})  # both with hparams
    logged = read_tensorboard(root)
    assert sorted(logged.run_ids) == ["a", "a/b"] and logged.configs["a/b"]["d_model"] == inner[1][0]["d_model"]
