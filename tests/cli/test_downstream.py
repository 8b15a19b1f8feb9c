"""``jaxscale downstream``: its JSON is the verb's ``to_dict()``, it writes its figures, and bad
input is refused with one line and exit 2."""

from __future__ import annotations

import json

import pytest

import jaxscale as js
from jaxscale.accuracy import synthetic_ladder as sl
from tests.cli.test_design_compare import run_cli


@pytest.fixture(scope="module")
def ladder_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("downstream") / "evals.csv"
    sl.draw_ladder(0).frame.to_csv(path, index=False)
    return path


OPTIONS = ["--task", sl.TASK, "--chance", "0.25", "--intermediate", sl.INTERMEDIATE, "--max-n", "1e9",
           "--target", "2.8e9,3e11", "--bootstrap", "2"]


def test_the_json_is_the_verbs_and_the_figures_are_written(tmp_path, capsys, ladder_csv):
    code, out, err = run_cli(capsys, "downstream", ladder_csv, *OPTIONS, "--out", tmp_path / "o", "--json")
    assert code == 0, err
    printed = json.loads(out)
    files = printed.pop("files")
    assert sorted(p.rsplit("/", 1)[1] for p in files) == ["downstream.png", "downstream_stage2.png"]
    result = js.downstream(ladder_csv, sl.TASK, target=(2.8e9, 3e11), chance=0.25, intermediate=sl.INTERMEDIATE,
                           max_n=1e9, bootstrap=2)
    expected = result.to_dict()
    printed.pop("seconds"), expected.pop("seconds")
    assert printed == expected
    assert printed["recipes"]["synthetic"]["predictable"] is True


@pytest.mark.parametrize("options, message", [
    (["--target", "2.8e9"], "argument --target: must be N,D"),
    (["--target", "5e8,3e11"], "--target N=5e+08 is inside the ladder"),
    (["--metric", "loss"], "--metric 'loss' is a loss, not an accuracy"),
    (["--chance", "1.5"], "argument --chance: must be a number in [0, 1]"),
    (["--baseline", "nope"], "--baseline 'nope' is not one of the recipes"),
    (["--shots", "-1"], "argument --shots: must be an integer >= 0"),
])
def test_bad_options_exit_2_with_one_line(capsys, ladder_csv, options, message):
    code, out, err = run_cli(capsys, "downstream", ladder_csv, *OPTIONS, *options)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_task_without_a_known_chance_asks_for_it(capsys, tmp_path, ladder_csv):
    code, _, err = run_cli(capsys, "downstream", ladder_csv, *[o for o in OPTIONS if o not in ("--chance", "0.25")])
    assert code == 2 and "has no known chance level; give it with --chance" in err
