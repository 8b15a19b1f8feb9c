"""Chinchilla law (Hoffmann et al. 2022 Eq. 2) and its closed-form optimum (Pearce & Song Eq. 14)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.laws import chinchilla as ch
from jaxscale.optimum import solver as optimal

pytestmark = pytest.mark.usefixtures("x64")


def test_the_published_sets_are_the_papers_values():
    assert ch.LAW.published_params("chinchilla") == (406.4, 410.7, 1.6934, 0.3392, 0.2849)
    assert ch.LAW.published_params("epoch") == (482.01, 2085.43, 1.8172, 0.3478, 0.3658)


def test_loss_hand_checked():
    # Chinchilla (70B parameters, 1.4T tokens) under Hoffmann et al.'s fit, computed by hand:
    # 1.6934 + 406.4 / 70e9**0.3392 + 410.7 / 1.4e12**0.2849
    #   = 1.6934 + 406.4 / 4774.3 + 410.7 / 2887.6 = 1.6934 + 0.08512 + 0.14223
    expected = 1.6934 + 406.4 / 70e9**0.3392 + 410.7 / 1.4e12**0.2849
    assert float(ch.loss(70e9, 1.4e12, ch.CHINCHILLA)) == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(1.9208, abs=1e-4)


def test_allocation_exponents_match_published_a():
    # Hoffmann et al.: a = 0.46 for Approach 3; Besiroglu et al.: a ≈ 0.513 (issue text).
    a, b = ch.allocation_exponents(ch.CHINCHILLA)
    assert float(a) == pytest.approx(0.46, abs=0.005)
    assert float(a + b) == pytest.approx(1.0, abs=1e-15)
    assert float(ch.allocation_exponents(ch.EPOCH)[0]) == pytest.approx(0.513, abs=0.001)


def test_closed_form_optimum_is_stationary_and_on_budget():
    c = jnp.logspace(18, 26, 9)
    n, d = ch.compute_optimal_n(c, ch.EPOCH), ch.compute_optimal_d(c, ch.EPOCH)
    np.testing.assert_allclose(6 * n * d, c, rtol=1e-13)
    profile = jax.vmap(jax.grad(lambda x, cc: ch.loss_at_compute(jnp.exp(x), cc, ch.EPOCH)))
    np.testing.assert_allclose(profile(jnp.log(n), c), 0.0, atol=1e-14)


@pytest.mark.parametrize("name", ["chinchilla", "epoch"])
def test_generic_solver_matches_eq14(name):
    p = ch.LAW.published_params(name)
    c = jnp.logspace(15, 27, 25)
    np.testing.assert_allclose(optimal.optimal_n(ch.loss, p, c), ch.compute_optimal_n(c, p), rtol=1e-12)
    np.testing.assert_allclose(optimal.optimal_d(ch.loss, p, c), ch.compute_optimal_d(c, p), rtol=1e-12)
    a, _ = ch.allocation_exponents(p)
    np.testing.assert_allclose(optimal.local_exponent(ch.loss, p, c), a, atol=1e-12)
    np.testing.assert_allclose(optimal.local_exponent_at_n(ch.loss, p, jnp.logspace(3, 12, 10)), a, atol=1e-12)


def test_solver_gradients_wrt_parameters_match_closed_form():
    # d log N*(C) / d theta by implicit differentiation equals the derivative of Eq. 14.
    c = 1e23
    implicit = jax.grad(lambda p: optimal.optimal_log_n(ch.loss, p, jnp.log(c)))(ch.EPOCH)
    closed = jax.grad(lambda p: jnp.log(ch.compute_optimal_n(c, p)))(ch.EPOCH)
    for got, want in zip(implicit, closed):
        assert float(got) == pytest.approx(float(want), rel=1e-9, abs=1e-14)


def test_law_is_jit_vmap_grad_able():
    n = jnp.logspace(6, 12, 7)
    eager = ch.loss(n, 1e11, ch.EPOCH)
    np.testing.assert_allclose(jax.jit(ch.loss)(n, 1e11, ch.EPOCH), eager, rtol=1e-15)
    per_param = jax.vmap(ch.loss, in_axes=(None, None, 0))(1e9, 1e11, jax.tree.map(lambda v: jnp.array([v, v]), ch.EPOCH))
    assert per_param.shape == (2,)
    assert float(jax.grad(ch.loss)(1e9, 1e11, ch.EPOCH)) < 0


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: ch.loss(0.0, 1e9, ch.EPOCH), "n"),
        (lambda: ch.loss(1e9, -5.0, ch.EPOCH), "d"),
        (lambda: ch.loss(float("nan"), 1e9, ch.EPOCH), "n"),
        (lambda: ch.loss(1e9, 1e9, ch.EPOCH._replace(alpha=0.0)), "alpha"),
        (lambda: ch.loss(1e9, 1e9, ch.EPOCH._replace(beta=-0.3)), "beta"),
        (lambda: ch.compute_optimal_n(-1.0, ch.EPOCH), "c"),
        (lambda: ch.LAW.published_params("kaplan"), "kaplan"),
    ],
)
def test_invalid_arguments_raise_value_error_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()
