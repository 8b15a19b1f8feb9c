"""Evaluations come in long or wide and leave as one long table; bad input is refused in one line
naming the row, column or option."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jaxscale.accuracy.evaluations import read_evaluations
from jaxscale.accuracy.forecast import forecast
from jaxscale.accuracy.ladder import task_ladder
from jaxscale.accuracy.synthetic_ladder import INTERMEDIATE, TASK, draw_ladder


def _wide() -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "b", "c"], "N": [1e8, 2e8, 4e8], "D": [1e10] * 3,
                         "piqa": [0.6, 0.63, 0.66], "piqa_stderr": [0.01] * 3, "lambada:ppl": [30.0, 20.0, 12.0]})


def test_a_wide_table_reads_as_the_long_one():
    long = read_evaluations(_wide())
    piqa = long[long.task == "piqa"]
    assert list(piqa.metric.unique()) == ["acc"] and list(piqa.value) == [0.6, 0.63, 0.66]
    assert list(piqa.stderr) == [0.01] * 3 and list(piqa.n_params) == [1e8, 2e8, 4e8]
    ppl = long[long.task == "lambada"]
    assert list(ppl.metric.unique()) == ["ppl"] and ppl.stderr.isna().all()
    ladder = task_ladder(long, "piqa", intermediate="lambada:ppl")
    np.testing.assert_allclose(ladder.final_loss, np.log([30.0, 20.0, 12.0]))
    assert ladder.chance == 0.5 and ladder.models == ("a", "b", "c")


def _shots_table() -> pd.DataFrame:
    return pd.DataFrame({"model": ["a"] * 3, "n_params": [1e8] * 3, "tokens": [1e10] * 3, "step": [5] * 3,
                         "shots": [0, 5, 5], "task": ["piqa"] * 3, "metric": ["acc"] * 3, "value": [0.6, 0.7, 70.0],
                         "stderr": [0.01] * 3})


def test_a_long_table_keeps_the_rows_of_one_number_of_shots():
    frame = _shots_table().iloc[:2]
    assert list(read_evaluations(frame).value) == [0.6]
    assert list(read_evaluations(frame, shots=5).value) == [0.7]
    with pytest.raises(ValueError) as err:
        read_evaluations(frame, shots=3)
    assert str(err.value) == "--shots 3: no row was evaluated with 3 shots (column shots holds 0, 5)"


def test_a_bad_row_is_named_by_its_place_in_the_file_whatever_the_shots_kept():
    assert list(read_evaluations(_shots_table()).value) == [0.6]  # the bad five-shot row is not read
    with pytest.raises(ValueError, match="row 3: acc of piqa is 70, outside"):
        read_evaluations(_shots_table(), shots=5)


@pytest.mark.parametrize("change, message", [
    (lambda w: w.assign(piqa=[0.6, 63.0, 0.66]), "row 2: acc of piqa is 63, outside [0, 1]"),
    (lambda w: w.drop(columns="D"), "column 'tokens' (or 'D') is missing"),
    (lambda w: w.assign(N=[1e8, np.nan, 4e8]), "row 2: n_params is empty or not a number"),
    (lambda w: w.assign(piqa_stderr=[0.01, -0.01, 0.01]), "row 2: stderr of piqa is -0.01"),
    (lambda w: w[["N", "D"]], "the table has no task column"),
])
def test_bad_tables_are_refused_naming_the_row_or_column(change, message):
    with pytest.raises(ValueError, match=None) as err:
        read_evaluations(change(_wide()))
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("options, message", [
    ({"task": "my_task"}, "task 'my_task' has no known chance level; give it with --chance"),
    ({"metric": "ppl"}, "--metric 'ppl' is a loss, not an accuracy"),
    ({"target": (5e8, 3e11)}, "--target N=5e+08 is inside the ladder"),
    ({"target": (2.8e9, 1e12)}, "--target D=1e+12: the ladder's finished runs all have D=3e+11"),
    ({"form": "direct-nd"}, "--form direct-nd (across ratios) needs finished runs at several D"),
    ({"form": "nope"}, "--form 'nope' is not a form"),
])
def test_bad_questions_are_refused(options, message):
    frame = draw_ladder(0).frame
    frame = frame[frame.n_params <= 1e9]
    options = {"task": TASK, "target": (2.8e9, 3e11), "intermediate": INTERMEDIATE, "chance": 0.25, "resamples": 2,
               **options}
    if options["task"] != TASK:
        options.pop("chance")
        frame = frame.assign(task=frame.task.replace(TASK, options["task"]))
    with pytest.raises(ValueError) as err:
        forecast(frame, options.pop("task"), options.pop("target"), **options)
    assert message in str(err.value)
