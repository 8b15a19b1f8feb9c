"""Property tests of the generic compute-optimal solver over random valid law parameters."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from jaxscale.laws import chinchilla as ch
from jaxscale.laws import pearce_song as r
from jaxscale.optimum import solver as optimal

pytestmark = pytest.mark.usefixtures("x64")

params = st.builds(
    lambda log_a, log_b, e, alpha, beta: (log_a, log_b, e, alpha, beta),
    st.floats(1.0, 10.0), st.floats(1.0, 10.0), st.floats(0.5, 3.0), st.floats(0.1, 0.9), st.floats(0.1, 0.9),
)
log10_budget = st.floats(12.0, 28.0)
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)  # reproducible in CI


def as_law(t):
    log_a, log_b, e, alpha, beta = (jnp.asarray(v, jnp.float64) for v in t)
    return ch.ChinchillaParams(A=jnp.exp(log_a), B=jnp.exp(log_b), E=e, alpha=alpha, beta=beta)


@jax.jit
def solve(p, log_c):
    x = optimal.optimal_log_n(ch.loss, p, log_c)
    grid = x + jnp.array([-0.01, 0.0, 0.01])
    h = optimal.loss_along_budget(ch.loss, p, grid, log_c)
    return x, optimal.stationarity(ch.loss, p, x, log_c), h, optimal.local_exponent(ch.loss, p, jnp.exp(log_c))


@given(params, log10_budget)
@SETTINGS
def test_optimum_is_stationary_minimum_and_matches_eq14(t, log10_c):
    p = as_law(t)
    log_c = jnp.asarray(log10_c * np.log(10.0))
    x, residual, h, g = solve(p, log_c)
    assert abs(float(residual)) <= 1e-10 * float(h[1])
    assert float(h[1]) <= float(h[0]) and float(h[1]) <= float(h[2])
    assert float(x) == pytest.approx(float(jnp.log(ch.compute_optimal_n(jnp.exp(log_c), p))), abs=1e-9)
    assert float(g) == pytest.approx(float(ch.allocation_exponents(p)[0]), abs=1e-9)


@given(params, log10_budget, st.floats(0.1, 4.0))
@SETTINGS
def test_optimal_size_and_data_grow_with_budget(t, log10_c, step):
    p = as_law(t)
    log_c = jnp.array([log10_c, log10_c + step]) * np.log(10.0)
    x = solve_many(p, log_c)
    assert float(x[1]) > float(x[0])  # N* increases with C
    assert float(log_c[1] - x[1]) > float(log_c[0] - x[0])  # so does D* = C / 6N*


@jax.jit
def solve_many(p, log_c):
    return optimal.optimal_log_n(ch.loss, p, log_c)


@given(params, st.floats(3.0, 12.0), st.floats(3.0, 13.0))
@SETTINGS
def test_loss_decreases_in_n_and_d(t, log10_n, log10_d):
    p = as_law(t)
    n, d = 10.0**log10_n, 10.0**log10_d
    base = float(ch.loss(n, d, p))
    assert float(ch.loss(2 * n, d, p)) < base and float(ch.loss(n, 2 * d, p)) < base
    assert base > float(p.E)


@jax.jit
def g_at(q, n):
    return optimal.optimal_log_compute_and_exponent(r.LAW, q, jnp.log(n))


@given(params, st.floats(3.0, 6.0))
@SETTINGS
def test_local_exponent_limits_and_eq17(t, log10_gamma):
    q = r.with_embedding(as_law(t), jnp.asarray(10.0**log10_gamma), jnp.asarray(1 / 3))
    # 1e20 is deep in the large-size limit (γ/N^(2/3) < 5e-8). The solver's documented domain for
    # derivatives is D* < ~1e100 (autodiff of D**-beta underflows beyond 1e140), which excludes
    # extreme exponent ratios alpha/beta at this size.
    n = jnp.array([1e-12, 1e6, 1e20])
    log_c, g = g_at(q, n)
    assume(float(jnp.max(log_c - optimal.LOG6 - jnp.log(n))) < 230.0)
    assert float(g[0]) == pytest.approx(float(r.limit_small(q)), abs=1e-6)
    assert float(g[2]) == pytest.approx(float(r.limit_large(q)), abs=1e-6)
    assert float(g[1]) == pytest.approx(float(r.local_exponent(1e6, q)), abs=1e-8)
