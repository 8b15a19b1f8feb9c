"""The loss policy and the curve checks, on curves whose answer is known by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jaxscale.tables.policy import (
    LossPolicy,
    apply_policy,
    as_policy,
    check_curve,
    chosen_rows,
)


def test_a_restart_keeps_the_later_segment_and_a_repeated_step_the_last_value():
    step = np.array([1, 2, 3, 4, 5, 3, 4, 5, 6, 6])
    loss = np.array([5, 4, 3, 2.9, 2.8, 3.1, 3.0, 2.9, 2.7, 2.6])
    check = check_curve(step, loss, LossPolicy())
    np.testing.assert_array_equal(step[check.kept], [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(loss[check.kept], [5, 4, 3.1, 3.0, 2.9, 2.6])
    assert check.findings == ("restart at step 3 after step 5: kept the later segment",
                              "step 6 logged twice: kept the last value")
    assert check.excluded is None


def test_nan_and_warmup_are_dropped_and_too_few_points_excluded():
    step, loss = np.arange(1.0, 7.0), np.array([9.0, 5.0, np.nan, 3.0, np.inf, 2.5])
    check = check_curve(step, loss, LossPolicy(warmup_steps=2))
    np.testing.assert_array_equal(step[check.kept], [2, 4, 6])
    assert check.findings == ("non-finite loss at step 3, 5: dropped",)
    assert check_curve(step, loss, LossPolicy(warmup_steps=5)).excluded == "too few points (1 < 3)"


def test_divergence_past_the_declared_factor_excludes_the_run():
    step = np.arange(1.0, 7.0)
    rising = np.array([4.0, 3.0, 2.0, 2.5, 2.9, 3.1])  # 3.1 > 1.5 x 2.0
    assert check_curve(step, rising, LossPolicy()).excluded.startswith("diverged: loss 3.1 at step 6 is above 1.5")
    assert check_curve(step, rising, LossPolicy(divergence_factor=1.6)).excluded is None


def test_final_min_and_ema_choices():
    loss = np.array([4.0, 3.0, 2.0, 2.2, 2.1])
    kept = np.arange(5)
    assert chosen_rows(loss, kept, LossPolicy("final"))[1].tolist() == [2.1]
    rows, value = chosen_rows(loss, kept, LossPolicy("min"))
    assert rows.tolist() == [2] and value.tolist() == [2.0]
    alpha, weights = 2 / (3 + 1), (1 - 2 / (3 + 1)) ** np.arange(4, -1, -1)  # pandas' adjusted EMA, span 3
    assert alpha == 0.5
    assert chosen_rows(loss, kept, LossPolicy("ema", ema_span=3))[1][0] == pytest.approx((weights * loss).sum() / weights.sum())


def test_apply_policy_names_runs_and_reduces_each_to_one_row():
    frame = pd.DataFrame({"run": ["a"] * 4 + ["b"] * 2, "step": [1, 2, 3, 4, 1, 2],
                          "loss": [4.0, 3.0, 2.5, 2.4, 5.0, 4.0]})
    with pytest.warns(UserWarning, match="runs: run b left out: too few points"):
        out, checks = apply_policy(frame, LossPolicy("final"), "run", "step", "loss")
    assert out.to_dict("records") == [{"run": "a", "step": 4, "loss": 2.4}]
    assert checks["b"].excluded and checks["a"].excluded is None


@pytest.mark.parametrize("text, message", [("median", "one of every, final, min, ema"), ("final:3", "only the ema"),
                                           ("ema:x", "span must be a number"), ("ema:0", "span must be >= 1")])
def test_bad_policies_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        as_policy(text)
    assert as_policy("ema:20").ema_span == 20 and as_policy(None).kind == "every"
