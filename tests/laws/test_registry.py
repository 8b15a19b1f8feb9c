"""The Law contract, checked for every law the registry finds: one formula, its log form
elementwise and overflow-safe, the vector bijection, the grid and the priors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.inference.law_model import coordinate_priors
from jaxscale.laws import registry
from jaxscale.laws.law import lse

LAWS = registry.laws()


def test_registry_finds_every_law_module():
    assert {"chinchilla", "chinchilla-tied", "kaplan", "kaplan-steps", "kaplan-irreducible", "pearce-song",
            "word2vec-error-kaplan", "word2vec-error-chinchilla", "data-constrained", "steplaw-lr", "steplaw-batch",
            "deepseek-lr", "deepseek-batch"} <= set(LAWS)
    assert registry.law_by_name(LAWS["kaplan"]) is LAWS["kaplan"]
    with pytest.raises(ValueError, match="unknown law 'nope'; choose one of"):
        registry.law_by_name("nope")


def _typical(law):
    """A parameter set in the middle of the law's grid."""
    grid = law.init_grid()
    return law.from_vector(jnp.asarray(np.median(grid, axis=0)))


@pytest.mark.parametrize("name", sorted(LAWS))
def test_vector_bijection_round_trips(name):
    law = LAWS[name]
    with jax.enable_x64(True):
        params = _typical(law)
        again = law.from_vector(law.to_vector(params))
        assert type(again) is law.params_type and len(law.vector_names) == law.n_params
        np.testing.assert_allclose(np.array(again), np.array(params), rtol=1e-14)
        assert law.to_vector(law.from_vector(jnp.asarray(law.init_grid()))).shape == law.init_grid().shape


def _of_two_inputs(law):
    """The law itself, or, for a law of further inputs (the unique tokens U_D), the law at a
    fixed value of each (``Law.given``): 1e10, or for a law with a subtracted term in its third
    input (chinchilla-annealing's annealing area), 1e-300, where that term vanishes."""
    held = 1e10 if law.positive else 1e-300
    return law.given(**{name: held for name in law.inputs[2:]}) if len(law.inputs) > 2 else law


ONE_INPUT = sorted(name for name, law in LAWS.items() if len(law.inputs) == 1)


@pytest.mark.parametrize("name", sorted(set(LAWS) - set(ONE_INPUT)))
def test_log_loss_is_elementwise_finite_and_equals_the_loss(name):
    law = _of_two_inputs(LAWS[name])
    with jax.enable_x64(True):
        params = _typical(law)
        x1, x2 = jnp.geomspace(1e-100, 1e300, 9), jnp.geomspace(1e300, 1e-100, 9)
        if not law.positive and len(LAWS[name].inputs) == 2:  # a subtracted term in x2 (lr-annealing's C S2)
            x2 = jnp.zeros_like(x2)
        log_l = law.log_loss(params, jnp.log(x1), jnp.log(x2))
        assert bool(jnp.all(jnp.isfinite(log_l))), log_l
        one_by_one = jnp.stack([law.log_loss(params, jnp.log(a), jnp.log(b)) for a, b in zip(x1, x2)])
        np.testing.assert_allclose(log_l, one_by_one, rtol=1e-14)
        x1, x2 = jnp.geomspace(1e6, 1e11, 5), jnp.geomspace(1e8, 1e13, 5)
        np.testing.assert_allclose(law(x1, x2, params), jnp.exp(law.log_loss(params, jnp.log(x1), jnp.log(x2))))


@pytest.mark.parametrize("name", ONE_INPUT)
def test_a_law_of_one_input_is_elementwise_finite_and_evaluates(name):
    law = LAWS[name]
    with jax.enable_x64(True):
        params = _typical(law)
        x = jnp.geomspace(1e-100, 1e300, 9)
        log_y = law.log_loss(params, jnp.log(x))
        assert bool(jnp.all(jnp.isfinite(log_y))), log_y
        np.testing.assert_allclose(log_y, jnp.stack([law.log_loss(params, jnp.log(v)) for v in x]), rtol=1e-14)
        np.testing.assert_allclose(law.evaluate(params, x[3:6]), jnp.exp(log_y[3:6]), rtol=1e-14)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_grid_and_priors_fit_the_vector(name):
    law = LAWS[name]
    grid = law.init_grid()
    assert grid.ndim == 2 and grid.shape[1] == law.n_params and np.isfinite(grid).all()
    assert list(coordinate_priors(law)) == list(law.vector_names)
    assert law.formula and law.citation


def test_lse_is_exact_and_safe_at_any_spread():
    with jax.enable_x64(True):
        a, b = jnp.array([0.0, 800.0, -800.0]), jnp.array([1.0, -800.0, -801.0])
        np.testing.assert_allclose(lse(a, b), jnp.logaddexp(a, b), rtol=1e-15)
        assert float(lse(jnp.array(-jnp.inf), jnp.array(-jnp.inf))) == -np.inf
        grad = jax.grad(lambda x: lse(x, 2.0 * x, 0.5))(1.0)
        want = (np.exp(1) + 2 * np.exp(2)) / (np.exp(1) + np.exp(2) + np.exp(0.5))
        assert float(grad) == pytest.approx(want, rel=1e-14)
