"""`sweep --status`: what a sweep has done and the device-minutes it has left, from its directory alone."""

import contextlib
import dataclasses
import io
import json
import math

import pytest

import jaxscale as js

from jaxscale.cli import main
from jaxscale.lm import presets
from jaxscale.lm import train as lm
from jaxscale.lm.sweep import DIVERGED_FILE, run_spec
from jaxscale.lm.sweep_status import sweep_status

CFG = presets.SMOKE
VOCAB = 500  # the tokenizer's, read back from the runs' spec files (not the config's 512)


def _run(out, size, lr, kind, fraction=1.0, step=0, done=False, diverged=False, rate=None):
    spec = run_spec(CFG, size, VOCAB, lr, kind, fraction)
    directory = out / "runs" / spec.run_id
    (directory / "checkpoints").mkdir(parents=True)
    (directory / lm.SPEC_FILE).write_text(json.dumps(dataclasses.asdict(spec), default=str))
    if step:
        (directory / "checkpoints" / str(step)).mkdir()
    if done:
        (directory / lm.DONE_FILE).write_text("{}")
    if diverged:
        (directory / DIVERGED_FILE).write_text("{}")
    if rate:
        (directory / lm.RATE_FILE).write_text(json.dumps({"run_updates_per_s": rate, "runs_together": 2,
                                                          "seconds": 10.0, "device": "1 x cpu"}))
    return spec.schedule.total_steps


def test_status_counts_runs_and_minutes_left_at_the_measured_rate(tmp_path):
    xs, s, m = CFG.sizes
    steps_a = _run(tmp_path, xs, 0.003, "constant", done=True)
    steps_b = _run(tmp_path, xs, 0.01, "constant", step=40, rate=5.0)
    _run(tmp_path, s, 0.003, "constant", step=20, diverged=True)
    status = sweep_status(CFG, tmp_path)
    first, second, third = status.sizes
    cosine = sum(run_spec(CFG, xs, VOCAB, 0.003, "cosine", f).schedule.total_steps for f in CFG.budget_fractions)
    assert (first.runs_planned, first.runs_finished, first.runs_diverged) == (8, 1, 0)  # 2 rates + 6 budgets
    assert first.updates_done == steps_a + 40
    assert first.updates_left == steps_b - 40 + cosine
    assert first.minutes_left == pytest.approx(first.updates_left / 5.0 / 60.0)
    assert (second.runs_diverged, second.minutes_left) == (1, None)  # never measured: undefined
    assert third.updates_done == 0 and third.minutes_left is None
    assert status.minutes_left == pytest.approx(first.minutes_left) and status.unmeasured == ["s", "m"]
    assert "at least" in status.text() and "no rate yet for s, m" in status.text()


def test_cli_status_trains_nothing_and_prints_json(tmp_path):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["sweep", "--preset", "smoke", "--out", str(tmp_path / "none"), "--status", "--json",
                     "--corpus", __file__]) == 0
    report = json.loads(buffer.getvalue())
    assert report["unmeasured"] == ["xs", "s", "m"] and not (tmp_path / "none").exists()


def test_status_of_another_sweeps_directory_is_refused(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"name": "cpu"}))
    assert main(["sweep", "--preset", "smoke", "--out", str(tmp_path), "--status", "--corpus", __file__]) == 2
    assert "holds the sweep 'cpu', not 'smoke'" in capsys.readouterr().err


def test_time_left_is_undefined_while_no_size_with_updates_left_has_a_rate(tmp_path):
    """A size that is done counts 0 minutes; the others, never measured, leave the total undefined
    (it was 0.0 in the summary and JSON, a number where the text said undefined)."""
    xs, _, _ = CFG.sizes
    for lr in CFG.learning_rates:
        _run(tmp_path, xs, lr, "constant", done=True)
    for fraction in CFG.budget_fractions:
        _run(tmp_path, xs, CFG.learning_rates[0], "cosine", done=True, fraction=fraction)
    status = sweep_status(CFG, tmp_path)
    assert status.sizes[0].minutes_left == 0.0 and status.minutes_left is None
    assert status.to_dict()["minutes_left"] is None and "time left undefined" in status.text()
    total = js.sweep_status(CFG, out=tmp_path).summary().set_index("quantity").loc["minutes left"]  # a SweepConfig given
    assert math.isnan(total["estimate"]) and not total["lower_bound"]
