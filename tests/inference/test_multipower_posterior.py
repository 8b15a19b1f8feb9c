"""The multi-power law's posterior given whole curves and its posterior-predictive mean, on the
synthetic curves of a known law (tests/curves/test_multipower_fit.py)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from jaxscale.curves import held_out_schedules as ho
from jaxscale.curves import multipower_fit as mc
from jaxscale.inference import curve_posterior as cp
from jaxscale.inference import multipower_posterior as mpp
from jaxscale.laws import multipower as mp
from tests.curves.test_multipower_fit import FITTED, TRUE, _table

#: A short run of the sampler: two chains, enough to check R-hat and to predict.
SHORT = dataclasses.replace(mpp.CONFIG, chains=2, warmup=150, samples=150)


def _truth(table, lrs, runs):
    with jax.enable_x64(True):
        return [np.asarray(mp.loss(TRUE, jax.tree.map(jnp.asarray, d.curve))) for d in mc.curve_data(table, lrs, runs)]


def test_draws_about_a_known_law_predict_its_loss_within_their_interval():
    table, lrs = _table()
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        centre = np.asarray(mp.to_vector(mp.MultiPowerParams(*map(np.float64, TRUE))))
    theta = centre + 0.003 * rng.normal(size=(400, 7))
    noise = cp.diagnostics.Diagnostics({}, {}, {}, 0, ())
    posterior = cp.CurvePosterior(theta, np.full(400, 1e-3), np.full(400, 0.5), noise, tuple(FITTED), 0.0)
    predicted = mpp.predictive(posterior, table, lrs, ["wsd"], draws=60)
    truth = _truth(table, lrs, ["wsd"])[0]
    assert np.max(np.abs(predicted["predicted"] / truth - 1)) < 3e-3
    assert np.all((predicted["posterior_lo"] <= truth) & (truth <= predicted["posterior_hi"]))
    # the interval holds the coordinates' spread and a residual of scale 1e-3 / sqrt(1 - 0.5^2)
    assert np.median(predicted["posterior_hi"] / predicted["posterior_lo"] - 1) > 2 * 1.645 * 1e-3
    assert len(cp.thinned(1600)) == cp.PREDICTIVE_DRAWS and len(cp.thinned(50)) == 50
    with pytest.raises(ValueError, match="no run 'nope'"):
        mpp.predictive(posterior, table, lrs, ["nope"])


def test_a_posterior_given_no_curve_is_refused():
    table, lrs = _table()
    with pytest.raises(ValueError, match="at least one run"):
        mpp.sample_posterior(table, lrs, [], SHORT)


@pytest.mark.slow  # NUTS on three synthetic curves: minutes on two shared cores
def test_the_posterior_mean_predicts_an_unseen_schedule_within_its_interval():
    table, lrs = _table(noise=1e-3)
    candidate = mpp.PosteriorMean(SHORT)
    fit = candidate.fit(table, lrs, FITTED, ["wsd"])
    judged = fit.predictions[~fit.predictions["fitted"]]
    truth = _truth(table, lrs, ["wsd"])[0]
    assert np.mean(np.abs(judged["predicted"] / truth - 1)) < 1.5e-3  # noise 1e-3 on the fitted curves
    inside = (judged["posterior_lo"] <= truth) & (truth <= judged["posterior_hi"])
    assert inside.mean() >= 0.9
    sampled = candidate.history[0]
    assert sampled["fitted_runs"] == FITTED and sampled["divergences"] >= 0 and np.isfinite(sampled["max_r_hat"])
    assert len(candidate.history) == 1 and 0 <= cp.posterior_coverage(judged) <= 1


class _Biased:
    """A predictor off the true law by a relative ``bias``, without fitting anything."""

    def __init__(self, label, bias):
        self.label, self.bias = label, bias

    def fit(self, table, lrs, fitted, predicted):
        frames = []
        for runs, is_fitted in ((list(fitted), True), (list(predicted), False)):
            for run, d, loss in zip(runs, mc.curve_data(table, lrs, runs), _truth(table, lrs, runs)):
                frames.append(pd.DataFrame({"run_id": run, "step": np.asarray(d.curve.step), "loss": np.asarray(d.loss),
                                            "predicted": loss * (1 + self.bias), "fitted": is_fitted}))
        return mc.MultiPowerFit(TRUE, 0.0, {}, 1, 1, 1, tuple(fitted), tuple(predicted),
                                pd.concat(frames, ignore_index=True), 0.0, rule={"posterior": self.label})


def test_predictors_are_candidates_of_the_rule_and_the_best_held_out_is_chosen():
    table, lrs = _table()
    fit = ho.fit_multipower_held_out(table, lrs, FITTED, ["wsd"], penalties=(),
                                     predictors=(_Biased("off", 0.01), _Biased("near", 0.001)))
    rule = fit.rule
    assert [s["candidate"] for s in rule["scores"]] == ["off", "near"] and rule["chosen"] == "near"
    assert rule["posterior"] == "near" and rule["interval_half_width"] == pytest.approx(0.001, rel=1e-6)
    assert fit.summary()["run_mare"] == pytest.approx(0.001, rel=1e-6) and "predicted_lo" in fit.predictions
