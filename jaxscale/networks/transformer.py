"""A GPT-style decoder-only transformer in Flax (linen), with exact parameter and FLOP accounting.

Written with ``flax.linen``: its modules are stateless and ``init`` returns the parameters as a
plain nested dict, which is what the rest of the training stack wants to hold, shard
(``NamedSharding``), checkpoint (orbax) and count.

Architecture (pre-LayerNorm, as GPT-2 and Kaplan et al. 2020)::

    h_0 = W_tok[x] + P          (P learned, or sinusoidal and parameter-free)
    h   = h + Attn(LN(h))       causal multi-head self-attention
    h   = h + MLP(LN(h))        d_model -> d_ff -> d_model, GELU
    logits = LN(h) W_out        W_out = W_tok^T when tied

Parameters are float32 always (``param_dtype``); ``compute_dtype="bfloat16"`` runs the matmuls in
bfloat16 for accelerators while LayerNorm, softmax and the logits stay float32.

Counting follows Pearce & Song (2024), Eqs. 1-2: N_T = N_E + N_\\E with N_E = (h + v) d, h the
context only when positions are learned, plus v d for an untied output projection. Kaplan et al.
(2020), Table 1: N_\\E ~= 2 d l (2 d_attn + d_ff) = 12 l d^2 (biases and LayerNorm excluded; we
count those separately) and forward FLOPs per token C_fwd = 2 N + 2 l n_ctx d. Each formula is
written once, in :mod:`jaxscale.tables.accounting`; :func:`architecture` states a config's shape
for its exact counts (the same function that counts GPT-2's or Llama's parameters), and
:func:`count_params` reads the exact counts from the parameter tree to check them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Literal

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.networks.blocked_cross_entropy import VOCAB_BLOCK, blocked_cross_entropy
from jaxscale.tables import accounting

PARAM_DTYPE = jnp.float32
INIT_STD = 0.02


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
    """Shape and numerics of a decoder-only transformer.

    ``d_ff`` defaults to ``4 * d_model``. ``positions`` is ``"learned"`` (counted as embedding
    parameters) or ``"sinusoidal"`` (no parameters). ``tied=True`` reuses the token embedding as
    the output projection. ``compute_dtype`` is ``"float32"`` or ``"bfloat16"``.
    """

    vocab_size: int
    n_ctx: int
    n_layer: int
    d_model: int
    n_head: int
    d_ff: int = 0
    positions: Literal["learned", "sinusoidal"] = "learned"
    tied: bool = True
    compute_dtype: Literal["float32", "bfloat16"] = "float32"

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_ctx", "n_layer", "d_model", "n_head"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"TransformerConfig.{name} must be a positive integer; got {value!r}")
        if self.d_model % self.n_head:
            raise ValueError(
                f"TransformerConfig.d_model ({self.d_model}) must be divisible by n_head ({self.n_head})"
            )
        if self.d_ff == 0:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        if not isinstance(self.d_ff, int) or self.d_ff < 1:
            raise ValueError(f"TransformerConfig.d_ff must be a positive integer; got {self.d_ff!r}")
        if self.positions not in ("learned", "sinusoidal"):
            raise ValueError(f"TransformerConfig.positions must be 'learned' or 'sinusoidal'; got {self.positions!r}")
        if self.compute_dtype not in ("float32", "bfloat16"):
            raise ValueError(
                f"TransformerConfig.compute_dtype must be 'float32' or 'bfloat16'; got {self.compute_dtype!r}"
            )

    @property
    def dtype(self) -> jnp.dtype:
        return jnp.dtype(self.compute_dtype)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def sinusoidal_positions(n_ctx: int, d_model: int) -> np.ndarray:
    """Vaswani et al. (2017): PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same)."""
    position = np.arange(n_ctx)[:, None]
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    table = np.zeros((n_ctx, d_model), np.float32)
    table[:, 0::2] = np.sin(position * inv_freq)
    table[:, 1::2] = np.cos(position * inv_freq)[:, : d_model // 2]
    return table


def _dense(cfg: TransformerConfig, features: int, name: str, std: float = INIT_STD) -> nn.Dense:
    return nn.Dense(
        features,
        dtype=cfg.dtype,
        param_dtype=PARAM_DTYPE,
        kernel_init=nn.initializers.normal(std),
        name=name,
    )


def _layer_norm(name: str) -> nn.LayerNorm:
    return nn.LayerNorm(epsilon=1e-5, dtype=jnp.float32, param_dtype=PARAM_DTYPE, name=name)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention on tokens flattened to ``(batch * length, d_model)``."""

    cfg: TransformerConfig

    @nn.compact
    def __call__(self, x: jax.Array, batch: int) -> jax.Array:
        cfg = self.cfg
        head_dim = cfg.d_model // cfg.n_head
        qkv = _dense(cfg, 3 * cfg.d_model, "qkv")(x)
        q, k, v = jnp.split(qkv.reshape(batch, -1, 3 * cfg.n_head, head_dim), 3, axis=2)
        out = jax.nn.dot_product_attention(q, k, v, is_causal=True)
        residual_std = INIT_STD / math.sqrt(2 * cfg.n_layer)
        return _dense(cfg, cfg.d_model, "proj", residual_std)(out.reshape(x.shape[0], cfg.d_model))


class MLP(nn.Module):
    cfg: TransformerConfig

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        cfg = self.cfg
        hidden = nn.gelu(_dense(cfg, cfg.d_ff, "fc")(x))
        return _dense(cfg, cfg.d_model, "proj", INIT_STD / math.sqrt(2 * cfg.n_layer))(hidden)


class Block(nn.Module):
    cfg: TransformerConfig

    @nn.compact
    def __call__(self, x: jax.Array, batch: int) -> jax.Array:
        dtype = self.cfg.dtype
        x = x + CausalSelfAttention(self.cfg, name="attn")(_layer_norm("ln_1")(x).astype(dtype), batch)
        return x + MLP(self.cfg, name="mlp")(_layer_norm("ln_2")(x).astype(dtype))


class Transformer(nn.Module):
    """Token ids ``(batch, length <= n_ctx)`` -> float32 next-token logits ``(batch, length, vocab)``.

    Inside, activations are kept as 2-D ``(batch * length, d_model)`` matrices, so every dense
    layer and its gradients are plain matrix products (XLA's CPU backend runs 3-D contractions
    over two batch axes several times slower).
    """

    cfg: TransformerConfig

    @nn.compact
    def __call__(self, tokens: jax.Array, head: bool = True) -> jax.Array:
        """The logits, or with ``head=False`` the final LayerNorm's output ``(batch * length,
        d_model)`` in the compute dtype (for a loss that applies the output layer itself)."""
        cfg = self.cfg
        batch, length = tokens.shape
        embed = nn.Embed(
            cfg.vocab_size,
            cfg.d_model,
            dtype=jnp.float32,
            param_dtype=PARAM_DTYPE,
            embedding_init=nn.initializers.normal(INIT_STD),
            name="wte",
        )
        h = embed(tokens)
        if cfg.positions == "learned":
            wpe = self.param("wpe", nn.initializers.normal(INIT_STD), (cfg.n_ctx, cfg.d_model), PARAM_DTYPE)
            h = h + wpe[:length]
        else:
            h = h + jnp.asarray(sinusoidal_positions(cfg.n_ctx, cfg.d_model))[:length]
        h = h.reshape(batch * length, cfg.d_model)
        for i in range(cfg.n_layer):
            h = Block(cfg, name=f"h_{i}")(h, batch)
        h = _layer_norm("ln_f")(h)
        if not head:
            return h.astype(cfg.dtype)
        if cfg.tied:
            logits = embed.attend(h.astype(cfg.dtype).astype(jnp.float32))
        else:
            head = nn.Dense(
                cfg.vocab_size,
                use_bias=False,
                dtype=cfg.dtype,
                param_dtype=PARAM_DTYPE,
                kernel_init=nn.initializers.normal(INIT_STD),
                name="lm_head",
            )
            logits = head(h.astype(cfg.dtype))
        return logits.astype(jnp.float32).reshape(batch, length, cfg.vocab_size)


@functools.partial(jax.jit, static_argnums=0)
def init_params(cfg: TransformerConfig, key: jax.Array) -> dict[str, Any]:
    """Float32 parameters of ``Transformer(cfg)`` as a nested dict (compiled once per config)."""
    dummy = jnp.zeros((1, cfg.n_ctx), jnp.int32)
    return Transformer(cfg).init(key, dummy)["params"]


def output_embedding(cfg: TransformerConfig, params: Any) -> jax.Array:
    """The output layer as (vocab, d_model): the token embedding when tied, else the head's kernel transposed."""
    return params["wte"]["embedding"] if cfg.tied else params["lm_head"]["kernel"].T


@functools.partial(jax.jit, static_argnums=0, static_argnames=("vocab_block",))
def next_token_loss(cfg: TransformerConfig, params: Any, tokens: jax.Array, vocab_block: int | None = VOCAB_BLOCK
                    ) -> jax.Array:
    """Mean cross-entropy (nats) of predicting ``tokens[:, 1:]`` from ``tokens[:, :-1]``.

    With ``vocab_block`` the output layer and the loss are computed ``vocab_block`` vocabulary
    entries at a time (:func:`~jaxscale.networks.blocked_cross_entropy.blocked_cross_entropy`,
    never holding the logits); ``None`` computes the whole float32 logits first.
    """
    inputs, targets = tokens[:, :-1], tokens[:, 1:].reshape(-1)
    if vocab_block is not None:
        h = Transformer(cfg).apply({"params": params}, inputs, head=False)
        w = output_embedding(cfg, params)
        return jnp.mean(blocked_cross_entropy(h, w, targets, vocab_block, cfg.compute_dtype))
    logits = Transformer(cfg).apply({"params": params}, inputs).reshape(-1, cfg.vocab_size)
    target_logit = jnp.take_along_axis(logits, targets[:, None], axis=-1)[:, 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - target_logit)


# ----------------------------------------------------------------------------------------------
# Parameter accounting, read from the parameter tree.

EMBEDDING_LEAVES = ("wte", "wpe", "lm_head")
ParamCounts = accounting.ParamCounts


def architecture(cfg: TransformerConfig) -> accounting.Architecture:
    """The shape of ``Transformer(cfg)`` for :mod:`jaxscale.tables.accounting`: biases on every
    dense layer but the untied head, LayerNorm (gain and bias), multi-head attention, a GELU MLP."""
    return accounting.Architecture(
        d_model=cfg.d_model, n_layer=cfg.n_layer, n_head=cfg.n_head, vocab_size=cfg.vocab_size, n_ctx=cfg.n_ctx,
        d_ff=cfg.d_ff, tied=cfg.tied, learned_positions=cfg.positions == "learned",
    )


def count_params(params: Any) -> ParamCounts:
    """Split a parameter tree into N_E (token and learned-position embeddings and an untied output
    projection) and N_\\E, the latter further into matmul weights and biases + LayerNorm."""
    embedding = weights = small = 0
    for path, leaf in jax.tree_util.tree_leaves_with_path(params):
        keys = [getattr(k, "key", str(k)) for k in path]
        size = int(np.prod(leaf.shape))
        if keys[0] in EMBEDDING_LEAVES:
            embedding += size
        elif keys[-1] == "kernel":
            weights += size
        else:
            small += size
    total = accounting.total_params(weights + small, embedding)
    return ParamCounts(total, embedding, weights + small, weights, small)


def param_counts(cfg: TransformerConfig) -> ParamCounts:
    """:func:`count_params` of ``cfg``'s parameter tree, from shapes only (no allocation)."""
    shapes = jax.eval_shape(init_params, cfg, jax.random.key(0))
    return count_params(shapes)


def kaplan_nonembedding(cfg: TransformerConfig) -> int:
    """Kaplan et al. (2020), Table 1: N_\\E = 2 d_model n_layer (2 d_attn + d_ff), d_attn = d_model."""
    return accounting.nonembedding_params(cfg.n_layer, cfg.d_model, cfg.d_model, cfg.d_ff)


def embedding_formula(cfg: TransformerConfig) -> int:
    """Pearce & Song (2024), Eq. 2: N_E = (h + v) d, h only for learned positions; + v d if untied."""
    return accounting.param_counts(architecture(cfg)).embedding


def matmul_params(cfg: TransformerConfig) -> int:
    """Parameters that take part in matmuls: the non-embedding weights (Kaplan's N_\\E) plus the
    output projection v d, tied or not (the token and position lookups are not matmuls)."""
    return kaplan_nonembedding(cfg) + accounting.unembedding_params(cfg.d_model, cfg.vocab_size)


def flops_per_token(cfg: TransformerConfig, n_params: int, context_term: bool = True) -> int:
    """Training FLOPs per token: 6 N, plus Kaplan's context term 6 n_layer n_ctx d_model.

    Kaplan et al. (2020), Table 1: C_forward = 2 N + 2 n_layer n_ctx d_attn; training is three
    times the forward pass (forward + backward), C = 6 N + 6 n_layer n_ctx d_attn.
    """
    n_ctx = cfg.n_ctx if context_term else 0
    return accounting.training_flops_per_token(int(n_params), cfg.n_layer, n_ctx, cfg.d_model)
