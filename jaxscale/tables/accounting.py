"""Parameter and FLOP accounting for decoder-only transformers.

Two levels. The formulas of the papers, each written once: Kaplan et al. (2020) Section 2.1 and
Pearce & Song (2024) Eqs. 1-4 (:func:`embedding_params`, :func:`nonembedding_params`,
:func:`training_flops_per_token`, :func:`training_compute`). And the exact count of a released
architecture (:class:`Architecture`, :func:`param_counts`): every matrix, bias and norm weight,
with grouped-query attention, gated MLPs, tied or untied heads, learned or parameter-free
positions, so that N_T, N_\\E and N_E of GPT-2, Pythia, Llama or OLMo come out exactly as their
authors publish them. :func:`flops_per_token` gives the training FLOPs per token of an
architecture under each convention of :data:`FLOP_CONVENTIONS`, named and cited.

Everything counts with Python integers (exact to any size); the transformer the lm wing trains
(:mod:`jaxscale.networks.transformer`) reads its own counts through the same functions. This module
lives beside the runs table because the readers of :mod:`jaxscale.trackers` turn a run's logged
architecture into its model size with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

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


#: Weights of one normalisation layer of width d: LayerNorm has a gain and a bias (2 d), RMSNorm a
#: gain (d), OLMo's non-parametric LayerNorm none.
NORM_WEIGHTS_PER_WIDTH = {"layernorm": 2, "rmsnorm": 1, "nonparametric": 0}


@dataclass(frozen=True)
class Architecture:
    """The shape of a decoder-only transformer, as much as its parameter and FLOP counts need.

    Args:
        d_model: width of the residual stream.
        n_layer: number of blocks (attention + MLP).
        n_head: query heads.
        vocab_size: rows of the token embedding (the padded size, as stored).
        n_ctx: context length (training sequence length).
        d_ff: width of the MLP's hidden layer (default 4 d_model); for a gated MLP the width of
            each of its two input projections.
        n_kv_head: key/value heads (default ``n_head``; fewer is grouped-query attention).
        d_head: width of one head (default d_model / n_head).
        gated_mlp: a gated MLP (SwiGLU, GeGLU): three d_model x d_ff matrices instead of two.
        tied: the output projection reuses the token embedding.
        learned_positions: a learned position table of n_ctx x d_model (rotary, sinusoidal or
            ALiBi positions have no parameters).
        attention_bias: biases on the q, k, v and output projections.
        mlp_bias: biases on the MLP's projections.
        norm: ``"layernorm"``, ``"rmsnorm"`` or ``"nonparametric"`` (:data:`NORM_WEIGHTS_PER_WIDTH`);
            two per block and one after the last.
    """

    d_model: int
    n_layer: int
    n_head: int
    vocab_size: int
    n_ctx: int
    d_ff: int | None = None
    n_kv_head: int | None = None
    d_head: int | None = None
    gated_mlp: bool = False
    tied: bool = True
    learned_positions: bool = True
    attention_bias: bool = True
    mlp_bias: bool = True
    norm: Literal["layernorm", "rmsnorm", "nonparametric"] = "layernorm"

    def __post_init__(self) -> None:
        for name in ("d_model", "n_layer", "n_head", "vocab_size", "n_ctx", "d_ff", "n_kv_head", "d_head"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"Architecture.{name} must be a positive integer; got {value!r}")
        if self.d_head is None and self.d_model % self.n_head:
            raise ValueError(f"Architecture.d_model ({self.d_model}) is not divisible by n_head ({self.n_head}); "
                             "give d_head")
        if self.n_head % self.kv_heads:
            raise ValueError(f"Architecture.n_head ({self.n_head}) must be a multiple of n_kv_head ({self.kv_heads})")
        if self.norm not in NORM_WEIGHTS_PER_WIDTH:
            raise ValueError(f"Architecture.norm must be one of {tuple(NORM_WEIGHTS_PER_WIDTH)}; got {self.norm!r}")

    @property
    def ff_width(self) -> int:
        return 4 * self.d_model if self.d_ff is None else self.d_ff

    @property
    def kv_heads(self) -> int:
        return self.n_head if self.n_kv_head is None else self.n_kv_head

    @property
    def head_width(self) -> int:
        return self.d_model // self.n_head if self.d_head is None else self.d_head

    @property
    def d_attn(self) -> int:
        """Kaplan's d_attn: the width of the queries (and of the attention's output), n_head d_head."""
        return self.n_head * self.head_width


class ParamCounts(NamedTuple):
    """Exact parameter counts (Pearce & Song Eq. 1: ``total = embedding + nonembedding``), the
    non-embedding ones split into matmul weights and biases + norm weights."""

    total: int
    embedding: int
    nonembedding: int
    nonembedding_weights: int
    biases_norms: int


def _block_weights(arch: Architecture) -> int:
    """The matrices of one block: q and the output (d x d_attn each), k and v (d x n_kv d_head
    each), and the MLP's two (three when gated) d x d_ff matrices."""
    d, kv = arch.d_model, arch.kv_heads * arch.head_width
    attention = 2 * d * arch.d_attn + 2 * d * kv
    return attention + (3 if arch.gated_mlp else 2) * d * arch.ff_width


def _block_biases_norms(arch: Architecture) -> int:
    """The vectors of one block: the biases its flags switch on and two norms."""
    d, kv = arch.d_model, arch.kv_heads * arch.head_width
    attention = arch.d_attn + 2 * kv + d if arch.attention_bias else 0
    mlp = ((2 if arch.gated_mlp else 1) * arch.ff_width + d) if arch.mlp_bias else 0
    return attention + mlp + 2 * NORM_WEIGHTS_PER_WIDTH[arch.norm] * d


def param_counts(arch: Architecture) -> ParamCounts:
    """N_T, N_E and N_\\E of ``arch``, exactly (Pearce & Song Eqs. 1-2).

    N_E holds the token embedding, a learned position table and an untied output projection
    (:func:`embedding_params`); N_\\E everything else: per block the attention and MLP matrices
    and their biases, two norms, and the final norm. This is how Pythia's model cards split
    "total" and "non-embedding" parameters.
    """
    embedding = embedding_params(arch.d_model, arch.vocab_size, arch.n_ctx, arch.learned_positions, arch.tied)
    weights = arch.n_layer * _block_weights(arch)
    small = arch.n_layer * _block_biases_norms(arch) + NORM_WEIGHTS_PER_WIDTH[arch.norm] * arch.d_model
    return ParamCounts(total_params(weights + small, embedding), embedding, weights + small, weights, small)


def _chinchilla_forward_per_token(arch: Architecture) -> int:
    """Hoffmann et al. (2022), Appendix F, per token of a sequence of n_ctx tokens: embeddings
    2 v d; per layer the q, k, v projections 2 d (d_attn + 2 n_kv d_head), the logits K Q^T and
    the weighted values 2 n_ctx d_attn each, the softmax 3 n_head n_ctx, the output projection
    2 d_attn d, the MLP 2 d d_ff per matrix; and the final logits 2 d v."""
    d, kv, t = arch.d_model, arch.kv_heads * arch.head_width, arch.n_ctx
    attention = 2 * d * (arch.d_attn + 2 * kv) + 4 * t * arch.d_attn + 3 * arch.n_head * t + 2 * arch.d_attn * d
    dense = 2 * (3 if arch.gated_mlp else 2) * d * arch.ff_width
    return 2 * arch.vocab_size * d + arch.n_layer * (attention + dense) + 2 * d * arch.vocab_size


def _deepseek_m(arch: Architecture) -> int:
    """DeepSeek-AI (2024), "DeepSeek LLM", Eq. 2: non-embedding FLOPs per token
    M = 72 n_layer d_model^2 + 12 n_layer d_model l_seq, counting the attention's own matmuls but
    not the vocabulary's. 72 n_layer d^2 is 6 x the block matrices of the standard shape
    (12 n_layer d^2); for other shapes (gated MLPs, grouped-query attention) the block matrices
    are counted as they are, so the standard shape gives Eq. 2 exactly."""
    return 6 * arch.n_layer * _block_weights(arch) + 12 * arch.n_layer * arch.d_attn * arch.n_ctx


#: Training FLOPs per token (forward + backward = 3 x forward) under the conventions in use:
#: name -> (what it counts, source).
FLOP_CONVENTIONS: dict[str, tuple[str, str]] = {
    "6N": ("6 N_T: every parameter, no attention term",
           "Hoffmann et al. (2022) Sec. 3 / Pearce & Song (2024) Eq. 3: C = 6 N_T D"),
    "6N_nonembedding": ("6 N_\\E: non-embedding parameters, no attention term",
                        "Kaplan et al. (2020) Sec. 2.1 / Pearce & Song (2024) Eq. 4: C = 6 N_\\E D"),
    "kaplan": ("6 N_\\E + 6 n_layer n_ctx d_attn",
               "Kaplan et al. (2020) Sec. 2.1, Table 1 (C_forward = 2 N + 2 n_layer n_ctx d_attn)"),
    "chinchilla": ("3 x the forward count of every matmul, the softmax, embeddings and logits",
                   "Hoffmann et al. (2022) Appendix F (compared with 6ND in their Table A4)"),
    "deepseek": ("M = 72 n_layer d^2 + 12 n_layer d l_seq (non-embedding, attention included)",
                 "DeepSeek-AI (2024), DeepSeek LLM, Eq. 2"),
}


def flops_per_token(arch: Architecture) -> dict[str, int]:
    """Training FLOPs per token of ``arch`` under each convention of :data:`FLOP_CONVENTIONS`.

    The attention terms take the full context n_ctx (no halving for the causal mask), as each
    paper does. Hoffmann et al.'s Table A4 ratios are reproduced, by the authors' later account
    (reported with Karpathy's nanoGPT notebook), without the embedding and logit terms their
    Appendix F lists; the count here is Appendix F as printed.
    """
    counts = param_counts(arch)
    return {
        "6N": 6 * counts.total,
        "6N_nonembedding": 6 * counts.nonembedding,
        "kaplan": training_flops_per_token(counts.nonembedding, arch.n_layer, arch.n_ctx, arch.d_attn),
        "chinchilla": 3 * _chinchilla_forward_per_token(arch),
        "deepseek": _deepseek_m(arch),
    }
