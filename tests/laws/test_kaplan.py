"""Kaplan et al. (2020) laws against the paper's equations and reported values."""

import jax
import jax.numpy as jnp
import pytest

from jaxscale.laws import kaplan as k

pytestmark = pytest.mark.usefixtures("x64")


def test_single_variable_laws_at_their_scale_constants():
    # Eqs. 1.1-1.3 equal 1 at the scale constant and follow the published exponents.
    assert float(k.loss_n(k.N_C)) == pytest.approx(1.0)
    assert float(k.loss_d(k.D_C)) == pytest.approx(1.0)
    assert float(k.loss_cmin(k.CMIN_C)) == pytest.approx(1.0)
    assert float(k.loss_n(1e9)) == pytest.approx((8.8e13 / 1e9) ** 0.076, rel=1e-14)
    assert float(k.loss_d(1e10)) == pytest.approx((5.4e13 / 1e10) ** 0.095, rel=1e-14)
    ratio = k.loss_n(1e8) / k.loss_n(1e9)
    assert float(ratio) == pytest.approx(10**0.076, rel=1e-14)


def test_loss_nd_limits_and_hand_value():
    n = 1e9
    # D -> infinity recovers L(N) with the same (N_c, alpha_N) (Kaplan's design principle 2).
    assert float(k.loss_nd(n, 1e40)) == pytest.approx(float((k.KAPLAN_ND.N_c / n) ** 0.076), rel=1e-12)
    expected = ((6.4e13 / 1e9) ** (0.076 / 0.103) + 1.8e13 / 1e10) ** 0.103
    assert float(k.loss_nd(1e9, 1e10)) == pytest.approx(expected, rel=1e-14)


def test_loss_ns_is_the_sum_of_its_terms():
    expected = (6.5e13 / 1e8) ** 0.077 + (2.1e3 / 1e4) ** 0.76
    assert float(k.loss_ns(1e8, 1e4)) == pytest.approx(expected, rel=1e-14)


def test_critical_batch_and_adjustments():
    assert float(k.critical_batch_size(1.0)) == pytest.approx(2e8)
    loss = 3.0
    b_crit = float(k.critical_batch_size(loss))
    assert b_crit == pytest.approx(2e8 / 3.0 ** (1 / 0.21))
    # At B = B_crit both adjustments halve (Eqs. 5.4, 5.5); at B << B_crit C_min ≈ C.
    assert float(k.minimum_steps(1000.0, b_crit, loss)) == pytest.approx(500.0)
    assert float(k.minimum_compute(1e20, b_crit, loss)) == pytest.approx(5e19)
    assert float(k.minimum_compute(1e20, b_crit * 1e-9, loss)) == pytest.approx(1e20, rel=1e-8)


def test_alpha_cmin_theory_and_allocation_exponents():
    # Eq. 1.8 by hand with Table 3's alpha_S, alpha_N and alpha_B = 0.21.
    by_hand = 1 / (1 / 0.76 + 1 / 0.21 + 1 / 0.077)
    assert float(k.alpha_cmin_theory()) == pytest.approx(by_hand, rel=1e-14)
    assert float(k.alpha_cmin_theory()) == pytest.approx(0.054, abs=0.002)  # Kaplan: "≈ 0.054"
    e = k.optimal_allocation_exponents()
    assert float(e.n) == pytest.approx(by_hand / 0.077)
    assert float(e.n + e.data) == pytest.approx(by_hand * (1 / 0.077 + 1 / 0.21 + 1 / 0.76))  # = 1
    assert float(e.n + e.data) == pytest.approx(1.0)


def test_overfitting_rule():
    n = 1e9
    assert float(k.overfitting_penalty(n, 1e30)) == pytest.approx(0.0, abs=1e-12)
    assert float(k.overfitting_penalty(n, 1e9)) > float(k.overfitting_penalty(n, 1e11)) > 0
    assert float(k.tokens_to_avoid_overfitting(n)) == pytest.approx(5e3 * n**0.74)


def test_contradiction_point_matches_kaplan_orders_of_magnitude():
    # Kaplan Section 6.3: C* ~ 1e4 PF-days, N* ~ 1e12, D* ~ 1e12, L* ~ 1.7 (rough estimates).
    point = k.contradiction_point()
    assert 10**3.5 < point.c_pf_days < 10**4.5
    assert 10**11.5 < point.n < 10**12.5
    assert 1e11 < point.d < 1e13
    assert point.loss == pytest.approx(1.7, abs=0.02)


def test_contradiction_point_is_where_the_two_losses_are_equal():
    point = k.contradiction_point()
    l_cmin = float(k.loss_cmin(point.c_pf_days))
    l_d = float(k.loss_d(k.compute_efficient_data(point.c_pf_days)))
    assert l_cmin == pytest.approx(l_d, rel=1e-12)
    assert point.loss == l_cmin and point.d == float(k.compute_efficient_data(point.c_pf_days))
    # Below C* the compute-efficient curve lies above the data curve, beyond C* below it (Section 6.3).
    below, above = 0.5 * point.c_pf_days, 2.0 * point.c_pf_days
    assert float(k.loss_cmin(below)) > float(k.loss_d(k.compute_efficient_data(below)))
    assert float(k.loss_cmin(above)) < float(k.loss_d(k.compute_efficient_data(above)))


def test_kaplan_laws_are_differentiable():
    dl_dn = jax.grad(lambda n: k.loss_nd(n, 1e10))(1e9)
    dl_dd = jax.grad(lambda d: k.loss_nd(1e9, d))(1e10)
    assert float(dl_dn) < 0 and float(dl_dd) < 0
    assert jax.vmap(k.loss_ns, in_axes=(0, None))(jnp.array([1e6, 1e7]), 1e3).shape == (2,)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: k.loss_n(-1.0), "n"),
        (lambda: k.loss_nd(1e9, 0.0), "d"),
        (lambda: k.loss_nd(1e9, 1e9, k.KAPLAN_ND._replace(alpha_D=0.0)), "alpha_D"),
        (lambda: k.critical_batch_size(float("nan")), "loss"),
        (lambda: k.alpha_cmin_theory(alpha_b=-0.2), "alpha_b"),
    ],
)
def test_invalid_arguments_raise_value_error_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()
