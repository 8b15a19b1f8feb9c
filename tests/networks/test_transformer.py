"""The transformer: parameter split against Kaplan / Pearce & Song formulas, FLOPs, dtypes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.networks.transformer import (
    TransformerConfig,
    architecture,
    count_params,
    embedding_formula,
    flops_per_token,
    init_params,
    kaplan_nonembedding,
    matmul_params,
    next_token_loss,
    param_counts,
)
from jaxscale.tables import accounting

CONFIGS = [
    TransformerConfig(vocab_size=97, n_ctx=16, n_layer=2, d_model=32, n_head=4),
    TransformerConfig(vocab_size=50, n_ctx=8, n_layer=1, d_model=16, n_head=2, positions="sinusoidal"),
    TransformerConfig(vocab_size=200, n_ctx=12, n_layer=3, d_model=24, n_head=3, d_ff=40, tied=False),
    TransformerConfig(vocab_size=64, n_ctx=32, n_layer=4, d_model=48, n_head=6, positions="sinusoidal", tied=False),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"l{c.n_layer}d{c.d_model}{c.positions[0]}{'t' if c.tied else 'u'}")
def test_parameter_split_matches_formulas(cfg):
    params = jax.eval_shape(init_params, cfg, jax.random.key(0))  # shapes only: no compile
    counts = count_params(params)
    d, l = cfg.d_model, cfg.n_layer
    # Kaplan Table 1: N_\E = 2 d l (2 d_attn + d_ff) (12 l d^2 when d_ff = 4d), without biases/LN.
    assert counts.nonembedding_weights == kaplan_nonembedding(cfg) == 2 * d * l * (2 * d + cfg.d_ff)
    if cfg.d_ff == 4 * d:
        assert counts.nonembedding_weights == 12 * l * d * d
    # Biases (qkv 3d, proj d, fc d_ff, mlp proj d) + two LayerNorms (4d) per layer + final LN (2d).
    assert counts.biases_norms == l * (9 * d + cfg.d_ff) + 2 * d
    # Pearce & Song Eq. 2: N_E = (h + v) d, h only for learned positions; untied head adds v d.
    h = cfg.n_ctx if cfg.positions == "learned" else 0
    assert counts.embedding == embedding_formula(cfg) == (h + cfg.vocab_size) * d + (0 if cfg.tied else cfg.vocab_size * d)
    assert counts.total == counts.embedding + counts.nonembedding
    # The matmul weights: every kernel plus the output projection v d (the tied one is wte itself).
    assert matmul_params(cfg) == counts.nonembedding_weights + cfg.vocab_size * d
    total_leaves = sum(int(np.prod(x.shape)) for x in jax.tree_util.tree_leaves(params))
    assert {x.dtype for x in jax.tree_util.tree_leaves(params)} == {jnp.dtype(jnp.float32)}
    assert counts.total == total_leaves
    assert param_counts(cfg) == counts
    # The tree's counts are the accounting's exact counts of the shape (one formula for both).
    assert accounting.param_counts(architecture(cfg)) == counts


def test_flops_per_token_with_and_without_context_term():
    cfg = CONFIGS[0]
    n = param_counts(cfg).nonembedding
    assert flops_per_token(cfg, n, context_term=False) == 6 * n
    assert flops_per_token(cfg, n) == 6 * n + 6 * cfg.n_layer * cfg.n_ctx * cfg.d_model


def test_causal_logits_do_not_see_the_future():
    cfg = CONFIGS[1]
    params = init_params(cfg, jax.random.key(0))
    from jaxscale.networks.transformer import Transformer

    a = jnp.arange(cfg.n_ctx)[None] % cfg.vocab_size
    b = a.at[0, -1].set((a[0, -1] + 1) % cfg.vocab_size)
    la = Transformer(cfg).apply({"params": params}, a)
    lb = Transformer(cfg).apply({"params": params}, b)
    np.testing.assert_allclose(la[0, :-1], lb[0, :-1], atol=1e-6)
    assert not np.allclose(la[0, -1], lb[0, -1])


def test_initial_loss_near_uniform_and_dtypes_explicit_under_x64():
    cfg = CONFIGS[0]
    tokens = jax.random.randint(jax.random.key(2), (4, cfg.n_ctx + 1), 0, cfg.vocab_size)
    with jax.enable_x64(True):
        params = init_params(cfg, jax.random.key(0))
        assert {x.dtype for x in jax.tree_util.tree_leaves(params)} == {jnp.dtype(jnp.float32)}
        loss = next_token_loss(cfg, params, tokens)
        assert loss.dtype == jnp.float32
    assert abs(float(loss) - np.log(cfg.vocab_size)) < 0.1


def test_bfloat16_compute_keeps_float32_params_and_close_loss():
    cfg = CONFIGS[0]
    cfg16 = TransformerConfig(**{**cfg.to_dict(), "compute_dtype": "bfloat16"})
    tokens = jax.random.randint(jax.random.key(3), (4, cfg.n_ctx + 1), 0, cfg.vocab_size)
    params = init_params(cfg16, jax.random.key(0))
    assert {x.dtype for x in jax.tree_util.tree_leaves(params)} == {jnp.dtype(jnp.float32)}
    loss16 = next_token_loss(cfg16, params, tokens)
    loss32 = next_token_loss(cfg, params, tokens)
    assert loss16.dtype == jnp.float32
    assert abs(float(loss16) - float(loss32)) < 0.05


@pytest.mark.parametrize(
    "kwargs, match",
    [({"d_model": 30, "n_head": 4}, "divisible"), ({"n_layer": 0}, "n_layer"), ({"positions": "rope"}, "positions"),
     ({"compute_dtype": "float16"}, "compute_dtype")],
)
def test_config_validation(kwargs, match):
    base = {"vocab_size": 10, "n_ctx": 4, "n_layer": 1, "d_model": 8, "n_head": 2}
    with pytest.raises(ValueError, match=match):
        TransformerConfig(**{**base, **kwargs})
