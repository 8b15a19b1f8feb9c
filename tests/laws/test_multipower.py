"""The multi-power law (Luo et al. 2025): its limits, its drops, and the merged evaluation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.laws import multipower as mp

PARAMS = mp.MultiPowerParams(L0=3.0, A=0.5, alpha=0.5, B=400.0, C=2.0, beta=0.6, gamma=0.6)
PEAK = 3e-4


def _loss(lrs, steps, params=PARAMS, block=1):
    return np.asarray(mp.loss(params, jax.tree.map(jnp.asarray, mp.curve_of(lrs, steps, block))))


def test_a_constant_schedule_is_a_power_law_in_the_area(x64):
    lrs = np.full(5000, PEAK)
    steps = np.arange(50, 5001, 50)
    area = PEAK * steps
    np.testing.assert_allclose(_loss(lrs, steps), PARAMS.L0 + PARAMS.A * area ** -PARAMS.alpha, rtol=1e-14)


def test_a_warmups_rises_add_their_share_of_b_times_the_peak_as_the_area_grows(x64):
    warmup = np.minimum(np.arange(1, 20_001) / 500, 1.0) * PEAK
    steps = np.array([600, 20_000])
    power = PARAMS.L0 + PARAMS.A * np.cumsum(warmup)[steps - 1] ** -PARAMS.alpha
    extra = _loss(warmup, steps) - power
    assert 0 < extra[0] < extra[1] < PARAMS.B * PEAK  # the rises' G grows towards 1
    assert extra[1] == pytest.approx(PARAMS.B * PEAK * (1 - 1 / 500), rel=0.03)


def test_one_drop_takes_its_full_b_times_the_drop_only_as_the_area_after_it_grows(x64):
    low = 0.3 * PEAK
    lrs = np.r_[np.full(1000, PEAK), np.full(10 ** 6, low)]
    steps = np.array([1000, 1001, 1002, 10 ** 6 + 1000])
    area = np.cumsum(lrs)[steps - 1]
    drop = PARAMS.B * (PEAK - low) * mp.loss_drop_fraction(low ** -PARAMS.gamma * (area - area[0]), PARAMS.C,
                                                               PARAMS.beta)
    np.testing.assert_allclose(_loss(lrs, steps), PARAMS.L0 + PARAMS.A * area ** -PARAMS.alpha - drop, rtol=1e-13)
    assert float(drop[0]) == 0.0 and float(drop[-1]) == pytest.approx(PARAMS.B * (PEAK - low), rel=0.01)


def test_the_final_loss_of_the_rates_is_the_curves_last_point_and_differentiable(x64):
    t = np.arange(1, 3001)
    lrs = np.where(t < 300, t / 300, 0.1 + 0.45 * (1 + np.cos(np.pi * np.clip(t - 300, 0, None) / 2700))) * PEAK
    assert float(mp.final_loss(PARAMS, jnp.asarray(lrs))) == pytest.approx(_loss(lrs, np.array([3000]))[0], rel=1e-13)
    grad = jax.grad(lambda r: mp.final_loss(PARAMS, r))(jnp.asarray(lrs))
    assert bool(jnp.all(jnp.isfinite(grad)))


def test_merged_drops_move_a_cosine_curve_by_little(x64):
    t = np.arange(1, 20_001)
    lrs = np.where(t < 2000, t / 2000, 0.1 + 0.45 * (1 + np.cos(np.pi * np.clip(t - 2000, 0, None) / 18_000))) * PEAK
    steps = np.arange(2000, 20_001, 128)
    exact = _loss(lrs, steps)
    merged = mp.curve_of(lrs, steps, block=32)
    assert len(merged.drop) < len(lrs) / 20
    np.testing.assert_allclose(_loss(lrs, steps, block=32), exact, rtol=3e-5)


def test_checkpoints_outside_the_schedule_are_refused():
    with pytest.raises(ValueError, match="must lie in 1..10"):
        mp.curve_of(np.full(10, PEAK), np.array([11]))
