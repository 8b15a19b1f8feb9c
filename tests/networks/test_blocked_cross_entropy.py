"""The blocked cross-entropy equals the whole softmax's: loss and gradients to 1e-5 relative in float32."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.networks.blocked_cross_entropy import blocked_cross_entropy
from jaxscale.networks.transformer import TransformerConfig, init_params, next_token_loss


def _whole_softmax(h: jax.Array, w: jax.Array, targets: jax.Array) -> jax.Array:
    logits = h @ w.T
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - jnp.take_along_axis(logits, targets[:, None], axis=-1)[:, 0])


def _relative(a: jax.Array, b: jax.Array) -> float:
    return float(jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(b)))


@pytest.mark.parametrize("block", [64, 4096])  # several blocks, the last one uneven; one block (smaller than asked)
def test_loss_and_gradients_equal_the_whole_softmax(block):
    key_h, key_w, key_t = jax.random.split(jax.random.key(0), 3)
    h = jax.random.normal(key_h, (96, 24))
    w = 2.0 * jax.random.normal(key_w, (1000, 24))  # logits of spread ~10: an unstable naive softmax would show
    targets = jax.random.randint(key_t, (96,), 0, 1000)
    expected, (dh, dw) = jax.value_and_grad(_whole_softmax, (0, 1))(h, w, targets)
    loss, (gh, gw) = jax.value_and_grad(lambda a, b: jnp.mean(blocked_cross_entropy(a, b, targets, block)), (0, 1))(h, w)
    assert abs(float(loss) - float(expected)) <= 1e-5 * abs(float(expected))
    assert _relative(gh, dh) <= 1e-5
    assert _relative(gw, dw) <= 1e-5


@pytest.mark.slow  # two compilations of the model's gradient: ~30 s on 2 loaded cores
@pytest.mark.parametrize("tied", [True, False])
def test_the_models_loss_and_gradient_are_the_whole_logits(tied):
    cfg = TransformerConfig(vocab_size=300, n_ctx=8, n_layer=1, d_model=16, n_head=2, tied=tied)
    params = init_params(cfg, jax.random.key(1))
    tokens = jax.random.randint(jax.random.key(2), (4, 9), 0, 300)
    whole, g_whole = jax.value_and_grad(lambda p: next_token_loss(cfg, p, tokens, vocab_block=None))(params)
    blocked, g_blocked = jax.value_and_grad(lambda p: next_token_loss(cfg, p, tokens, vocab_block=128))(params)
    assert abs(float(blocked) - float(whole)) <= 1e-5 * float(whole)
    for a, b in zip(jax.tree.leaves(g_blocked), jax.tree.leaves(g_whole)):
        assert _relative(a, b) <= 1e-5


@pytest.mark.slow
def test_bfloat16_products_stay_near_the_float32_loss():
    cfg = TransformerConfig(vocab_size=300, n_ctx=8, n_layer=1, d_model=16, n_head=2)
    params = init_params(cfg, jax.random.key(1))
    tokens = jax.random.randint(jax.random.key(2), (4, 9), 0, 300)
    loss16 = next_token_loss(dataclasses.replace(cfg, compute_dtype="bfloat16"), params, tokens, vocab_block=128)
    assert loss16.dtype == jnp.float32
    np.testing.assert_allclose(float(loss16), float(next_token_loss(cfg, params, tokens)), rtol=1e-2)


def test_a_block_of_no_entries_is_refused():
    with pytest.raises(ValueError, match="block"):
        blocked_cross_entropy(jnp.ones((2, 3)), jnp.ones((5, 3)), jnp.zeros(2, jnp.int32), 0)
