"""The optimum of a joint law L(N, D, eta, B) in (eta, B) by Newton steps and implicit
differentiation (jaxscale.optimum.solver.optimal_log_inputs), against the law's closed form."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.laws import hparam_bowl as hb
from jaxscale.optimum import hparam_optimum as oh
from jaxscale.optimum.solver import optimal_log_inputs

PARAMS = hb.HparamBowlParams(E=1.7, A=400.0, B_D=410.0, alpha=0.34, beta=0.28, eta0=3.1, alpha_eta=0.66,
                             beta_eta=0.29, batch0=0.41, beta_batch=0.6, k_eta=0.03, k_batch=0.008,
                             rho=0.4)
N = np.array([1e8, 1e9, 7e9, 7e10])
D = np.array([2e9, 2e10, 1.4e12, 1e13])


def test_the_implicit_diff_optimum_of_a_synthetic_joint_law_is_its_closed_form(x64):
    best = oh.optimum(hb.LAW, PARAMS, N, D)
    log_n, log_d = np.log(N), np.log(D)
    np.testing.assert_allclose(np.log(best.lr), hb.log_optimal_lr(PARAMS, log_n, log_d), atol=1e-10)
    np.testing.assert_allclose(np.log(best.batch), hb.log_optimal_batch(PARAMS, log_d), atol=1e-10)
    tuned = PARAMS.E + PARAMS.A * N ** -PARAMS.alpha + PARAMS.B_D * D ** -PARAMS.beta
    np.testing.assert_allclose(best.loss, tuned, rtol=1e-12)
    # the local exponents, by implicit differentiation through the solve: the closed form's exponents
    np.testing.assert_allclose(best.lr_exponent_n, -PARAMS.alpha_eta, atol=1e-9)
    np.testing.assert_allclose(best.lr_exponent_d, PARAMS.beta_eta, atol=1e-9)
    np.testing.assert_allclose(best.batch_exponent_n, 0.0, atol=1e-9)
    np.testing.assert_allclose(best.batch_exponent_d, PARAMS.beta_batch, atol=1e-9)


def test_derivatives_in_the_parameters_flow_through_the_solve(x64):
    log_n, log_d = jnp.log(N[1]), jnp.log(D[1])

    def log_lr(p):
        return oh.optimal_log_hyperparameters(hb.LAW, p, log_n, log_d)[0]

    grad = jax.grad(log_lr)(jax.tree.map(jnp.asarray, PARAMS))
    want = jax.grad(lambda p: hb.log_optimal_lr(p, log_n, log_d))(jax.tree.map(jnp.asarray, PARAMS))
    np.testing.assert_allclose(np.array(grad), np.array(want), atol=1e-9)
    assert float(grad.alpha_eta) == pytest.approx(-float(log_n))


def test_the_loss_lost_by_a_mis_set_learning_rate_is_the_bowls(x64):
    lost = oh.loss_increase(hb.LAW, PARAMS, N, D, lr_factor=2.0)
    tuned = PARAMS.E + PARAMS.A * N ** -PARAMS.alpha + PARAMS.B_D * D ** -PARAMS.beta
    np.testing.assert_allclose(lost, PARAMS.k_eta * np.log(2.0) ** 2 / tuned, rtol=1e-9)


def test_a_law_without_a_minimum_in_the_free_inputs_gives_nan(x64):
    concave = PARAMS._replace(k_eta=-0.03)
    best = oh.optimum(hb.LAW, concave, N, D)
    assert np.isnan(best.lr).all() and np.isnan(best.batch).all()


def test_free_inputs_are_named_and_a_law_of_other_inputs_is_refused(x64):
    from jaxscale.laws import chinchilla

    with pytest.raises(ValueError, match="no input 'lr'"):
        optimal_log_inputs(hb.LAW, PARAMS, [jnp.zeros(1)] * 4, ("lr",))
    with pytest.raises(ValueError, match="need a law of"):
        oh.optimum(chinchilla.LAW, None, N, D)


def test_draws_are_solved_in_chunks_each_as_alone(x64):
    rng = np.random.default_rng(0)
    count = oh.DRAW_CHUNK + 6  # two chunks, the second padded
    draws = hb.HparamBowlParams(*(float(v) * (1 + 0.02 * rng.normal(size=count)) for v in PARAMS))
    together = oh.optimum(hb.LAW, draws, N[:2], D[:2])
    assert together.lr.shape == (count, 2)
    for i in (0, oh.DRAW_CHUNK - 1, oh.DRAW_CHUNK, count - 1):
        alone = oh.optimum(hb.LAW, hb.HparamBowlParams(*(v[i] for v in draws)), N[:2], D[:2])
        np.testing.assert_allclose(together.lr[i], alone.lr, rtol=1e-10)
        np.testing.assert_allclose(together.lr_exponent_n[i], alone.lr_exponent_n, rtol=1e-8)
