"""The sweep writes TensorBoard logs beside its runs table, and reading them back gives that table."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from jaxscale.cli import main
from jaxscale.lm import presets
from jaxscale.lm.sweep import RUNS_TABLE, TENSORBOARD_DIR
from jaxscale.tables.policy import LossPolicy
from jaxscale.tables.table import read_runs_table

pytest.importorskip("tensorboard")
CORPUS = Path(__file__).resolve().parents[3] / presets.SHARED_CORPUS  # ../shared/data beside the clone


def test_sweep_tensorboard_logs_read_back_as_its_runs_table(tmp_path):
    if not CORPUS.is_file():
        pytest.skip(f"corpus {CORPUS} not present (fresh clone without ../shared/data)")
    cfg = dataclasses.replace(presets.SMOKE, name="tb", sizes=(presets.ModelSize("xs", 1, 16, 1, 5),),
                              learning_rates=(0.003,), corpus=str(CORPUS), corpus_chars=200_000, bootstrap=10)
    path = tmp_path / "tb.json"
    path.write_text(json.dumps(cfg.to_dict()))
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one size: the fits say they have no exponent
        assert main(["sweep", str(path), "--out", str(out), "--json", "--no-progress"]) == 0
    csv = read_runs_table(out / RUNS_TABLE, sizes_vary=False, min_rows=1)
    # the smoke runs evaluate twice or three times: keep runs of any length
    logs = read_runs_table(out / TENSORBOARD_DIR, sizes_vary=False, min_rows=1, loss_policy=LossPolicy(min_points=1))
    assert sorted(p.name for p in (out / TENSORBOARD_DIR).iterdir()) == sorted(set(csv.run_id))
    order, expected = np.lexsort((logs.step, logs.run_id)), np.lexsort((csv.step, csv.run_id))
    for field in ("run_id", "step", "n", "n_nonembedding", "d", "c", "c_nonembedding"):
        np.testing.assert_array_equal(getattr(logs, field)[order], getattr(csv, field)[expected], err_msg=field)
    # TensorBoard keeps scalars as float32: the losses come back rounded to float32
    np.testing.assert_array_equal(logs.loss[order], csv.loss[expected].astype(np.float32).astype(np.float64))
    for column, kind in (("peak_lr", float), ("total_steps", float), ("warmup_steps", float), ("schedule", str)):
        np.testing.assert_array_equal(logs.frame[column].to_numpy()[order].astype(kind),
                                      csv.frame[column].to_numpy()[expected].astype(kind), err_msg=column)
