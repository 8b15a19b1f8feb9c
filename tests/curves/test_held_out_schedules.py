"""The fit rule of whole-curve laws chosen by holding one fitted schedule out, on synthetic curves."""

from __future__ import annotations

import numpy as np
import pytest

from jaxscale.curves import held_out_schedules as ho
from jaxscale.curves import multipower_fit as mc
from tests.curves.test_multipower_fit import FITTED, PREDICTED, TRUE, _table


def test_the_candidate_that_predicts_the_held_out_runs_best_is_chosen():
    # candidate c's error on held run r: a known table; "b" is best on average though not on every run
    known = {"a": {"x": 0.01, "y": 0.01, "z": 0.01}, "b": {"x": 0.002, "y": 0.003, "z": 0.013},
             "c": {"x": 0.001, "y": 0.02, "z": 0.02}}
    seen = []

    def score(candidate, others, held):
        seen.append((candidate, tuple(others), held))
        return np.full(3, known[candidate][held]) * np.array([1, -1, 1])

    choice = ho.choose(["a", "b", "c"], ["x", "y", "z"], score)
    assert choice.candidate == "b" and choice.scores.shape == (3, 3)
    assert ("b", ("y", "z"), "x") in seen and len(seen) == 9  # each run held out once, fitted on the others
    assert choice.half_width == pytest.approx(0.013)  # the 90% quantile of b's held-out |errors|


def test_a_tie_keeps_the_least_regularised_candidate_and_one_run_is_refused():
    choice = ho.choose([0.0, 1.0], ["x", "y"], lambda c, o, h: np.full(4, 0.01))
    assert choice.chosen == 0
    with pytest.raises(ValueError, match="at least two fitted runs"):
        ho.choose([0.0], ["x"], lambda c, o, h: np.zeros(1))


def test_every_held_out_run_weighs_the_same_in_the_interval():
    # a long run with small errors and a short one with large: pooled unweighted, the long one decides
    long, short = np.full(90, 0.001), np.full(10, 0.01)
    assert ho.weighted_quantile([long, short], 0.9) == pytest.approx(0.01)
    assert np.quantile(np.r_[long, short], 0.9) < 0.002
    assert ho.weighted_quantile([long, short], 0.4) == pytest.approx(0.001)


@pytest.mark.slow  # three fits of the law: tens of seconds on two cores
def test_a_heavy_penalty_holds_the_drop_at_its_centre_and_none_leaves_the_optimum():
    table, lrs = _table(noise=1e-3)
    plain = mc.fit_multipower(table, lrs, FITTED, PREDICTED)
    zero = mc.fit_multipower(table, lrs, FITTED, PREDICTED, penalty=ho.drop_penalty(0.0))
    assert zero.params == plain.params and zero.objective == plain.objective
    heavy = mc.fit_multipower(table, lrs, FITTED, PREDICTED, penalty=ho.drop_penalty(1e3)).params
    assert (np.log(heavy.C), heavy.beta, heavy.gamma) == pytest.approx(ho.CENTRE, abs=1e-3)
    assert heavy.L0 != pytest.approx(plain.params.L0, rel=1e-6)  # the free coordinates refitted around it


def test_the_rule_fits_predicts_and_covers_noisy_curves():
    table, lrs = _table(noise=1e-3)
    fit = ho.fit_multipower_held_out(table, lrs, FITTED, PREDICTED, penalties=(0.0, 1e3))
    summary = fit.summary()
    rule = summary["rule"]
    # the true drop (C 1.5, beta 0.5, gamma 0.7) is not the penalty's centre: holding it there predicts worse
    assert rule["chosen"] == 0.0 and rule["scores"][0]["score"] < rule["scores"][1]["score"]
    assert summary["run_mare"] < 1.5e-3
    # noise of 1e-3 (|e| has a 90% quantile of 1.6e-3): the intervals hold about 90% of the predicted points
    assert 0.8 <= summary["interval_coverage"] <= 0.99
    assert rule["interval_half_width"] == pytest.approx(1.65e-3, rel=0.3)
    assert set(fit.errors()["coverage"].index) and "predicted_lo" in fit.predictions


def test_a_candidate_with_an_undefined_held_out_prediction_is_not_chosen_and_reported_undefined():
    def score(candidate, others, held):
        return np.array([np.nan, 0.0]) if candidate == "bad" else np.full(2, 0.02)

    choice = ho.choose(["bad", "good"], ["x", "y"], score)
    assert choice.candidate == "good"
    numbers = choice.to_dict()
    assert numbers["scores"][0]["score"] is None and numbers["scores"][0]["per_run"] == [None, None]
