"""word2vec examples built on the device: the host sends each chunk's kept words, nothing more.

The host path (:mod:`jaxscale.word2vec.train`) builds every example with numpy, 0.1-0.3 us per
corpus word on one core: enough to feed a CPU step, but a ceiling of a few million words/s that
would leave an accelerator idle. Here the host only subsamples the epoch (the same draws as the
host path, so the same kept words) and cuts the kept words into spans of one chunk's centre words,
with ``window`` words of halo on each side. One jitted function then draws each centre's radius R
uniformly from 1..C (Mikolov et al. 2013a §3.2), builds the context windows and their masks, and
draws the negatives from P_n (Mikolov et al. 2013b §2.2), with ``jax.random`` keyed by (seed,
epoch, chunk): training stays deterministic for a seed, and a resumed run replays the same stream.

The layouts are the host path's, so the SGD step is the same function: CBOW and skip-gram HS take
one example per centre word with its 2C context slots and their mask; skip-gram NEG takes one
example per (context, centre) slot, the masked slots with alpha 0 (with C = 5 about 40% of them,
the price of fixed shapes), in blocks widened so that a step holds the host's blocks of pairs
on average (:func:`pair_slot_layout`). The radii and negatives come from another generator than
the host path's, so the two paths train on different (equally distributed) streams. CBOW with
the hierarchical softmax packs its paths on the host and is not built here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jaxscale.networks.word2vec import Batch, Word2VecConfig, data_mesh
from jaxscale.word2vec.examples import (
    kept_words,
    learning_rates,
    one_example_per_pair,
    packs_paths,
    span_windows,
    step_major,
    with_halo,
)


class CentreSpan(NamedTuple):
    """One chunk's n centre words, as :func:`device_batches` reads them (C = ``window``)."""

    words: np.ndarray  # (n + 2C,) int32: the kept words from C before the first centre to C after the last
    sentence: np.ndarray  # (n + 2C,) int32 sentence numbers; -1 before the corpus, -2 after it
    alpha: np.ndarray  # (n,) float32 learning rate of each centre; 0 past the epoch's last kept word
    last_position: int  # corpus index of the span's last centre word (for progress)


def pair_slot_layout(config: Word2VecConfig) -> Word2VecConfig:
    """Skip-gram NEG's step in slots: the host's step, ``batch / neg_block`` blocks of
    ``neg_block`` pairs sharing their negatives, with each block widened to the slots that hold
    ``neg_block`` pairs on average. A centre's 2C slots hold 2R pairs, E[2R] = C + 1 for R uniform
    on 1..C, so a block takes ceil(neg_block x 2C / (C + 1)) slots (27 for 16 pairs, C = 5), and a
    chunk about as many slots as the host's chunk has pairs. Blocks of ``neg_block`` slots (~40%
    of them empty for C = 5) trained 0.3-0.8 analogy points worse after one epoch (means over 5
    seeds; see docs/benchmarks.md, "Examples built on the accelerator")."""
    block = int(np.ceil(config.neg_block * 2 * config.window / (config.window + 1)))
    blocks = config.batch // config.neg_block
    steps = max(1, config.steps_per_chunk * config.batch // (blocks * block))
    return dataclasses.replace(config, batch=blocks * block, neg_block=block, steps_per_chunk=steps)


def centres_per_chunk(config: Word2VecConfig) -> int:
    """Centre words of one chunk: a chunk holds ``steps_per_chunk x batch`` examples, which for
    skip-gram NEG are the 2C context slots of each centre."""
    examples = config.steps_per_chunk * config.batch
    return examples // (2 * config.window) if one_example_per_pair(config) else examples


def centre_spans(ids: np.ndarray, keep: np.ndarray, config: Word2VecConfig, epoch: int) -> Iterator[CentreSpan]:
    """The host's share of an epoch: subsample the corpus, then one :class:`CentreSpan` per chunk."""
    rng = np.random.default_rng([config.seed, epoch])
    kept_pos, kept, sentence = kept_words(ids, keep, config, rng)
    halo, n = config.window, centres_per_chunk(config)
    words, sentences = with_halo(kept, sentence, halo, tail=n)  # the last span is cut full length
    for lo in range(0, len(kept), n):
        centres = kept_pos[lo : lo + n]
        alpha = np.zeros(n, np.float32)
        alpha[: len(centres)] = learning_rates(centres, epoch, len(ids), config)
        yield CentreSpan(words[lo : lo + n + 2 * halo], sentences[lo : lo + n + 2 * halo], alpha, int(centres[-1]))


def sample_noise_on_device(key: jax.Array, cumulative: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """Word ids drawn from the distribution whose cumulative sum is ``cumulative`` (inverse CDF)."""
    u = jax.random.uniform(key, shape, jnp.float32) * cumulative[-1]
    return jnp.minimum(jnp.searchsorted(cumulative, u, side="right"), cumulative.shape[0] - 1).astype(jnp.int32)


@partial(jax.jit, static_argnames=("config", "groups"))
def device_batches(words: jax.Array, sentence: jax.Array, alpha: jax.Array, epoch: int, index: int,
                   cumulative_noise: jax.Array, config: Word2VecConfig, groups: int = 1) -> Batch:
    """Chunk ``index`` of ``epoch`` as a :class:`Batch` (steps first) from its :class:`CentreSpan`'s
    arrays: each centre's radius drawn uniformly from 1..C, its windows (:func:`span_windows`), the
    negatives, from a key derived from (seed, epoch, index) here, not by the host per chunk."""
    key = jax.random.fold_in(jax.random.fold_in(jax.random.key(config.seed), epoch), index)
    radius_key, noise_key = jax.random.split(key)
    radius = jax.random.randint(radius_key, alpha.shape, 1, config.window + 1)
    inputs, mask, targets = span_windows(words, sentence, radius, config.window, xp=jnp)
    steps, b = config.steps_per_chunk, config.batch
    if one_example_per_pair(config):  # slot (centre i, offset j) is example 2C i + j, then padding
        def pairs(x: jax.Array) -> jax.Array:
            return jnp.pad(x.reshape(-1), (0, steps * b - x.size))

        inputs, alpha = pairs(inputs), pairs(alpha[:, None] * mask)
        targets = pairs(jnp.broadcast_to(targets[:, None], mask.shape))
        mask = jnp.zeros((steps * b, 1), jnp.float32)  # unused by the one-input-word step
    else:
        alpha = jnp.where(mask.any(1), alpha, 0.0)
        mask = mask.astype(jnp.float32)
    if config.loss == "neg":
        negatives = sample_noise_on_device(noise_key, cumulative_noise, (steps, b // config.neg_block, config.negative))
    else:
        negatives = jnp.zeros((steps, b // config.neg_block, 1), jnp.int32)  # unused by HS
    unused = jnp.zeros((steps, groups, 1), jnp.int32)  # packed paths: CBOW HS only
    shape = partial(step_major, config=config)
    return Batch(shape(inputs), shape(mask), shape(targets), shape(alpha), negatives, unused, unused)


class DeviceExamples:
    """Training examples built on the device from :class:`CentreSpan` chunks (see the module)."""

    name = "device"

    def __init__(self, ids: np.ndarray, keep: np.ndarray, cumulative_noise: np.ndarray, config: Word2VecConfig,
                 groups: int = 1):
        if packs_paths(config):
            raise ValueError("examples='device' does not build CBOW with the hierarchical softmax "
                             "(its paths are packed on the host): use examples='host'")
        self.ids, self.keep, self.groups = ids, keep, groups
        # the SGD step's shapes: skip-gram NEG's batch counts pairs, its steps hold slots
        self.step_config = pair_slot_layout(config) if one_example_per_pair(config) else config
        self.cumulative_noise = jnp.asarray(cumulative_noise, jnp.float32)
        self.sharding = NamedSharding(data_mesh(groups), P(None, "data")) if groups > 1 else None

    def chunks(self, epoch: int) -> Iterator[CentreSpan]:
        return centre_spans(self.ids, self.keep, self.step_config, epoch)

    @staticmethod
    def last_position(span: CentreSpan) -> int:
        return span.last_position

    def batches(self, span: CentreSpan, epoch: int, index: int) -> Batch:
        batch = device_batches(span.words, span.sentence, span.alpha, epoch, index, self.cumulative_noise,
                               config=self.step_config, groups=self.groups)
        return batch if self.sharding is None else jax.device_put(batch, self.sharding)

    def batch_shapes(self) -> Batch:
        """Shapes and dtypes of every chunk's :class:`Batch`, known before any span is cut."""
        n, halo = centres_per_chunk(self.step_config), self.step_config.window
        span = jax.ShapeDtypeStruct((n + 2 * halo,), jnp.int32)
        return jax.eval_shape(partial(device_batches, config=self.step_config, groups=self.groups), span, span,
                              jax.ShapeDtypeStruct((n,), jnp.float32), 0, 0, self.cumulative_noise)

    @staticmethod
    def count(span: CentreSpan, batches: Batch) -> jax.Array:
        """Examples with a nonzero learning rate (a device scalar: read once the chunk is done)."""
        return jnp.sum(batches.alpha > 0)
