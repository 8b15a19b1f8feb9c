"""The laws of downstream accuracy: each equation against its log form, and the chance floor that
no parameter set can go below."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.laws import downstream_accuracy as da
from jaxscale.laws import intermediate_loss


def test_accuracy_and_above_chance_are_inverse_and_floored():
    a = np.linspace(0.0, 1.0, 11)
    for chance in (0.0, 0.25, 0.5):
        acc = da.accuracy(a, chance)
        np.testing.assert_allclose(da.above_chance(acc, chance), a, atol=1e-15)
        assert acc.min() == pytest.approx(chance) and acc.max() == pytest.approx(1.0)


@pytest.mark.parametrize("law", [da.ACCURACY_OF_LOSS, da.LOG_COMPUTE_SIGMOID, da.DIRECT])
def test_no_parameter_set_predicts_below_chance(law):
    """The law is of accuracy above chance, in (0, 1]: put back over any floor it stays above it."""
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        for _ in range(20):
            params = law.from_vector(jnp.asarray(law.init_grid()[rng.integers(len(law.init_grid()))]
                                                 + rng.normal(0, 3, law.n_params)))
            x = jnp.geomspace(1e-3, 1e30, 50)
            a = jnp.exp(law.log_loss(params, jnp.log(x)))
            assert bool(jnp.all((a >= 0) & (a <= 1)))
            assert float(jnp.min(da.accuracy(a, 0.25))) >= 0.25


def test_equations():
    with jax.enable_x64(True):
        L, k, B = 2.3, 1.7, np.exp(3.0)
        got = float(jnp.exp(da.log_accuracy_of_loss(da.AccuracyOfLossParams(k, B), jnp.log(L))))
        assert got == pytest.approx(1 / (1 + np.exp(k * L - np.log(B))), rel=1e-14)
        params = da.AccuracyOfLossParams(k, B)
        mid = float(da.midpoint(params))
        assert float(jnp.exp(da.log_accuracy_of_loss(params, jnp.log(mid)))) == pytest.approx(0.5, rel=1e-14)
        c = 1e21
        got = float(jnp.exp(da.log_direct_accuracy(da.DirectParams(50.0, 0.1), jnp.log(c))))
        assert -np.log(got) == pytest.approx(50.0 * c ** -0.1, rel=1e-13)
        got = float(jnp.exp(da.log_direct_accuracy_nd(da.DirectNDParams(5.0, 7.0, 0.2, 0.3), jnp.log(1e9), jnp.log(1e11))))
        assert -np.log(got) == pytest.approx(5.0 * 1e9 ** -0.2 + 7.0 * 1e11 ** -0.3, rel=1e-13)
        got = float(jnp.exp(da.log_accuracy_of_log_compute(da.LogComputeSigmoidParams(0.5, 1e20), jnp.log(1e21))))
        assert got == pytest.approx(1 / (1 + np.exp(-0.5 * np.log(10.0))), rel=1e-13)
        got = float(jnp.exp(intermediate_loss.log_intermediate_loss(intermediate_loss.IntermediateLossParams(30.0, 0.2),
                                                                    jnp.log(1e9))))
        assert got == pytest.approx(30.0 * 1e9 ** -0.2, rel=1e-13)


def test_a_loss_fit_refuses_a_law_of_accuracy_and_names_the_command():
    from jaxscale.fitting.determinable import check_runs

    with pytest.raises(ValueError, match="accuracy above chance, not a loss: fit it with `jaxscale downstream`"):
        check_runs(da.ACCURACY_OF_LOSS, None)
