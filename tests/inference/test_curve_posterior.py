"""What the posteriors of curve laws share: the AR(1) Student-t likelihood of each run's log
residuals, the starting noise, and the predictive mean and interval over draws."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
from scipy import stats

from jaxscale.inference import curve_posterior as cp


def test_without_correlation_the_likelihood_is_the_independent_student_t():
    e = jnp.array([1e-3, -2e-3, 5e-4, 0.0])
    with jax.enable_x64(True):
        independent = jnp.sum(dist.StudentT(cp.DF, 0.0, 1e-3).log_prob(e))
        assert cp.ar1_log_density(e, 1e-3, 0.0) == pytest.approx(float(independent), rel=1e-12)
        # correlated residuals that move together are likelier under rho > 0 than independent ones
        smooth = jnp.linspace(1e-3, 2e-3, 20)
        assert cp.ar1_log_density(smooth, 1e-4, 0.95) > cp.ar1_log_density(smooth, 1e-4, 0.0)


def test_the_ar1_density_by_hand():
    e, sigma, rho = np.array([2e-3, 1e-3, -1e-3]), 1e-3, 0.6
    hand = (stats.t.logpdf(e[0], cp.DF, scale=sigma / np.sqrt(1 - rho**2))
            + stats.t.logpdf(e[1] - rho * e[0], cp.DF, scale=sigma) + stats.t.logpdf(e[2] - rho * e[1], cp.DF, scale=sigma))
    with jax.enable_x64(True):
        assert float(cp.ar1_log_density(jnp.asarray(e), sigma, rho)) == pytest.approx(hand, rel=1e-12)


def test_the_starting_noise_of_uncorrelated_and_of_smooth_residuals():
    white = np.random.default_rng(0).normal(0, 1e-3, 4000)
    start = cp.noise_start(white)
    assert abs(start["rho"]) < 0.05 and start["sigma"] == pytest.approx(1e-3, rel=0.05)
    assert cp.noise_start(np.linspace(0, 1, 50))["rho"] == 0.9  # clipped


def test_the_predictive_mean_is_the_mean_over_draws_and_the_interval_holds_the_noise():
    rng = np.random.default_rng(1)
    losses = 3.0 + 0.01 * rng.normal(size=(400, 5))
    posterior = cp.CurvePosterior(np.zeros((400, 1)), np.full(400, 1e-3), np.zeros(400),
                                  cp.diagnostics.Diagnostics({}, {}, {}, 0, ()), ("a",), 0.0)
    keep = np.arange(400)
    with jax.enable_x64(True):
        columns = cp.predictive_columns(losses, posterior, keep, 0, level=0.9)
    np.testing.assert_allclose(columns["predicted"], losses.mean(axis=0), rtol=1e-15)
    assert np.all(columns["posterior_lo"] < columns["predicted"]) and np.all(columns["predicted"] < columns["posterior_hi"])
    # the spread of the draws (SD 0.01) and the noise (1e-3 of 3): about +-1.645 x 0.0104 at 90%
    half = 0.5 * (columns["posterior_hi"] - columns["posterior_lo"])
    assert np.all((0.012 < half) & (half < 0.022))
