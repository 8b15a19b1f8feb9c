"""Fitting the multi-power law to whole curves and predicting other schedules, on synthetic curves."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from jaxscale.curves import multipower_fit as mc
from jaxscale.laws import multipower as mp
from jaxscale.tables.table import read_runs_table

TRUE = mp.MultiPowerParams(L0=2.9, A=0.55, alpha=0.45, B=500.0, C=1.5, beta=0.5, gamma=0.7)
PEAK, WARMUP = 3e-4, 200


def _rates(kind: str, total: int) -> np.ndarray:
    t = np.arange(1, total + 1)
    warm = np.minimum(t / WARMUP, 1.0)
    after = np.clip(t - WARMUP, 0, None) / (total - WARMUP)
    shape = {"constant": np.ones_like(after), "cosine": 0.1 + 0.45 * (1 + np.cos(np.pi * after)),
             "two-stage": np.where(t < total // 2, 1.0, 0.3), "wsd": np.clip((1 - after) / 0.2, 0.05, 1.0)}[kind]
    return PEAK * warm * shape


RUNS = {"constant": ("constant", 3000), "cosine": ("cosine", 3000), "two-stage": ("two-stage", 3000),
        "wsd": ("wsd", 3000), "constant-long": ("constant", 6000), "cosine-long": ("cosine", 6000)}


def _table(noise: float = 0.0):
    rng = np.random.default_rng(0)
    lrs, frames = {}, []
    for run, (kind, total) in RUNS.items():
        lrs[run] = _rates(kind, total)
        steps = np.arange(WARMUP, total + 1, 40)
        with jax.enable_x64(True):
            loss = np.asarray(mp.loss(TRUE, jax.tree.map(jnp.asarray, mp.curve_of(lrs[run], steps))))
        frames.append(pd.DataFrame({"run_id": run, "step": steps, "n_total": 25e6, "tokens": steps * 1.0,
                                    "loss": loss * np.exp(noise * rng.normal(size=len(steps)))}))
    return read_runs_table(pd.concat(frames, ignore_index=True), sizes_vary=False), lrs


FITTED, PREDICTED = ["constant", "cosine", "two-stage"], ["wsd", "constant-long", "cosine-long"]


@pytest.mark.slow
def test_the_law_is_recovered_from_its_own_curves_and_predicts_unseen_schedules():
    table, lrs = _table()
    fit = mc.fit_multipower(table, lrs, FITTED, PREDICTED)
    got = fit.params
    for name in ("L0", "A", "alpha", "B", "beta"):
        assert getattr(got, name) == pytest.approx(getattr(TRUE, name), rel=1e-2), name
    # C and gamma enter as C eta^-gamma, nearly one number where the rates span a decade only
    assert got.C * PEAK ** -got.gamma == pytest.approx(TRUE.C * PEAK ** -TRUE.gamma, rel=3e-2)
    summary = fit.summary()
    assert summary["curve_mare"] < 1e-5 and summary["predicted_points"] == sum(
        len(table.loss[table.run_id == r]) for r in PREDICTED)
    errors = fit.errors().set_index("run_id")
    assert set(errors.index) == set(FITTED + PREDICTED) and not errors.loc["wsd", "fitted"]


def test_noisy_curves_are_predicted_to_within_their_noise():
    table, lrs = _table(noise=1e-3)
    summary = mc.fit_multipower(table, lrs, FITTED, PREDICTED).summary()
    assert summary["n_converged"] >= 1
    assert summary["curve_mare"] < 1.2e-3  # the noise's own mean |relative error| is 0.8e-3


def test_runs_not_in_the_table_are_named():
    table, lrs = _table()
    with pytest.raises(ValueError, match="no run 'nope'"):
        mc.fit_multipower(table, lrs, ["nope"], [])


def test_a_fixed_parameter_is_held_at_its_value_and_the_others_fitted():
    table, lrs = _table(noise=1e-3)
    fit = mc.fit_multipower(table, lrs, FITTED, PREDICTED, fixed={"beta": TRUE.beta, "C": TRUE.C})
    assert fit.params.beta == TRUE.beta and fit.params.C == pytest.approx(TRUE.C, rel=1e-12)
    assert fit.summary()["fixed"] == {"beta": TRUE.beta, "C": TRUE.C} and fit.n_converged >= 1
    assert fit.params.gamma == pytest.approx(TRUE.gamma, abs=0.05)  # C held, gamma is determined
    free = mc.fit_multipower(table, lrs, FITTED, [])
    assert fit.objective >= free.objective * (1 - 1e-6)  # holding parameters cannot lower the minimum


@pytest.mark.parametrize("fixed, message", [({"delta": 1.0}, "no parameter 'delta'"), ({"B": 0.0}, "must be > 0"),
                                            (dict(TRUE._asdict()), "nothing is left to fit")])
def test_bad_fixed_parameters_are_named(fixed, message):
    table, lrs = _table()
    with pytest.raises(ValueError, match=message):
        mc.fit_multipower(table, lrs, FITTED, [], fixed=fixed)
