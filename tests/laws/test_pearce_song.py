"""Pearce & Song Section 2: Eq. 7 fit, Eq. 15, and the generic solver against Eqs. 16-17."""

import csv

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.laws import chinchilla as ch
from jaxscale.laws import pearce_song as r
from jaxscale.laws import table_a9
from jaxscale.optimum import solver as optimal
from jaxscale.reconciliation import pipeline as reconciliation
from tests.conftest import shared_data_file

pytestmark = pytest.mark.usefixtures("x64")

N_RANGE = np.logspace(2, 12, 1001)


def paper_eq17_inverse_g(n, gamma, alpha, beta):
    """Eq. 17 exactly as printed (δ = 1/3): 1/g = 1 - (1/β)(N^(2/3) + γ/9)/(N^(2/3) + γ/3)
    + ((1+α)/β)(N^(2/3) + γ/3)/(N^(2/3) + γ)."""
    n23 = n ** (2 / 3)
    return 1 - (1 / beta) * (n23 + gamma / 9) / (n23 + gamma / 3) + ((1 + alpha) / beta) * (n23 + gamma / 3) / (n23 + gamma)


def corrected_eq16(n, gamma, p):
    """Eq. 16 with the exponents 1/3 restored: 6N (N + γ/3 N^(1/3))^(-1/β) (N + γN^(1/3))^((1+α)/β)
    (β D_c / (α N_c))^(1/β)."""
    return (6 * n * (n + gamma / 3 * n ** (1 / 3)) ** (-1 / p.beta)
            * (n + gamma * n ** (1 / 3)) ** ((1 + p.alpha) / p.beta)
            * (p.beta * p.B / (p.alpha * p.A)) ** (1 / p.beta))


def test_table_a9_constant_matches_shared_csv():
    path = shared_data_file("chinchilla_table_a9_configs.csv")
    with open(path) as f:
        rows = [(int(r["total_params_millions"]), int(r["d_model"])) for r in csv.DictReader(f)]
    assert tuple(rows) == table_a9.CONFIGS


def test_step1_fit_reproduces_gamma_delta_and_aspect_ratio():
    fit = reconciliation.fit_table_a9()
    assert float(fit.gamma) == pytest.approx(r.GAMMA_PAPER, rel=0.05)
    assert float(fit.delta) == pytest.approx(r.DELTA_PAPER, abs=0.005)
    assert float(r.aspect_ratio_from_gamma(fit.gamma)) == pytest.approx(39.2, abs=0.1)
    assert float(r.gamma_from_aspect_ratio(r.aspect_ratio_from_gamma(fit.gamma))) == pytest.approx(float(fit.gamma))


def test_eq7_recovers_exact_synthetic_relation():
    n = jnp.logspace(6, 10, 30)
    fit = reconciliation.fit_gamma_delta(r.total_params(n, 30000.0, 0.3), n)
    assert float(fit.gamma) == pytest.approx(30000.0, rel=1e-9)
    assert float(fit.delta) == pytest.approx(0.3, abs=1e-10)


@pytest.mark.parametrize("spec", ["epoch", "chinchilla"])
def test_autodiff_local_exponent_equals_eq17(spec):
    p = ch.LAW.published_params(spec)
    q = r.with_embedding(p, r.GAMMA_PAPER)
    g_autodiff = optimal.local_exponent_at_n(r.loss, q, N_RANGE)
    g_paper = 1 / paper_eq17_inverse_g(N_RANGE, r.GAMMA_PAPER, p.alpha, p.beta)
    assert float(jnp.max(jnp.abs(g_autodiff - g_paper))) <= 1e-8
    np.testing.assert_allclose(r.local_exponent(N_RANGE, q), g_paper, atol=1e-13)
    np.testing.assert_allclose(r.local_exponent_autodiff(N_RANGE, q), g_paper, atol=1e-13)
    np.testing.assert_allclose(r.compute_at_optimum(N_RANGE, q), corrected_eq16(N_RANGE, r.GAMMA_PAPER, p), rtol=1e-12)


@pytest.mark.parametrize("spec", ["epoch", "chinchilla"])
def test_generic_solver_equals_corrected_eq16(spec):
    p = ch.LAW.published_params(spec)
    q = r.with_embedding(p, r.GAMMA_PAPER)
    log_c = optimal.optimal_log_compute(r.loss, q, jnp.log(N_RANGE))
    np.testing.assert_allclose(log_c, jnp.log(corrected_eq16(N_RANGE, r.GAMMA_PAPER, p)), atol=1e-10)
    # ... and the forward solve N*(C) inverts it.
    np.testing.assert_allclose(optimal.optimal_log_n(r.loss, q, log_c), jnp.log(N_RANGE), atol=1e-9)


def test_general_delta_forms_agree_with_autodiff():
    q = r.with_embedding(ch.EPOCH, 30000.0, 0.4)
    np.testing.assert_allclose(optimal.local_exponent_at_n(r.loss, q, N_RANGE), r.local_exponent(N_RANGE, q), atol=1e-9)
    np.testing.assert_allclose(
        optimal.optimal_log_compute(r.loss, q, jnp.log(N_RANGE)), jnp.log(r.compute_at_optimum(N_RANGE, q)), atol=1e-10
    )


@pytest.mark.parametrize("spec", ["epoch", "chinchilla"])
def test_limits_of_g(spec):
    p = ch.LAW.published_params(spec)
    q = r.with_embedding(p, r.GAMMA_PAPER)
    g = optimal.local_exponent_at_n(r.loss, q, jnp.array([1e-12, 1e32]))
    assert float(r.limit_small(q)) == pytest.approx(p.beta / (p.alpha / 3 + p.beta), abs=1e-15)
    assert float(r.limit_large(q)) == pytest.approx(p.beta / (p.alpha + p.beta), abs=1e-15)
    assert float(g[0]) == pytest.approx(float(r.limit_small(q)), abs=1e-6)
    assert float(g[1]) == pytest.approx(float(r.limit_large(q)), abs=1e-6)


def test_transition_phase_peaks_near_gamma_three_halves():
    q = r.with_embedding(ch.EPOCH, r.GAMMA_PAPER)
    g = optimal.local_exponent_at_n(r.loss, q, N_RANGE)
    peak = N_RANGE[jnp.argmax(g)]
    assert float(r.transition_size(q)) == pytest.approx(r.GAMMA_PAPER**1.5)
    assert float(g.max()) > float(r.limit_small(q)) > float(r.limit_large(q))
    assert 0.1 < float(peak / r.transition_size(q)) < 10  # "around this point"
    # At the transition point embeddings are half the parameters (Eq. 7).
    n_t = r.total_params(r.transition_size(q), r.GAMMA_PAPER)
    assert float(n_t / r.transition_size(q)) == pytest.approx(2.0)


def test_eq15_is_eq13_with_total_parameters():
    q = r.with_embedding(ch.EPOCH, r.GAMMA_PAPER)
    n = jnp.logspace(3, 10, 8)
    n_t = r.total_params(n, r.GAMMA_PAPER)
    np.testing.assert_allclose(r.loss(n, 1e10, q), ch.loss(n_t, 1e10, ch.EPOCH), rtol=1e-14)


def test_exponents_vmap_over_parameter_draws():
    draws = jax.tree.map(lambda v: jnp.array([v, v * 1.01]), ch.EPOCH)
    qs = r.with_embedding(draws, jnp.array([r.GAMMA_PAPER, r.GAMMA_PAPER]), jnp.array([1 / 3, 1 / 3]))
    g = jax.vmap(lambda q: r.local_exponent(1e7, q))(qs)
    assert g.shape == (2,) and bool(jnp.all(jnp.isfinite(g)))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: r.total_params(-1.0, 47491.0), "n_nonembedding"),
        (lambda: r.total_params(1e6, 0.0), "gamma"),
        (lambda: r.loss(1e6, 1e9, r.with_embedding(ch.EPOCH._replace(alpha=-1.0), 47491.0)), "alpha"),
        (lambda: reconciliation.fit_gamma_delta([1e6, 2e6], [2e6, 1e6]), "n_total - n_nonembedding"),
    ],
)
def test_invalid_arguments(call, name):
    with pytest.raises(ValueError, match=name):
        call()
