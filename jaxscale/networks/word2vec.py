"""word2vec: skip-gram and CBOW with negative sampling or hierarchical softmax, in plain JAX.

Mikolov et al. 2013a ("Efficient Estimation of Word Representations in Vector Space") define the
two log-linear architectures (§3): CBOW predicts the centre word from the average of its context
vectors, with cost per training word Q = N x D + D x log2(V) (Eq. 4); skip-gram predicts each
context word from the centre word, Q = C x (D + D x log2(V)) (Eq. 5). Mikolov et al. 2013b
("Distributed Representations of Words and Phrases") give the two output layers used here:

- negative sampling (Eq. 4): maximise log s(v'_O . h) + sum_{i=1..k} E_{w_i ~ P_n} log s(-v'_{w_i} . h);
  as in the word2vec tool, skip-gram's pair (centre c, context o) uses h = v_o to predict c
  (the pairs are symmetric, and this orientation trained better than h = v_c); with the
  hierarchical softmax a batch example is a centre word with all its pairs, which share c's path;
- hierarchical softmax (Eq. 3): p(w | h) = prod_{j=1}^{L(w)-1} s([[n(w,j+1) = ch(n(w,j))]] v'_{n(w,j)} . h)
  over the Huffman path of w,

where s is the logistic sigmoid and h is the input vector of the centre word (skip-gram) or the
mean of the context vectors (CBOW).

Training is plain SGD on those log-likelihoods, exactly as the word2vec tool does it: each example
adds ``alpha * gradient`` to the rows it touched (sparse ``.at[].add``), with ``alpha`` decaying
linearly over training. Examples are processed in batches of ``batch`` inside one
``jax.lax.scan``; for negative sampling, each block of ``neg_block`` consecutive examples shares
its k negative words, which turns the negative scores into a small matrix product (every example
still sees k draws from P_n, as in Eq. 4); with the hierarchical softmax, CBOW's target paths come
packed back to back (no padding to the longest path), skip-gram's as one padded block per centre.
All arrays are float32 explicitly, so training is unaffected by ``jax_enable_x64``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial, reduce
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

MODELS = ("skipgram", "cbow")
LOSSES = ("neg", "hs")
EXAMPLE_BUILDERS = ("auto", "host", "device")
CHUNK_EXAMPLES = 1 << 17  # examples per compiled scan call when steps_per_chunk is not given...
# ...but never fewer steps than this: a strided batch takes every S-th example of its chunk, and
# consecutive examples share rows over ~2C centres (~60 skip-gram pairs), so large batches need
# S >= ~64 to hold nearly distinct rows. Skip-gram NEG, batch 32768, 1 epoch on the benchmark
# corpus: S = 4 diverged (NaN; 11.7% with neg_row_cap 256), S = 16 13.2%, S = 64 14.5% analogy
# accuracy (only these three were tried; larger S was not). Batches up to 2048 are unaffected
# (they already take 2^17 / batch >= 64 steps).
MIN_STEPS_PER_CHUNK = 64
DROPPED_ROW = np.iinfo(np.int32).max  # a row index past every table: its sparse update is skipped
#: Sparse updates of one table: row indices R and their SGD steps, of shape R.shape + (d,).
RowSteps = tuple[jax.Array, jax.Array]
#: An output layer's step: summed log-likelihood, the SGD step for h, and the output rows' RowSteps.
OutputStep = tuple[jax.Array, jax.Array, jax.Array, jax.Array]
#: One compiled chunk of SGD steps: (params, batches) -> (params, summed negative log-likelihood).
ChunkStep = Callable[["Word2VecParams", "Batch"], tuple["Word2VecParams", jax.Array]]


@dataclass(frozen=True)
class Word2VecConfig:
    """Hyper-parameters (defaults: the word2vec tool's, with the issue's skip-gram NEG-5 setup)."""

    model: str = "skipgram"
    loss: str = "neg"
    dim: int = 100
    window: int = 5
    negative: int = 5
    sample: float = 1e-4
    min_count: int = 5
    epochs: int = 1
    alpha: float | None = None  # None: 0.025 for skip-gram, 0.05 for CBOW (Mikolov's defaults)
    min_alpha_ratio: float = 1e-4  # alpha never drops below alpha * min_alpha_ratio
    # examples per SGD step; None: 1024 for NEG (256 scored the same on the benchmark, 1.4x slower),
    # 256 for HS (its (batch, path, d) tensors then stay in cache: 1.3-1.45x faster than 1024;
    # a skip-gram HS example is a centre word with its ~2C pairs; 128 and 512 were not faster)
    batch: int | None = None
    neg_block: int = 16  # consecutive examples sharing their k negatives
    strided: bool = True  # a batch takes every steps_per_chunk-th example of its chunk (see train)
    hs_row_cap: float = 16.0  # HS: most examples' worth of summed step an inner node takes per batch
    # NEG: most examples' worth of summed step a row of either table takes per batch (None: uncapped).
    # The default batch needs none, nor does 32768; 65536 does: skip-gram NEG diverged (NaN) in one
    # epoch uncapped and reached 14.2% analogy accuracy with a cap of 256 (64 steps a chunk, CPU)
    neg_row_cap: float | None = None
    # skip-gram HS: centre words whose path products are computed together (64: their (64, L, d)
    # node block, ~0.5 MB, stays in a core's 1 MB L2; 1.22x faster than one block of 256 on the
    # 2-core benchmark VM, where 32 and 128 were slower than 64)
    hs_block: int = 64
    # SGD steps per compiled scan call; None: CHUNK_EXAMPLES / batch, at least MIN_STEPS_PER_CHUNK
    steps_per_chunk: int | None = None
    sentence_length: int = 10_000  # corpus cut into sentences of this many words (as Text8Corpus)
    seed: int = 1
    # who builds the examples: numpy on the host ("host"), or the accelerator from each chunk's kept
    # words ("device": the host's ~0.2 us per word would cap an accelerator near gensim's speed);
    # "auto": the device on a GPU or TPU where the architecture allows it, else the host
    examples: str = "auto"

    def __post_init__(self) -> None:
        if self.batch is None:
            object.__setattr__(self, "batch", 1024 if self.loss == "neg" else 256)
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1; got {self.batch}")
        if self.steps_per_chunk is None:
            object.__setattr__(self, "steps_per_chunk", max(MIN_STEPS_PER_CHUNK, CHUNK_EXAMPLES // self.batch))
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}; got {self.model!r}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}; got {self.loss!r}")
        if self.examples not in EXAMPLE_BUILDERS:
            raise ValueError(f"examples must be one of {EXAMPLE_BUILDERS}; got {self.examples!r}")
        for name in ("dim", "window", "epochs", "min_count", "neg_block", "hs_block",
                     "steps_per_chunk", "sentence_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)}")
        if self.loss == "neg" and self.negative < 1:
            raise ValueError(f"negative must be >= 1 for loss='neg'; got {self.negative}")
        if self.batch % self.neg_block:
            raise ValueError(f"batch ({self.batch}) must be a multiple of neg_block ({self.neg_block})")
        if self.sample < 0:
            raise ValueError(f"sample must be >= 0; got {self.sample}")
        if self.neg_row_cap is not None and not self.neg_row_cap > 0:
            raise ValueError(f"neg_row_cap must be > 0 or None; got {self.neg_row_cap}")
        if self.alpha is not None and not self.alpha > 0:
            raise ValueError(f"alpha must be > 0; got {self.alpha}")

    @property
    def learning_rate(self) -> float:
        if self.alpha is not None:
            return self.alpha
        return 0.025 if self.model == "skipgram" else 0.05


class Word2VecParams(NamedTuple):
    """Input vectors v_w (the word embeddings) and output vectors v'_w (or inner-node vectors)."""

    w_in: jax.Array  # (V, d)
    w_out: jax.Array  # (V, d) for NEG, (V - 1, d) inner nodes for HS


class HuffmanPaths(NamedTuple):
    """Device copy of a :class:`jaxscale.word2vec.huffman.HuffmanTree`, one int32 per path entry.

    ``paths[w, j] = 4 n + 2 c + 1`` for the j-th inner node n of w's path and its code c; entries
    past the path's end hold ``4 root`` (valid bit 0). One gather then fetches node, code and
    mask, and padding reads and writes the root's row, which every path keeps in cache.
    """

    paths: jax.Array  # (V, L) int32


class Batch(NamedTuple):
    """One SGD step's examples.

    ``inputs`` holds one context word (skip-gram NEG, shape (B,)) or all of them (CBOW and
    skip-gram HS, shape (B, 2C) with ``input_mask``); ``targets`` the centre word; ``alpha`` the
    learning rate of each example (0 marks padding); ``negatives`` (B / neg_block, k).

    With the hierarchical softmax and one input vector per target (CBOW), ``paths`` holds the
    targets' Huffman paths packed back to back, without padding to the longest path, and
    ``path_owner`` the example each entry belongs to. Both are (G, E): the batch's examples
    split into G equal groups (one per device), entries of a group numbered within it, its
    padding entries (valid bit 0) owned by its last example so owners stay sorted
    (:func:`jaxscale.word2vec.train.pack_paths` builds them). Unused otherwise: (G, 1) zeros.
    """

    inputs: jax.Array
    input_mask: jax.Array
    targets: jax.Array
    alpha: jax.Array
    negatives: jax.Array
    paths: jax.Array
    path_owner: jax.Array


def init_params(vocab_size: int, config: Word2VecConfig) -> Word2VecParams:
    """gensim's initialisation: v_w ~ U[-1/d, 1/d), v'_w = 0 (float32).

    (The C tool draws from U[-0.5/d, 0.5/d); the wider range breaks symmetry faster and gave
    visibly better analogy accuracy after one epoch on small corpora.)
    """
    rng = np.random.default_rng(config.seed)
    w_in = (rng.random((vocab_size, config.dim), dtype=np.float32) * 2 - 1.0) / config.dim
    n_out = vocab_size if config.loss == "neg" else vocab_size - 1
    return Word2VecParams(jnp.asarray(w_in, jnp.float32), jnp.zeros((n_out, config.dim), jnp.float32))


def huffman_paths(points: np.ndarray, codes: np.ndarray, lengths: np.ndarray) -> HuffmanPaths:
    """Move a Huffman tree to the device, packed as :class:`HuffmanPaths` describes."""
    valid = np.arange(points.shape[1])[None, :] < np.asarray(lengths)[:, None]
    root = points[0, 0]  # every path starts at the root
    entries = 4 * points.astype(np.int64) + 2 * codes + 1
    return HuffmanPaths(jnp.asarray(np.where(valid, entries, 4 * root), jnp.int32))


def path_entries(entries: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Inner nodes and signs (1 - 2c on the path, 0 past its end) of packed path entries."""
    return entries >> 2, ((entries & 1) * (1 - (entries & 2))).astype(jnp.float32)


def hidden(w_in: jax.Array, batch: Batch, model: str) -> jax.Array:
    """h: the mean of the context vectors (CBOW, (B, d)) or each input word's own vector (skip-gram:
    (B, d) for one context word per example, (B, 2C, d) for a centre word's whole context)."""
    if model == "skipgram":
        return w_in[batch.inputs]
    summed = jnp.einsum("bc,bcd->bd", batch.input_mask, w_in[batch.inputs])
    count = jnp.maximum(batch.input_mask.sum(-1, keepdims=True), 1.0)
    return summed / count


def log_sigmoid_and_complement(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """log s(x) and s(-x) = 1 - s(x) from one exponential, exp(-|x|) (stable for any x)."""
    e = jnp.exp(-jnp.abs(x))
    return jnp.minimum(x, 0.0) - jnp.log1p(e), jnp.where(x >= 0, e, 1.0) / (1.0 + e)


def negative_sampling(w_out: jax.Array, h: jax.Array, batch: Batch, neg_block: int) -> OutputStep:
    """NEG output layer (Mikolov 2013b Eq. 4) with negatives shared by blocks of examples.

    Returns (-loss summed over examples, SGD step for h, output rows touched, their SGD steps:
    index array R and steps of shape R.shape + (d,)).
    A sampled negative equal to the example's target is skipped, as in word2vec.
    """
    b, d = h.shape
    g = b // neg_block
    alpha = batch.alpha.reshape(g, neg_block)
    hb = h.reshape(g, neg_block, d)
    pos = w_out[batch.targets].reshape(g, neg_block, d)
    neg = w_out[batch.negatives]  # (g, k, d)
    valid = batch.negatives[:, None, :] != batch.targets.reshape(g, neg_block)[:, :, None]
    s_pos = jnp.sum(hb * pos, -1)
    s_neg = jnp.einsum("gbd,gkd->gbk", hb, neg)
    log_pos, s_pos_c = log_sigmoid_and_complement(s_pos)
    log_neg, s_neg_c = log_sigmoid_and_complement(-s_neg)
    loglik = log_pos + jnp.sum(valid * log_neg, -1)
    g_pos = s_pos_c * alpha  # alpha * d loglik / d s_pos = alpha (1 - s(s_pos))
    g_neg = -s_neg_c * valid * alpha[..., None]  # s(-(-s_neg)) = s(s_neg)
    dh = g_pos[..., None] * pos + jnp.einsum("gbk,gkd->gbd", g_neg, neg)
    d_pos = g_pos[..., None] * hb
    d_neg = jnp.einsum("gbk,gbd->gkd", g_neg, hb)
    rows = jnp.concatenate([batch.targets, batch.negatives.reshape(-1)])
    steps = jnp.concatenate([d_pos.reshape(b, d), d_neg.reshape(-1, d)])
    return jnp.sum(loglik * (batch.alpha > 0).reshape(g, neg_block)), dh.reshape(b, d), rows, steps


def whole_batch(x: jax.Array) -> jax.Array:
    """The whole batch's total of a count taken over one device's share of it: on one device,
    the count itself (data-parallel training passes a sum over the devices instead)."""
    return x


def capped_row_steps(g: jax.Array, rows: jax.Array, uses_per_entry: jax.Array, n_rows: int,
                     row_cap: float, batch_total: Callable[[jax.Array], jax.Array] = whole_batch) -> jax.Array:
    """Scale the steps ``g`` of entries whose table row (an inner node, or a word's vector) is used
    by more than ``row_cap`` examples of the batch down to ``row_cap`` examples' worth (see
    :func:`hierarchical_softmax`). ``rows`` and ``uses_per_entry`` have the shape of ``g`` less its
    trailing axes; ``batch_total`` adds the uses of the other devices' shares of the batch."""
    uses = batch_total(jnp.zeros(n_rows, jnp.float32).at[rows].add(uses_per_entry))
    factor = jnp.minimum(1.0, row_cap / jnp.maximum(uses[rows], 1.0))
    return g * factor.reshape(factor.shape + (1,) * (g.ndim - factor.ndim))


def hierarchical_softmax(w_out: jax.Array, h: jax.Array, batch: Batch, tree: HuffmanPaths, row_cap: float,
                         block: int, batch_total: Callable[[jax.Array], jax.Array] = whole_batch) -> OutputStep:
    """HS output layer (Mikolov 2013b Eq. 3) along the Huffman path of each target.

    At inner node n with branch code c, the factor is s((1 - 2c) v'_n . h) (word2vec's
    convention: code 0 is the [[...]] = +1 branch). Returns the same tuple as
    :func:`negative_sampling`.

    ``h`` is (B, d), one input vector per target (:func:`packed_paths_softmax`), or (B, K, d):
    K input vectors (skip-gram's context words, weighted by ``input_mask``) that each predict
    the same target. The second form is skip-gram's pairs grouped by centre word: the path's
    nodes are gathered, and their summed steps scattered, once per centre instead of once per
    pair, as (B, K) x (B, L) batched products over paths padded to the longest, L, computed
    ``block`` centres at a time (:func:`context_set_products`).

    The top of the tree lies on every path, so in a batch the root receives B summed steps where
    the sequential tool applies them one at a time with feedback; that diverges. An inner node
    used by more than ``row_cap`` examples (pairs) of the batch therefore gets its summed step
    scaled to ``row_cap`` examples' worth (deeper, rarer nodes are untouched); with the batch
    split over devices the uses are counted over all of them (``batch_total``).
    """
    if h.ndim == 2:
        return packed_paths_softmax(w_out, h, batch, row_cap, batch_total)
    weight = batch.input_mask  # (B, K)
    points, sign = path_entries(tree.paths[batch.targets])  # (B, L) each
    starts = range(0, h.shape[0], block)

    def part(x: jax.Array, i: int) -> jax.Array:
        return x[i:i + block]

    products = [context_set_products(w_out[part(points, i)], part(h, i), part(sign, i), part(weight, i),
                                     part(batch.alpha, i)) for i in starts]
    loglik = sum(p[0] for p in products)
    g, dh = (jnp.concatenate([p[k] for p in products]) for k in (1, 2))
    g_out = capped_row_steps(g.swapaxes(1, 2), points, jnp.abs(sign) * weight.sum(1, keepdims=True),
                              w_out.shape[0], row_cap, batch_total)
    # a materialised (B, L, K) copy: XLA CPU's fast batched matmul wants the contraction minor
    g_out = jax.lax.optimization_barrier(g_out)
    steps = jnp.concatenate([jnp.einsum("blk,bkd->bld", part(g_out, i), part(h, i)) for i in starts])
    return loglik, dh, points, steps


def context_set_products(nodes: jax.Array, h: jax.Array, sign: jax.Array, weight: jax.Array,
                         alpha: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Log-likelihood, score steps g (B, K, L) and input steps (B, K, d) of a block of centre
    words: K weighted context vectors ``h`` (B, K, d) against the nodes (B, L, d) of the
    centre's path. Blocks are independent, so XLA runs them concurrently, and a block's nodes
    stay in cache between its two products."""
    sign3 = sign[:, None, :]
    scores = jnp.einsum("bkd,bld->bkl", h, nodes)
    on = jnp.abs(sign3) * weight[..., None] * (alpha > 0)[:, None, None]
    log_s, s_neg = log_sigmoid_and_complement(sign3 * scores)
    g = sign3 * s_neg * (weight * alpha[:, None])[..., None]  # alpha * d loglik / d score
    return jnp.sum(on * log_s), g, jnp.einsum("bkl,bld->bkd", g, nodes)


def packed_paths_softmax(w_out: jax.Array, h: jax.Array, batch: Batch, row_cap: float,
                         batch_total: Callable[[jax.Array], jax.Array] = whole_batch) -> OutputStep:
    """:func:`hierarchical_softmax` for one input vector h (B, d) per target, on the packed
    path entries of :class:`Batch` (``paths``, ``path_owner``): each entry's node is gathered,
    scored against its owner's h and stepped once, so no work goes to padding up to the
    longest path (on a 68k-word vocabulary the paths of the training words average 13.7
    nodes, the longest 22)."""
    groups, _ = batch.paths.shape
    owner = (batch.path_owner + (h.shape[0] // groups) * jnp.arange(groups)[:, None]).reshape(-1)
    points, sign = path_entries(batch.paths.reshape(-1))  # (E,) each
    nodes = w_out[points]  # (E, d)
    h_entry = h[owner]
    alpha = batch.alpha[owner]
    log_s, s_neg = log_sigmoid_and_complement(sign * jnp.sum(h_entry * nodes, -1))
    loglik = jnp.sum(jnp.abs(sign) * (alpha > 0) * log_s)
    g = sign * s_neg * alpha  # alpha * d loglik / d score
    dh = jax.ops.segment_sum(g[:, None] * nodes, owner, num_segments=h.shape[0], indices_are_sorted=True)
    g_out = capped_row_steps(g, points, jnp.abs(sign), w_out.shape[0], row_cap, batch_total)
    return loglik, dh, points, g_out[:, None] * h_entry


def input_updates(batch: Batch, dh: jax.Array, model: str) -> tuple[jax.Array, jax.Array]:
    """Rows of the input vectors to move and their steps: each input word's step goes to it
    (skip-gram), or the step for the mean h goes in full to every context word (CBOW, as in
    word2vec and gensim's ``cbow_mean``).

    Empty context slots (``input_mask`` 0) get the row :data:`DROPPED_ROW`, past every table,
    so :func:`apply_updates` skips them instead of adding zeros to row 0: the same vectors,
    and CBOW's scatter-add does ~40% fewer row updates (a centre's 2C slots hold ~C + 1 words).
    """
    if batch.inputs.ndim == 1:  # skip-gram NEG: one context word per example, none empty
        return batch.inputs, dh
    rows = jnp.where(batch.input_mask > 0, batch.inputs, DROPPED_ROW)
    if model == "skipgram":
        return rows, dh
    return rows, jnp.broadcast_to(dh[:, None, :], (*rows.shape, dh.shape[-1]))


def sparse_updates(params: Word2VecParams, batch: Batch, config: Word2VecConfig, tree: HuffmanPaths | None,
                   batch_total: Callable[[jax.Array], jax.Array] = whole_batch) -> tuple[jax.Array, RowSteps, RowSteps]:
    """The SGD step of a batch as sparse row updates: (nll, (in_rows, in_steps), (out_rows, out_steps))."""
    h = hidden(params.w_in, batch, config.model)
    if config.loss == "hs":
        loglik, dh, out_rows, out_steps = hierarchical_softmax(params.w_out, h, batch, tree, config.hs_row_cap,
                                                                  config.hs_block, batch_total)
        return -loglik, input_updates(batch, dh, config.model), (out_rows, out_steps)
    loglik, dh, out_rows, out_steps = negative_sampling(params.w_out, h, batch, config.neg_block)
    in_rows, in_steps = input_updates(batch, dh, config.model)
    if config.neg_row_cap is not None:  # uses: live examples (targets, inputs), a block's for a negative
        alive = (batch.alpha > 0).astype(jnp.float32)
        in_uses = alive if config.model == "skipgram" else batch.input_mask * alive[:, None]
        out_uses = jnp.concatenate([alive, jnp.repeat(alive.reshape(-1, config.neg_block).sum(1), config.negative)])
        cap = partial(capped_row_steps, row_cap=config.neg_row_cap, batch_total=batch_total)
        in_steps = cap(in_steps, in_rows, in_uses, params.w_in.shape[0])
        out_steps = cap(out_steps, out_rows, out_uses, params.w_out.shape[0])
    return -loglik, (in_rows, in_steps), (out_rows, out_steps)


def apply_updates(params: Word2VecParams, inputs: RowSteps, outputs: RowSteps) -> Word2VecParams:
    """Add the sparse steps to their rows (``.at[].add``: repeated rows accumulate; rows past
    the table, :data:`DROPPED_ROW`, are skipped).

    Input rows given per context slot, (B, 2C) with steps (B, 2C, d), are added one slot at a
    time: 2C scatter-adds of B rows, each reading its slot's steps where they lie (for CBOW, dh
    itself: XLA never materialises the broadcast), rather than one scatter of 2C B rows from a
    (B, 2C, d) copy. The same sums, added in another order; on the 2-core CPU the device step ran
    1.22x faster for CBOW NEG, 1.08x for CBOW HS and 1.05x for skip-gram HS."""
    def add(table: jax.Array, rows: jax.Array, steps: jax.Array) -> jax.Array:
        return table.at[rows].add(steps, mode="drop")

    rows, steps = inputs
    if rows.ndim == 1:
        w_in = add(params.w_in, rows, steps)
    else:
        w_in = reduce(lambda table, k: add(table, rows[:, k], steps[:, k]), range(rows.shape[1]), params.w_in)
    return Word2VecParams(w_in, add(params.w_out, *outputs))


def sgd_step(params: Word2VecParams, batch: Batch, config: Word2VecConfig,
             tree: HuffmanPaths | None) -> tuple[Word2VecParams, jax.Array]:
    """One SGD step on a batch; returns the new params and the batch's negative log-likelihood."""
    nll, inputs, outputs = sparse_updates(params, batch, config, tree)
    return apply_updates(params, inputs, outputs), nll


def data_parallel_step(params: Word2VecParams, batch: Batch, config: Word2VecConfig,
                       tree: HuffmanPaths | None) -> tuple[Word2VecParams, jax.Array]:
    """:func:`sgd_step` with the batch split over the devices of axis ``"data"``.

    Each device computes the sparse updates of its share of the examples from the replicated
    tables; the updates (not dense gradients) are all-gathered and every device applies all of
    them, so the replicas stay identical at the cost of B x d numbers of traffic per step. The
    hierarchical softmax's per-node cap counts a node's uses over the whole batch (a sum over
    the devices), so the step is the one-device step.
    """
    nll, inputs, outputs = sparse_updates(params, batch, config, tree, partial(jax.lax.psum, axis_name="data"))
    gather = partial(jax.lax.all_gather, axis_name="data", tiled=True)
    return apply_updates(params, jax.tree.map(gather, inputs), jax.tree.map(gather, outputs)), jax.lax.psum(
        nll, "data"
    )


def data_mesh(devices: int) -> jax.sharding.Mesh:
    """The first ``devices`` local devices as the one mesh axis ``"data"`` that batches split over."""
    return jax.make_mesh(
        (devices,), ("data",), axis_types=(jax.sharding.AxisType.Auto,), devices=jax.local_devices()[:devices]
    )


def make_train_chunk(config: Word2VecConfig, tree: HuffmanPaths | None = None, devices: int | None = None) -> ChunkStep:
    """A jitted function ``(params, batches) -> (params, nll)`` scanning one SGD step per batch.

    ``batches`` is a :class:`Batch` whose arrays carry a leading steps axis; ``nll`` is the summed
    negative log-likelihood of the chunk. The parameter buffers are donated (updated in place).
    With several local devices (default: all of them) each batch is split across them
    (:func:`data_parallel_step`) and the parameters are replicated over them first (parameters
    restored from a checkpoint sit on one device); with one, the step is :func:`sgd_step`.
    """
    devices = jax.local_device_count() if devices is None else devices
    if devices > 1 and (config.batch // config.neg_block) % devices:
        raise ValueError(
            f"batch / neg_block = {config.batch // config.neg_block} blocks must split evenly over {devices} devices"
        )
    step = sgd_step if devices == 1 else data_parallel_step

    def scan_chunk(params: Word2VecParams, batches: Batch):
        params, nll = jax.lax.scan(lambda p, b: step(p, b, config, tree), params, batches)
        return params, jnp.sum(nll)

    if devices > 1:
        mesh = data_mesh(devices)
        shard = Batch(*[P(None, "data")] * len(Batch._fields))
        # replicas stay equal by construction (all devices apply the same gathered updates)
        sharded = jax.jit(jax.shard_map(
            scan_chunk, mesh=mesh, in_specs=(P(), shard), out_specs=(P(), P()), check_vma=False
        ), donate_argnums=0)
        replicated = jax.sharding.NamedSharding(mesh, P())
        return lambda params, batches: sharded(jax.device_put(params, replicated), batches)
    return jax.jit(scan_chunk, donate_argnums=0)
