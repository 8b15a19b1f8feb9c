"""Training examples built by numpy on the host, for every architecture (Mikolov et al. 2013a/b).

Per epoch: frequent-word subsampling (:func:`kept_words`), each kept centre's random radius and
its context window inside its sentence (:func:`span_windows`, which the device builder of
:mod:`jaxscale.word2vec.device_examples` runs with ``jax.numpy``), the linearly decaying
learning rate (:func:`learning_rates`), fixed-size chunks (:func:`fixed_chunks`) and their
:class:`~jaxscale.networks.word2vec.Batch` layout (:func:`to_batches`), collected in
:class:`HostExamples`. :mod:`jaxscale.word2vec.train` drives either builder.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from types import ModuleType

import jax
import numpy as np

from jaxscale.networks.word2vec import Batch, Word2VecConfig
from jaxscale.word2vec.vocab import sample_noise

SEGMENT = 1 << 16  # kept centre words turned into examples at a time
Array = np.ndarray | jax.Array  # numpy on the host, JAX on the device


def with_halo(kept: np.ndarray, sentence: np.ndarray, halo: int, tail: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The kept words and their sentence numbers as int32, with ``halo`` entries before them and
    ``halo + tail`` after, in no sentence (-1 before the corpus, -2 after it): every centre's
    window then lies inside the arrays, and its slots past the corpus match no centre's sentence."""
    words = np.concatenate([np.zeros(halo, np.int32), kept, np.zeros(halo + tail, np.int32)], dtype=np.int32)
    sentences = np.concatenate([np.full(halo, -1), sentence, np.full(halo + tail, -2)], dtype=np.int32)
    return words, sentences


def span_windows(words: Array, sentence: Array, radius: Array, window: int,
                 xp: ModuleType = np) -> tuple[Array, Array, Array]:
    """Context windows of a span's n centres (positions C .. C + n - 1, C = ``window``), with
    numpy (``xp=np``, the host) or ``jax.numpy`` (the device).

    Returns the context words (n, 2C), with 0 in invalid slots, the mask of valid slots and the
    centre words (n,). Slot j is offset -C..-1, 1..C; it is valid when |offset| <= the centre's
    radius and the word there lies in the centre's sentence (the halo's numbers match none).
    """
    n = radius.shape[0]
    offsets = xp.concatenate([xp.arange(-window, 0), xp.arange(1, window + 1)]).astype(xp.int32)
    centre = xp.arange(window, n + window, dtype=xp.int32)
    slot = centre[:, None] + offsets
    mask = (xp.abs(offsets) <= radius[:, None]) & (sentence[slot] == sentence[centre][:, None])
    return xp.where(mask, words[slot], 0), mask, words[centre]


def kept_words(
    ids: np.ndarray, keep: np.ndarray, config: Word2VecConfig, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One epoch's frequent-word subsampling: the corpus positions of the kept words, their ids
    and their sentence numbers (each occurrence of w kept with probability ``keep[w]``)."""
    kept_pos = np.flatnonzero(rng.random(len(ids), dtype=np.float32) < keep[ids])
    return kept_pos, ids[kept_pos], kept_pos // config.sentence_length


def learning_rates(positions: np.ndarray, epoch: int, corpus_words: int, config: Word2VecConfig) -> np.ndarray:
    """alpha of the centre words at corpus ``positions``: decaying linearly from the initial rate
    with the fraction of all epochs' words processed, never below ``min_alpha_ratio`` of it."""
    progress = (epoch * corpus_words + positions) / (corpus_words * config.epochs)
    return (config.learning_rate * np.maximum(1.0 - progress, config.min_alpha_ratio)).astype(np.float32)


def epoch_examples(
    ids: np.ndarray, keep: np.ndarray, config: Word2VecConfig, epoch: int
) -> Iterator[dict[str, np.ndarray]]:
    """The training examples of one epoch, in corpus order, as numpy arrays per segment.

    Keys: ``inputs`` (B,) context-word ids (skip-gram NEG, which predicts the centre word from
    each context word, as word2vec does) or (B, 2C) context ids (CBOW and skip-gram HS; padding
    entries hold word 0 with mask 0, so they touch one row that stays in cache), ``input_mask``,
    ``targets``, ``alpha`` (learning rate per example) and ``position`` (corpus index of the
    centre word, for progress).
    """
    rng = np.random.default_rng([config.seed, epoch])
    kept_pos, kept, sentence = kept_words(ids, keep, config, rng)
    words, sentences = with_halo(kept, sentence, config.window)
    for lo in range(0, len(kept), SEGMENT):
        radius = rng.integers(1, config.window + 1, size=min(SEGMENT, len(kept) - lo))
        span = slice(lo, lo + len(radius) + 2 * config.window)
        inputs, mask, targets = span_windows(words[span], sentences[span], radius, config.window)
        centre = np.arange(lo, lo + len(radius))
        if one_example_per_pair(config):
            row, col = np.nonzero(mask)
            example = {"inputs": inputs[row, col], "targets": targets[row]}
            centre = centre[row]
        else:
            has_context = mask.any(1)
            if not has_context.all():  # a centre alone in its sentence: no example
                inputs, mask, targets, centre = (x[has_context] for x in (inputs, mask, targets, centre))
            example = {"inputs": inputs, "input_mask": mask.astype(np.float32), "targets": targets}
        example["alpha"] = learning_rates(kept_pos[centre], epoch, len(ids), config)
        example["position"] = kept_pos[centre]
        yield example


def fixed_chunks(segments: Iterator[dict[str, np.ndarray]], size: int) -> Iterator[dict[str, np.ndarray]]:
    """Re-cut a stream of example arrays into chunks of exactly ``size`` (last one padded, alpha 0)."""
    buffer: list[dict[str, np.ndarray]] = []
    held = 0
    for segment in segments:
        buffer.append(segment)
        held += len(segment["targets"])
        while held >= size:
            joined = {k: np.concatenate([b[k] for b in buffer]) for k in segment}
            yield {k: v[:size] for k, v in joined.items()}
            buffer, held = [{k: v[size:] for k, v in joined.items()}], held - size
    if held:
        joined = {k: np.concatenate([b[k] for b in buffer]) for k in buffer[0]}
        pad = size - held
        padded = {k: np.concatenate([v, np.zeros((pad, *v.shape[1:]), v.dtype)]) for k, v in joined.items()}
        padded["position"][held:] = joined["position"][-1]
        yield padded


def one_example_per_pair(config: Word2VecConfig) -> bool:
    """Skip-gram NEG trains on (context, centre) pairs; the other architectures on centre words."""
    return config.model == "skipgram" and config.loss == "neg"


def packs_paths(config: Word2VecConfig) -> bool:
    """CBOW with the hierarchical softmax: its batches carry their targets' Huffman paths packed
    back to back by the host (:func:`pack_paths`); the other architectures need none."""
    return config.model == "cbow" and config.loss == "hs"


def pack_paths(targets: np.ndarray, alive: np.ndarray, paths: np.ndarray, groups: int,
               min_width: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The Huffman paths of each step's targets, packed back to back as :class:`Batch` holds them.

    ``targets`` and ``alive`` (alpha > 0) are (S, B); ``paths`` is the packed path table
    (:class:`HuffmanPaths`, on the host). Each step's B examples are split into ``groups``
    equal groups; a group's entries are its examples' path entries in example order (padding
    examples contribute none), followed by padding entries (valid bit 0) owned by the group's
    last example. Returns (entries, owners), each (S, groups, E), with E the most entries any
    group holds rounded up to a multiple of the group size (so E / group size is a path length,
    and a chunk's shape changes only when that bound does), and at least ``min_width``.
    """
    steps, b = targets.shape
    size = b // groups
    rows = paths[targets.reshape(-1)]  # (S B, L), each path then padding
    on = (rows & 1).astype(bool) & alive.reshape(-1, 1)
    count = on.sum(1)
    group_total = count.reshape(-1, size).sum(1)
    width = max(size, min_width, -(-int(group_total.max()) // size) * size)
    filled = np.arange(width)[None, :] < group_total[:, None]  # a group's first slots, in order
    entries = np.full((steps * groups, width), paths[0, 0] & ~3, np.int32)  # padding: the root, invalid
    owners = np.full((steps * groups, width), size - 1, np.int32)
    entries[filled] = rows[on]  # row-major: example by example, each along its path
    owners[filled] = np.repeat(np.arange(steps * b, dtype=np.int32) % size, count)
    return entries.reshape(steps, groups, width), owners.reshape(steps, groups, width)


def step_major(x: np.ndarray | jax.Array, config: Word2VecConfig) -> np.ndarray | jax.Array:
    """A chunk's examples (numpy or JAX array, examples first) as (steps, batch, ...): with
    ``strided`` batch j holds examples j, j + steps, j + 2 steps, ...; else consecutive ones."""
    steps, b = config.steps_per_chunk, config.batch
    if config.strided:
        return x.reshape(b, steps, *x.shape[1:]).swapaxes(0, 1)
    return x.reshape(steps, b, *x.shape[1:])


def to_batches(
    chunk: dict[str, np.ndarray], config: Word2VecConfig, cumulative_noise: np.ndarray, epoch: int, index: int,
    paths: np.ndarray | None = None, groups: int = 1, min_width: int = 0,
) -> Batch:
    """Shape one chunk as a :class:`Batch` with a leading steps axis, draw its negatives (NEG)
    and pack its targets' Huffman paths (CBOW HS, from the host path table ``paths``) in
    ``groups`` groups per step (one per device), at least ``min_width`` entries a group."""
    steps, b = config.steps_per_chunk, config.batch
    if config.loss == "neg":
        rng = np.random.default_rng([config.seed, epoch, index, 1])
        negatives = sample_noise(cumulative_noise, (steps, b // config.neg_block, config.negative), rng)
    else:
        negatives = np.zeros((steps, b // config.neg_block, 1), np.int32)  # unused by HS
    mask = chunk.get("input_mask", np.zeros((len(chunk["targets"]), 1), np.float32))
    shape = partial(step_major, config=config)
    targets, alpha = shape(chunk["targets"]), shape(chunk["alpha"])
    if packs_paths(config):
        if paths is None:
            raise ValueError("CBOW with the hierarchical softmax needs the host path table: pass paths")
        packed, owners = pack_paths(targets, alpha > 0, paths, groups, min_width)
    else:
        packed = owners = np.zeros((steps, groups, 1), np.int32)  # unused
    return Batch(shape(chunk["inputs"]), shape(mask), targets, alpha, negatives, packed, owners)


class HostExamples:
    """Training examples built by numpy on the host (:func:`epoch_examples`, :func:`to_batches`),
    in chunks of ``steps_per_chunk x batch``; :class:`jaxscale.word2vec.device_examples.DeviceExamples`
    has the same methods. ``step_config`` gives the SGD step's shapes (here the config itself).

    CBOW HS's packed path width never shrinks from one chunk to the next (its padding entries
    are inert), so a chunk with shorter paths, such as the padded last one, reuses the step
    compiled for the wider chunks before it instead of compiling another (~0.2 s)."""

    name = "host"

    def __init__(self, ids: np.ndarray, keep: np.ndarray, cumulative_noise: np.ndarray, config: Word2VecConfig,
                 groups: int = 1, paths: np.ndarray | None = None):
        self.ids, self.keep, self.cumulative_noise, self.step_config = ids, keep, cumulative_noise, config
        self.groups, self.paths = groups, paths
        self.width = 0  # the widest packed paths so far (CBOW HS)

    def chunks(self, epoch: int) -> Iterator[dict[str, np.ndarray]]:
        size = self.step_config.steps_per_chunk * self.step_config.batch
        return fixed_chunks(epoch_examples(self.ids, self.keep, self.step_config, epoch), size)

    @staticmethod
    def last_position(chunk: dict[str, np.ndarray]) -> int:
        return int(chunk["position"][-1])

    def batches(self, chunk: dict[str, np.ndarray], epoch: int, index: int) -> Batch:
        batch = to_batches(chunk, self.step_config, self.cumulative_noise, epoch, index, self.paths, self.groups,
                           self.width)
        self.width = batch.paths.shape[-1]
        return batch

    @staticmethod
    def count(chunk: dict[str, np.ndarray], batches: Batch) -> int:
        return int((chunk["alpha"] > 0).sum())

    def batch_shapes(self) -> Batch | None:
        """Shapes and dtypes of every chunk's :class:`Batch` (:func:`to_batches`), known before
        any chunk is built; None for CBOW HS, whose packed path width depends on the chunk."""
        config = self.step_config
        if packs_paths(config):
            return None
        steps, b = config.steps_per_chunk, config.batch
        slots = 1 if one_example_per_pair(config) else 2 * config.window
        k = config.negative if config.loss == "neg" else 1
        ints = partial(jax.ShapeDtypeStruct, dtype=np.int32)
        floats = partial(jax.ShapeDtypeStruct, dtype=np.float32)
        return Batch(ints((steps, b) if slots == 1 else (steps, b, slots)), floats((steps, b, slots)),
                     ints((steps, b)), floats((steps, b)), ints((steps, b // config.neg_block, k)),
                     ints((steps, self.groups, 1)), ints((steps, self.groups, 1)))
