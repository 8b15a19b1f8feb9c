"""Cross-entropy over a vocabulary in blocks, never holding the whole (rows x vocabulary) logits.

For hidden states h_r (one row per predicted token) and output embeddings w_v (one per vocabulary
entry), the loss of row r with target t_r is

    l_r = log sum_v exp(z_rv) - z_{r t_r},    z_rv = h_r . w_v.

The log-sum-exp is accumulated online over blocks B of the vocabulary (Milakov & Gimelshein
2018, "Online normalizer calculation for softmax"):

    m_r <- max(m_r, max_{v in B} z_rv),   s_r <- s_r exp(m_r,old - m_r) + sum_{v in B} exp(z_rv - m_r),

and log sum_v exp(z_rv) = m_r + log s_r. Its gradient, with p_rv = exp(z_rv - lse_r) and the
cotangent g_r of l_r:

    dL/dh_r = g_r (sum_v p_rv w_v - w_{t_r}),    dL/dw_v = sum_r g_r (p_rv - [t_r = v]) h_r.

The backward pass recomputes each block's logits from h and the saved lse_r (a
``jax.custom_vjp``), so neither pass holds more than one block of logits: at the ``paper``
preset's 65,536 rows and 50,257 entries that is 0.5 GB per 2048-entry block in float32 against
13 GB for the whole array. Products run in the compute dtype and accumulate in float32; the
log-sum-exp, the probabilities and the gradients' sums are float32.

Neither JAX (0.10), optax (0.2.8) nor Flax (0.12) offers a fused or blocked cross-entropy for
these versions (optax's ``softmax_cross_entropy_with_integer_labels`` takes the whole logits).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

#: Vocabulary entries per block (fewer when the vocabulary is smaller).
VOCAB_BLOCK = 2048


def _blocks(w: jax.Array, block: int) -> tuple[jax.Array, jax.Array]:
    """``w`` (vocab, d) zero-padded to whole blocks, as (n_blocks, block, d), and each block's first index."""
    vocab, d = w.shape
    n_blocks = -(-vocab // block)
    padded = jnp.pad(w, ((0, n_blocks * block - vocab), (0, 0)))
    return padded.reshape(n_blocks, block, d), jnp.arange(n_blocks) * block


def _block_logits(h: jax.Array, w_block: jax.Array, start: jax.Array, vocab: int, dtype: str) -> jax.Array:
    """z = h W_B^T for one block in ``dtype`` with float32 accumulation; padding entries -inf."""
    z = jnp.dot(h.astype(dtype), w_block.astype(dtype).T, preferred_element_type=jnp.float32)
    entry = start + jnp.arange(w_block.shape[0])
    return jnp.where(entry < vocab, z, -jnp.inf)


def _target_logits(h: jax.Array, w: jax.Array, targets: jax.Array, dtype: str) -> jax.Array:
    """z_{r t_r}, rounded to ``dtype`` and summed in float32 as the blocks' products are."""
    rows = h.astype(dtype).astype(jnp.float32)
    return jnp.sum(rows * w[targets].astype(dtype).astype(jnp.float32), axis=-1)


def _log_sum_exp(h: jax.Array, w: jax.Array, block: int, dtype: str) -> jax.Array:
    """lse_r = log sum_v exp(h_r . w_v), accumulated online over the vocabulary's blocks."""
    vocab = w.shape[0]
    w_blocks, starts = _blocks(w, block)

    def accumulate(carry: tuple[jax.Array, jax.Array], xs: tuple[jax.Array, jax.Array]):
        m, s = carry
        z = _block_logits(h, *xs, vocab, dtype)
        m_new = jnp.maximum(m, jnp.max(z, axis=-1))
        s = s * jnp.exp(m - m_new) + jnp.sum(jnp.exp(z - m_new[:, None]), axis=-1)
        return (m_new, s), None

    rows = h.shape[0]
    start = (jnp.full((rows,), -jnp.inf, jnp.float32), jnp.zeros((rows,), jnp.float32))
    (m, s), _ = jax.lax.scan(accumulate, start, (w_blocks, starts))
    return m + jnp.log(s)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _losses(h: jax.Array, w: jax.Array, targets: jax.Array, block: int, dtype: str) -> jax.Array:
    return _log_sum_exp(h, w, block, dtype) - _target_logits(h, w, targets, dtype)


def _losses_forward(h: jax.Array, w: jax.Array, targets: jax.Array, block: int, dtype: str):
    lse = _log_sum_exp(h, w, block, dtype)
    return lse - _target_logits(h, w, targets, dtype), (h, w, targets, lse)


def _losses_backward(block: int, dtype: str, residuals: tuple[jax.Array, ...], g: jax.Array):
    h, w, targets, lse = residuals
    vocab, d = w.shape
    w_blocks, starts = _blocks(w, block)
    h_c = h.astype(dtype)

    def accumulate(dh: jax.Array, xs: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        w_block, start = xs
        p = jnp.exp(_block_logits(h, w_block, start, vocab, dtype) - lse[:, None]) * g[:, None]
        p_c = p.astype(dtype)
        dh = dh + jnp.dot(p_c, w_block.astype(dtype), preferred_element_type=jnp.float32)
        return dh, jnp.dot(p_c.T, h_c, preferred_element_type=jnp.float32)

    dh, dw_blocks = jax.lax.scan(accumulate, jnp.zeros(h.shape, jnp.float32), (w_blocks, starts))
    dh = dh - g[:, None] * w[targets].astype(dtype).astype(jnp.float32)
    dw = dw_blocks.reshape(-1, d)[:vocab].at[targets].add(-g[:, None] * h_c.astype(jnp.float32))
    return dh.astype(h.dtype), dw.astype(w.dtype), None


_losses.defvjp(_losses_forward, _losses_backward)


def blocked_cross_entropy(
    h: jax.Array, w: jax.Array, targets: jax.Array, block: int = VOCAB_BLOCK, dtype: str = "float32"
) -> jax.Array:
    """Per-row cross-entropy (nats) of the logits ``h @ w.T`` against ``targets``, computed
    ``block`` vocabulary entries at a time (module docstring for the equations).

    Args:
        h: hidden states, shape (rows, d).
        w: output embeddings, shape (vocab, d) (a tied model's token embedding, or an untied
            head's kernel transposed).
        targets: integer targets, shape (rows,), each in [0, vocab).
        block: vocabulary entries per block (at most the vocabulary: one block then).
        dtype: the products' dtype ("float32" or "bfloat16"); sums are float32.

    Returns:
        float32 losses, shape (rows,).
    """
    if block < 1:
        raise ValueError(f"block must be a positive number of vocabulary entries; got {block}")
    return _losses(h, w, targets, min(int(block), w.shape[0]), str(dtype))
