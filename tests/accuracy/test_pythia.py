"""On Pythia's ladder up to 1B (``../shared/data/pythia_evals.csv``; skipped without it): MMLU,
LogiQA and WSC are not predictable from it by any form, each with its reason, and the six tasks
the benchmark scores are."""

from __future__ import annotations

from pathlib import Path

import pytest

import jaxscale as js

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "pythia_evals.csv"
TARGET = (2.8e9, 3e11)


@pytest.fixture(scope="module")
def evaluations():
    if not DATA.exists():
        pytest.skip(f"{DATA} not present (a clone without ../shared/data)")
    from jaxscale.accuracy.evaluations import read_evaluations

    return read_evaluations(DATA)


@pytest.mark.parametrize("form", ["two-step", "log-compute", "direct"])
@pytest.mark.parametrize("task", ["mmlu", "logiqa", "wsc"])
def test_tasks_at_chance_are_not_predictable_by_any_form(evaluations, task, form):
    result = js.downstream(evaluations, task, target=TARGET, form=form, max_n=1.1e9, baseline="pile")
    numbers = result.to_dict()
    for data in ("pile", "deduped"):
        recipe = numbers["recipes"][data]
        assert recipe["predictable"] is False and recipe["prediction"] is None and recipe["interval"] is None
        assert "at or below chance at the largest rung" in recipe["reason"]
    assert "not predictable from this ladder" in result.text()
    assert numbers["multipliers"]["deduped"]["k"] is None


def test_the_six_scored_tasks_are_predictable(evaluations):
    from jaxscale.accuracy.ladder import task_ladder
    from jaxscale.accuracy.verdict import judge

    small = evaluations[evaluations.n_params <= 1.1e9]
    for data in ("pile", "deduped"):
        for task in ("arc_easy", "arc_challenge", "lambada_openai", "piqa", "sciq", "winogrande"):
            assert judge(task_ladder(small, task, data=data)).predictable, (data, task)
