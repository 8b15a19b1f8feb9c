"""Parameter and FLOP accounting for decoder transformers.

Kaplan et al. (2020) Section 2.1 and Pearce & Song (2024) Eqs. 1-4. These are the formulas; the
transformer in :mod:`jaxscale.models` counts its exact parameters from its parameter tree and is
tested against them.
"""

from __future__ import annotations

from jax.typing import ArrayLike

from jaxscale.core.validation import check_positive


def embedding_params(d_model: ArrayLike, vocab_size: ArrayLike, context: ArrayLike = 0,
                     learned_positions: bool = True, tied: bool = True) -> ArrayLike:
    """Pearce & Song Eq. 2: N_E = (h + v) d, with h (the context length) counted only when the
    position embeddings are learned; an untied output projection adds its v d
    (:func:`unembedding_params`)."""
    check_positive("d_model", d_model)
    check_positive("vocab_size", vocab_size)
    h = context if learned_positions else 0
    head = 0 if tied else unembedding_params(d_model, vocab_size)
    return (h + vocab_size) * d_model + head


def unembedding_params(d_model: ArrayLike, vocab_size: ArrayLike) -> ArrayLike:
    """The output projection W_out (d x v) from the last hidden state to the logits: v d. It is
    a matmul whether or not it is tied to the token embedding."""
    return vocab_size * d_model


def nonembedding_params(n_layer: ArrayLike, d_model: ArrayLike, d_attn: ArrayLike | None = None,
                        d_ff: ArrayLike | None = None) -> ArrayLike:
    """Kaplan Section 2.1: N ≈ 2 d_model n_layer (2 d_attn + d_ff), biases and LayerNorm excluded.
    With the standard shape d_attn = d_model, d_ff = 4 d_model this is 12 n_layer d_model**2."""
    check_positive("n_layer", n_layer)
    check_positive("d_model", d_model)
    d_attn = d_model if d_attn is None else d_attn
    d_ff = 4 * d_model if d_ff is None else d_ff
    return 2 * d_model * n_layer * (2 * d_attn + d_ff)


def total_params(n_nonembedding: ArrayLike, n_embedding: ArrayLike) -> ArrayLike:
    """Pearce & Song Eq. 1: N_T = N_E + N_\\E."""
    return n_nonembedding + n_embedding


def forward_flops_per_token(n_nonembedding: ArrayLike, n_layer: ArrayLike, n_ctx: ArrayLike,
                            d_attn: ArrayLike) -> ArrayLike:
    """Kaplan Section 2.1: C_forward ≈ 2 N + 2 n_layer n_ctx d_attn per token."""
    return 2 * n_nonembedding + 2 * n_layer * n_ctx * d_attn


def training_flops_per_token(n_nonembedding: ArrayLike, n_layer: ArrayLike, n_ctx: ArrayLike,
                             d_attn: ArrayLike) -> ArrayLike:
    """Forward plus backward (twice the forward): 3 C_forward ≈ 6 N + 6 n_layer n_ctx d_attn."""
    return 3 * forward_flops_per_token(n_nonembedding, n_layer, n_ctx, d_attn)


def training_compute(n: ArrayLike, d: ArrayLike) -> ArrayLike:
    """C = 6 N D (Kaplan Section 2.1; Pearce & Song Eqs. 3-4 with N = N_T or N_\\E)."""
    return 6 * n * d
