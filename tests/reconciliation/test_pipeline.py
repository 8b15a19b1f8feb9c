"""The Section-2 pipeline end to end: the acceptance numbers are computed here, not typed in."""

import jax
import numpy as np
import pytest

from jaxscale.laws import chinchilla as ch
from jaxscale.reconciliation import pipeline as reconciliation
from jaxscale.reconciliation.pipeline import reconcile_spec
from jaxscale.reconciliation.synthetic_curves import DEFAULT_CONFIG, frontier_exponents

# Pearce & Song Eqs. 18-19 (the paper's reported local exponents, for comparison).
PAPER_NONEMBEDDING = {"epoch": 0.78, "chinchilla": 0.74}


@pytest.fixture(scope="module", params=["epoch", "chinchilla"])
def result(request):
    return reconcile_spec(request.param)


def test_nonembedding_exponent_reproduces_paper(result):
    assert result.exponent_nonembedding == pytest.approx(PAPER_NONEMBEDDING[result.spec], abs=0.01)
    assert result.exponent_nonembedding_analytic == pytest.approx(result.exponent_nonembedding, abs=0.01)


def test_total_basis_exponent_is_near_chinchilla(result):
    p = ch.PUBLISHED[result.spec]
    assert result.exponent_total_analytic == pytest.approx(p.beta / (p.alpha + p.beta), abs=1e-12)
    assert result.exponent_total == pytest.approx(result.exponent_total_analytic, abs=0.01)


def test_autodiff_agrees_with_closed_forms(result):
    assert result.max_abs_error_autodiff_vs_eq17 <= 1e-8
    assert result.max_abs_error_solver_vs_eq16 <= 1e-9
    assert result.n_check[0] == pytest.approx(1e2) and result.n_check[-1] == pytest.approx(1e12)


def test_limits_and_gamma(result):
    p = ch.PUBLISHED[result.spec]
    assert result.limit_small == pytest.approx(p.beta / (p.alpha / 3 + p.beta), abs=1e-6)
    assert result.limit_large == pytest.approx(p.beta / (p.alpha + p.beta), abs=1e-6)
    assert result.g_autodiff[0] == pytest.approx(result.limit_small, abs=2e-3)  # N = 100: near the small limit
    assert float(result.embedding_fit.gamma) == pytest.approx(47491, rel=0.05)


def test_frontier_exponents_vmap_over_draws():
    with jax.enable_x64(True):
        draws = jax.tree.map(lambda v: jax.numpy.array([v, v]), ch.EPOCH)
        out = jax.jit(jax.vmap(frontier_exponents, in_axes=(0, None)))(draws, 47491.0)
        assert out.nonembedding.shape == (2,)
        assert float(out.nonembedding[0]) == pytest.approx(float(out.nonembedding[1]))


def test_fast_compile_options_keep_float64_results():
    """``_numbers`` compiles with XLA settings that trade LLVM optimisation for compile time
    (``FAST_COMPILE_OPTIONS``); its results must match XLA's default compilation to float64
    round-off (relative 1e-12), and every discrete result (frontier choices, masks) exactly."""
    statics = {"config": DEFAULT_CONFIG, "n_check_points": 2001}
    with jax.enable_x64(True):
        inputs = reconciliation.program_inputs("epoch")
        fast = reconciliation._numbers(*inputs, **statics)
        default = jax.jit(reconciliation._numbers.__wrapped__, static_argnames=tuple(statics))(*inputs, **statics)
    for got, want in zip(jax.tree.leaves(fast), jax.tree.leaves(default), strict=True):
        got, want = np.asarray(got), np.asarray(want)
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        else:
            np.testing.assert_array_equal(got, want)
