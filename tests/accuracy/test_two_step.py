"""The two-step form on ladders drawn from its own law: the parameters come back, the intervals
cover, the verdict passes a task that moves and fails one at chance, and the multiplier between a
recipe and the same recipe worth twice the parameters is 2."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jaxscale.accuracy import synthetic_ladder as sl
from jaxscale.accuracy.forecast import forecast, multiplier
from jaxscale.accuracy.ladder import task_ladder
from jaxscale.accuracy.two_step import fit_two_step
from jaxscale.accuracy.verdict import judge

TARGET = (2.8e9, sl.TOKENS)


def _ladder_only(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame.n_params <= max(sl.LADDER)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_both_stages_recover_their_truth(seed):
    ladder = sl.draw_ladder(seed, n_questions=50_000)
    fit = fit_two_step(task_ladder(_ladder_only(ladder.frame), sl.TASK, chance=0.25, intermediate=sl.INTERMEDIATE),
                       resamples=2)
    t = sl.TWO_STEP_TRUTH
    assert float(fit.stage1.params.alpha) == pytest.approx(t["alpha"], rel=0.05)
    assert float(fit.stage1.params.A) == pytest.approx(t["A"], rel=0.15)
    assert float(fit.stage2.params.k) == pytest.approx(t["k"], rel=0.05)
    assert np.log(float(fit.stage2.params.B)) == pytest.approx(np.log(t["B"]), rel=0.05)
    assert float(fit.predict(np.array([2.8e9]))[0]) == pytest.approx(ladder.truth[2.8e9], abs=0.01)


def test_the_verdict_passes_a_moving_task_and_fails_one_at_chance():
    frame = _ladder_only(sl.draw_ladder(0).frame)
    assert judge(task_ladder(frame, sl.TASK, chance=0.25, intermediate=sl.INTERMEDIATE)).predictable
    rng = np.random.default_rng(0)
    is_task = frame.task == sl.TASK
    at_chance = frame.assign(value=np.where(is_task, rng.binomial(2000, 0.25, len(frame)) / 2000, frame.value))
    verdict = judge(task_ladder(at_chance, sl.TASK, chance=0.25, intermediate=sl.INTERMEDIATE))
    assert not verdict.predictable and "no signal above the evaluations' noise" in verdict.reason
    assert "at or below chance at the largest rung" in verdict.reason
    f = forecast(at_chance, sl.TASK, TARGET, chance=0.25, intermediate=sl.INTERMEDIATE, resamples=2)
    assert f.prediction is None and f.fit is None


@pytest.mark.parametrize("form", ["two-step", "direct"])
def test_a_recipe_worth_twice_the_parameters_has_multiplier_two(form):
    """Recipe B scores at N what A scores at 2N (the same evaluations, B's sizes halved): k = 2, and
    in every paired draw too (both bootstraps draw the same noise, so B's refits are A's, shifted)."""
    frame = _ladder_only(sl.draw_ladder(3).frame)
    options = dict(chance=0.25, intermediate=sl.INTERMEDIATE, resamples=2, form=form)
    a = forecast(frame, sl.TASK, TARGET, **options)
    b = forecast(frame.assign(n_params=frame.n_params / 2), sl.TASK, TARGET, **options)
    k = multiplier(a, b)
    assert k["k"] == pytest.approx(2.0, rel=1e-6)
    assert k["lower"] == pytest.approx(2.0, rel=1e-6) and k["upper"] == pytest.approx(2.0, rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("form", ["two-step", "direct"])
def test_ninety_percent_intervals_cover_held_out_rungs_85_to_95_percent(form):
    """The declared synthetic benchmark (50 seeds, 100 held-out rungs per truth)."""
    from benchmarks.bench_downstream_synthetic import run

    result = run(50)[form]
    assert 0.85 <= result["coverage"] <= 0.95


@pytest.mark.slow
def test_the_joint_posterior_of_both_stages_holds_the_truth():
    import jaxscale as js

    ladder = sl.draw_ladder(0)
    result = js.downstream(_ladder_only(ladder.frame), sl.TASK, target=TARGET, chance=0.25,
                           intermediate=sl.INTERMEDIATE, bootstrap=50, bayes=True, chains=1, samples=300)
    lower, upper = result.to_dict()["recipes"]["synthetic"]["posterior"]["interval"]
    assert lower <= ladder.truth[2.8e9] <= upper


@pytest.mark.parametrize("lower, upper, chance, defined", [
    (0.60, 0.66, 0.25, True), (0.30, 0.67, 0.25, True), (0.234, 1.0, 0.25, False), (0.2, 0.8, 0.0, False),
    (0.5, float("nan"), 0.5, False)])
def test_an_interval_over_half_the_range_from_chance_leaves_the_prediction_undefined(lower, upper, chance, defined):
    from jaxscale.accuracy.forecast import undetermined

    why = undetermined(lower, upper, chance)
    assert (why is None) == defined
    if not defined:
        assert why.startswith("undefined: the ladder does not determine it")
