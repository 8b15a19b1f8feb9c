"""The 25M curves of Luo et al. (2025) under the held-out fit rule (``examples/multipower_25m.py``'s
split and schedule rates; ../shared/data, skipped where absent). Opt-in: each law is fitted 16 to
19 times and each law's posterior sampled three or four times (tens of minutes on two cores)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from jaxscale.curves import held_out_schedules as ho
from jaxscale.inference.annealing_posterior import AnnealingPosteriorMean
from jaxscale.inference.multipower_posterior import PosteriorMean
from tests.conftest import shared_data_file

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "multipower_25m.py"


def _pred_e(predictions) -> float:
    error = (predictions["predicted"] / predictions["loss"] - 1).abs()
    return float(error.groupby(predictions["run_id"]).mean().mean())


@pytest.fixture(scope="module")
def ruled():
    shared_data_file("multipower_25m/constant_24000.csv")
    example = runpy.run_path(str(EXAMPLE))
    table, lrs = example["curves"]()
    fitted, predicted = example["FITTED"], example["PREDICTED"]
    multi = ho.fit_multipower_held_out(table, lrs, fitted, predicted, predictors=(PosteriorMean(),))
    tissue = ho.fit_annealing_held_out(table, lrs, fitted, predicted, predictors=(AnnealingPosteriorMean(),))
    return multi, tissue


@pytest.mark.slow
def test_the_multipower_law_under_the_rule_predicts_better_than_tissue_et_al_under_it(ruled):
    multi, tissue = ruled
    judged = multi.predictions[~multi.predictions["fitted"]]
    assert _pred_e(judged) < _pred_e(tissue.fit.predictions)
    assert multi.summary()["predicted_points"] == 1622 and 0 <= multi.summary()["interval_coverage"] <= 1


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="acceptance of issue 39 not met: PredE 0.119% under the rule with schedule "
                   "rates, the posterior-predictive mean a candidate (held out 0.268% against lambda 1e-3's "
                   "0.126%, so not chosen; docs/guides/curves.md, 2026-11-28)")
def test_the_rule_reaches_the_papers_pred_e(ruled):
    multi, _ = ruled
    assert _pred_e(multi.predictions[~multi.predictions["fitted"]]) <= 0.00110
