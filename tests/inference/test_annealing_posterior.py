"""Tissue et al.'s annealing law's posterior given whole curves and its posterior-predictive mean,
on synthetic curves of the law (tests/curves/test_lr_annealing_fit.py), and as a candidate of the
held-out rule."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from numpyro.infer.util import log_density
from scipy import stats

from jaxscale.curves import held_out_schedules as ho
from jaxscale.curves import lr_annealing_fit as lc
from jaxscale.inference import annealing_posterior as ap
from jaxscale.inference import curve_posterior as cp
from jaxscale.laws.schedule_areas import schedule_areas
from jaxscale.tables.learning_rates import run_learning_rates
from jaxscale.tables.table import read_runs_table
from tests.curves.test_lr_annealing_fit import TRUE, synthetic_runs

SIZE = 11760
FITTED, PREDICTED = [f"{SIZE}_constant", f"{SIZE}_cosine"], [f"{SIZE}_wsd"]
#: A short run of the sampler: two chains, enough to check R-hat and to predict.
SHORT = dataclasses.replace(cp.CONFIG, chains=2, warmup=150, samples=150)


def _table(noise: float = 0.0, seed: int = 0):
    frame = synthetic_runs(steps=400, every=4)
    frame = frame[frame["n_total"] == SIZE]
    frame = frame.assign(loss=frame["loss"] * np.exp(noise * np.random.default_rng(seed).normal(size=len(frame))))
    table = read_runs_table(frame, sizes_vary=False)
    return table, run_learning_rates(table)


def _areas(lrs, run):
    """S1 and S2 of every step of ``run`` (float64)."""
    with jax.enable_x64(True):
        areas = schedule_areas(lrs[run], ap.DECAY)
        return np.asarray(areas.forward), np.asarray(areas.annealing)


def _truth(table, lrs, run):
    """The law's own loss at every checkpoint of ``run``, by hand from its rates."""
    p = TRUE[SIZE]
    s1, s2 = _areas(lrs, run)
    steps = np.sort(table.step[table.run_id.astype(str) == run]).astype(int)
    return p.L0 + p.A * s1[steps - 1] ** -p.alpha - p.C * s2[steps - 1]


def test_the_models_log_density_by_hand(x64):
    table, lrs = _table(noise=1e-3)
    runs = ap.curves_of(ap._areas(table, lrs, FITTED), FITTED)
    site = {"log_L0": 0.9, "log_A": -0.2, "log_C": -3.0, "alpha": 0.45, "sigma": 2e-3, "rho": 0.3}
    value, _ = log_density(ap.annealing_model, (jax.tree.map(jnp.asarray, runs),), {}, site)
    L0, A, C, alpha = np.exp(0.9), np.exp(-0.2), np.exp(-3.0), 0.45
    hand = (stats.norm.logpdf(0.9, 1.0, 0.5) + stats.norm.logpdf(-0.2, 0.0, 2.0) + stats.norm.logpdf(-3.0, -1.0, 3.0)
            + stats.truncnorm.logpdf(0.45, -1.0, np.inf, loc=0.5, scale=0.5)
            + stats.halfnorm.logpdf(2e-3, scale=cp.SIGMA_PRIOR) + np.log(0.5))
    for run in FITTED:
        rows = np.flatnonzero(table.run_id.astype(str) == run)
        rows = rows[np.argsort(table.step[rows])]
        s1, s2 = _areas(lrs, run)
        s = table.step[rows].astype(int) - 1
        e = np.log(table.loss[rows]) - np.log(L0 + A * s1[s] ** -alpha - C * s2[s])
        hand += stats.t.logpdf(e[0], cp.DF, scale=2e-3 / np.sqrt(1 - 0.3**2))
        hand += stats.t.logpdf(e[1:] - 0.3 * e[:-1], cp.DF, scale=2e-3).sum()
    assert float(value) == pytest.approx(hand, rel=1e-10)
    # where the law's loss is <= 0 at a checkpoint given, the density is 0
    outside, _ = log_density(ap.annealing_model, (jax.tree.map(jnp.asarray, runs),), {}, {**site, "log_C": 3.0})
    assert float(outside) == -np.inf


def test_the_prediction_is_the_mean_over_draws_and_its_interval_holds_the_truth():
    table, lrs = _table()
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        centre = np.asarray(ap.LAW.to_vector(TRUE[SIZE]), np.float64)
    theta = centre + 0.002 * rng.normal(size=(400, 4))
    posterior = cp.CurvePosterior(theta, np.full(400, 1e-3), np.full(400, 0.5),
                                  cp.diagnostics.Diagnostics({}, {}, {}, 0, ()), tuple(FITTED), 0.0)
    predicted = ap.predictive(posterior, table, lrs, PREDICTED, draws=60)
    keep = cp.thinned(400, 60)
    s1, s2 = _areas(lrs, PREDICTED[0])
    s = predicted["step"].to_numpy(int) - 1
    L0, A, C, alpha = np.exp(theta[keep, 0]), np.exp(theta[keep, 1]), np.exp(theta[keep, 2]), theta[keep, 3]
    by_hand = L0[:, None] + A[:, None] * s1[s] ** -alpha[:, None] - C[:, None] * s2[s]
    np.testing.assert_allclose(predicted["predicted"], by_hand.mean(axis=0), rtol=1e-10)
    truth = _truth(table, lrs, PREDICTED[0])
    assert np.all(np.diff(predicted["step"]) > 0) and np.all(predicted["run_id"] == PREDICTED[0])
    assert np.all((predicted["posterior_lo"] <= truth) & (truth <= predicted["posterior_hi"]))


def test_bad_runs_are_refused_before_sampling():
    table, lrs = _table()
    candidate = ap.AnnealingPosteriorMean(SHORT)
    with pytest.raises(ValueError, match="no run 'nope' in the table"):
        candidate.fit(table, lrs, FITTED, ["nope"])
    with pytest.raises(ValueError, match="needs at least one fitted run"):
        candidate.fit(table, lrs, [], PREDICTED)
    assert candidate.history == []


class _Biased:
    """A predictor off the observed losses by a relative ``bias``: the fit at the true decay, its predictions replaced."""

    def __init__(self, label, bias):
        self.label, self.bias = label, bias

    def fit(self, table, lrs, fitted, predicted):
        fit = lc.fit_group(table, lrs, fitted, predicted, decay=ap.DECAY, skip_warmups=0)
        return dataclasses.replace(fit, predictions=fit.predictions.assign(predicted=fit.predictions["loss"] * (1 + self.bias)))


def test_predictors_are_candidates_of_the_annealing_rule_and_the_best_held_out_is_chosen():
    table, lrs = _table()
    runs = [*FITTED, *PREDICTED]
    held = ho.fit_annealing_held_out(table, lrs, runs[1:], runs[:1], decays=(),
                                     predictors=(_Biased("off", 0.01), _Biased("near", 0.001)))
    rule = held.choice.to_dict()
    assert [s["candidate"] for s in rule["scores"]] == ["off", "near"] and rule["chosen"] == "near"
    assert rule["interval_half_width"] == pytest.approx(0.001, rel=1e-6)
    assert held.summary()["curve_mare"] == pytest.approx(0.001, rel=1e-6) and "predicted_lo" in held.fit.predictions


@pytest.mark.slow  # NUTS on two synthetic curves: about a minute on two shared cores
def test_the_posterior_mean_predicts_an_unseen_schedule_within_its_interval():
    table, lrs = _table(noise=1e-3)
    candidate = ap.AnnealingPosteriorMean(SHORT)
    fit = candidate.fit(table, lrs, FITTED, PREDICTED)
    truth = _truth(table, lrs, PREDICTED[0])
    judged = fit.predictions
    assert np.mean(np.abs(judged["predicted"] / truth - 1)) < 1.5e-3  # noise 1e-3 on the fitted curves
    assert np.mean((judged["posterior_lo"] <= truth) & (truth <= judged["posterior_hi"])) >= 0.9
    np.testing.assert_allclose(np.array(fit.fit.params), np.array(TRUE[SIZE]), rtol=0.05)  # the posterior median
    sampled = candidate.history[0]
    assert sampled["fitted_runs"] == FITTED and sampled["divergences"] >= 0 and sampled["max_r_hat"] < 1.1
    assert fit.decay == ap.DECAY and fit.summary()["predicted_runs"] == 1
