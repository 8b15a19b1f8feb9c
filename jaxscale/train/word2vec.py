"""Training word2vec: vectorised example generation (numpy) feeding the jitted SGD scan.

Per epoch, as in the word2vec tool (Mikolov et al. 2013a/b):

1. every occurrence of word w is kept with probability ``keep_probability`` (Mikolov 2013b
   Eq. 5, see :mod:`jaxscale.text.vocab`); discarded words are removed before windowing;
2. each kept centre word draws a radius R uniformly from 1..C (2013a §3.2) and pairs with the
   kept words at distance <= R in the same sentence (skip-gram NEG: one example per pair;
   CBOW: one example per centre, its context words averaged; skip-gram HS: one example per
   centre holding its whole context, each context word a separate pair against the centre's
   Huffman path, so the path is fetched once for all of them);
3. the learning rate decays linearly from alpha to ~0 with the fraction of corpus words
   processed over all epochs.

The examples are packed into fixed-size chunks of ``steps_per_chunk x batch`` examples (the last
one padded with alpha = 0), so a single compiled ``lax.scan`` trains them all. With ``strided``
(the default) batch j of a chunk holds examples j, j + S, j + 2S, ... (S steps per chunk):
consecutive examples share words (a context word serves up to 2C neighbouring centres), and
summing their stale steps in one batch hurt CBOW badly (1% instead of ~8% analogy accuracy after
3 epochs); spreading the batch over the chunk keeps each step's rows nearly distinct, while the
learning rate, nearly constant within a chunk, still follows corpus order; JAX's
asynchronous dispatch lets numpy build chunk i+1 while chunk i trains. Every random draw is
seeded by (seed, epoch[, chunk]), so training is deterministic for a seed, and resuming from a
checkpoint taken after chunk i replays exactly the same stream.

On an accelerator the host would cap the speed (0.1-0.3 us of numpy per corpus word), so there
the examples are built on the device from each chunk's kept words instead
(:mod:`jaxscale.train.word2vec_device`, chosen by ``Word2VecConfig.examples``); the training loop
takes either builder (:class:`HostExamples` or ``DeviceExamples``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxscale.models.word2vec import (
    Batch,
    HuffmanPaths,
    Word2VecConfig,
    Word2VecParams,
    huffman_paths,
    init_params,
    make_train_chunk,
)
from jaxscale.progress import progress_bar
from jaxscale.text.huffman import build_huffman
from jaxscale.text.vocab import (
    Vocab,
    build_vocab,
    encode,
    keep_probability,
    noise_distribution,
    sample_noise,
)

if TYPE_CHECKING:
    from jaxscale.train.word2vec_device import DeviceExamples

SEGMENT = 1 << 16  # kept centre words turned into examples at a time
Array = np.ndarray | jax.Array  # numpy on the host, JAX on the device


@dataclass(frozen=True)
class TrainResult:
    """Trained vectors and how the run went (words = corpus words x epochs, as word2vec counts)."""

    params: Word2VecParams
    vocab: Vocab
    config: Word2VecConfig
    words: int
    examples: int
    seconds: float
    mean_nll: float
    completed: bool

    @property
    def words_per_second(self) -> float:
        return self.words / self.seconds if self.seconds > 0 else float("nan")

    @property
    def vectors(self) -> np.ndarray:
        return np.asarray(self.params.w_in)


def prepare_corpus(words: list[str], min_count: int) -> tuple[Vocab, np.ndarray]:
    """Vocabulary of ``words`` and the corpus as int32 ids (out-of-vocabulary words dropped)."""
    vocab = build_vocab(words, min_count)
    return vocab, encode(words, vocab)


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
    in chunks of ``steps_per_chunk x batch``; :class:`jaxscale.train.word2vec_device.DeviceExamples`
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


def example_builder(ids: np.ndarray, keep: np.ndarray, cumulative_noise: np.ndarray, config: Word2VecConfig,
                    tree: HuffmanPaths | None, devices: int) -> HostExamples | DeviceExamples:
    """The builder ``config.examples`` asks for; ``"auto"`` takes the device's on a GPU or TPU
    (not for CBOW HS, whose paths are packed on the host) and the host's on a CPU."""
    from jaxscale.train.word2vec_device import DeviceExamples  # it imports this module's helpers

    kind = config.examples
    if kind == "auto":
        on_accelerator = jax.default_backend() != "cpu"
        kind = "device" if on_accelerator and not packs_paths(config) else "host"
    if kind == "device":
        return DeviceExamples(ids, keep, cumulative_noise, config, devices)
    paths = None if tree is None else np.asarray(tree.paths)
    return HostExamples(ids, keep, cumulative_noise, config, devices, paths)


#: The name of :func:`compile_ahead`'s thread.
COMPILE_THREAD = "jaxscale-word2vec-compile-ahead"


def compile_ahead(train_chunk: Callable[..., Any], params: Word2VecParams,
                  batches: Batch | None) -> threading.Thread | None:
    """Compile the one-device SGD scan (:func:`make_train_chunk`) for ``batches``' shapes on a
    second thread, so that XLA compiles while the host subsamples the corpus and builds the first
    chunk; JAX reuses the program when that chunk arrives (join the thread first, or it compiles
    twice). None, and nothing started, when the shapes are not known ahead."""
    if batches is None:
        return None
    shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), params)
    thread = threading.Thread(target=lambda: train_chunk.lower(shapes, batches).compile(), name=COMPILE_THREAD,
                              daemon=True)
    thread.start()
    return thread


def training_tables(vocab: Vocab, config: Word2VecConfig) -> tuple[np.ndarray, np.ndarray, HuffmanPaths | None]:
    """What training looks words up in: each word's probability of surviving subsampling, the
    cumulative noise distribution (NEG) and the device Huffman paths (HS, else None)."""
    keep = keep_probability(vocab.counts, config.sample).astype(np.float32)
    cumulative_noise = np.cumsum(noise_distribution(vocab.counts))
    tree = huffman_paths(*build_huffman(vocab.counts)) if config.loss == "hs" else None
    return keep, cumulative_noise, tree


def train_word2vec(
    ids: np.ndarray,
    vocab: Vocab,
    config: Word2VecConfig,
    *,
    checkpoint_dir: str | Path | None = None,
    checkpoint_seconds: float = 300.0,
    stop_after_chunks: int | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train word2vec on the id stream ``ids`` (from :func:`prepare_corpus`).

    With ``checkpoint_dir`` the run saves (params, chunk counter) every ``checkpoint_seconds``
    and at the end, and a new call with the same directory resumes after the last saved chunk,
    giving the same vectors as an uninterrupted run. ``stop_after_chunks`` ends the call early
    (after saving) once that many chunks in total are done: a bounded slice of a long job.
    """
    ids = np.asarray(ids, dtype=np.int32)
    if ids.size == 0:
        raise ValueError("corpus is empty: no in-vocabulary words to train on")
    if len(vocab) < 2:
        raise ValueError(f"vocabulary must hold at least 2 words; got {len(vocab)}")
    keep, cumulative_noise, tree = training_tables(vocab, config)
    devices = jax.local_device_count()
    builder = example_builder(ids, keep, cumulative_noise, config, tree, devices)
    train_chunk = make_train_chunk(builder.step_config, tree, devices)
    config = dataclasses.replace(config, examples=builder.name)  # "auto" resolved: part of the run's identity
    params = init_params(len(vocab), config)
    compiling = compile_ahead(train_chunk, params, builder.batch_shapes()) if devices == 1 else None
    done = 0
    checkpoints = None
    run = {"config": dataclasses.asdict(config), "vocab_size": len(vocab), "corpus_words": len(ids)}
    if checkpoint_dir is not None:
        from jaxscale.train.checkpoint import Checkpoints

        checkpoints = Checkpoints(checkpoint_dir)
        if checkpoints.latest_step() is not None:
            restored = checkpoints.restore(like=params)
            _check_same_run(restored.metadata, run, checkpoint_dir)
            params, done = Word2VecParams(*restored.state), restored.step
    total_words = len(ids) * config.epochs
    bar = progress_bar(total=total_words, unit="word", unit_scale=True, disable=not progress, desc="word2vec")
    chunk_index = examples = 0
    nll = 0.0
    words_start = words_seen = 0  # corpus words covered before this call / so far
    start = last_save = time.perf_counter()
    saved = done
    pending = None
    completed = True
    for epoch in range(config.epochs):
        for i, chunk in enumerate(builder.chunks(epoch)):
            chunk_index += 1
            words = epoch * len(ids) + builder.last_position(chunk) + 1
            if chunk_index <= done:  # replaying the stream of a resumed run: already trained
                bar.update(words - words_seen)
                words_start = words_seen = words
                continue
            batches = builder.batches(chunk, epoch, i)
            if pending is not None:  # block on the previous chunk only now: numpy overlapped it
                nll, examples, words_seen = _account(bar, pending, nll, examples, words_seen)
            elif compiling is not None:
                compiling.join()
            params, chunk_nll = train_chunk(params, batches)
            pending = (chunk_nll, builder.count(chunk, batches), words)
            if checkpoints is not None and time.perf_counter() - last_save > checkpoint_seconds:
                checkpoints.save(chunk_index, params, run)
                last_save, saved = time.perf_counter(), chunk_index
            if stop_after_chunks is not None and chunk_index >= stop_after_chunks:
                completed = False
                break
        if not completed:
            break
    trained_here = pending is not None
    if trained_here:
        nll, examples, words_seen = _account(bar, pending, nll, examples, words_seen)
    if compiling is not None:  # no chunk was trained (none left, or none kept): never exit while it compiles
        compiling.join()
    if completed:
        if done and not trained_here:  # an earlier call trained every chunk, the last with the corpus's tail
            words_start = total_words
        bar.update(total_words - words_seen)
        words_seen = total_words
    jax.block_until_ready(params)
    seconds = time.perf_counter() - start
    bar.close()
    if checkpoints is not None:
        if saved != chunk_index:
            checkpoints.save(chunk_index, params, run)
        checkpoints.close()
    return TrainResult(
        params=params,
        vocab=vocab,
        config=config,
        words=words_seen - words_start,
        examples=examples,
        seconds=seconds,
        mean_nll=nll / max(examples, 1),
        completed=completed,
    )


def _check_same_run(saved: dict, run: dict, directory) -> None:
    """Refuse to resume a checkpoint written by a run with other settings or another corpus."""
    if saved != run:
        raise ValueError(
            f"checkpoint in {directory} comes from a different run (settings, vocabulary or corpus "
            "differ); use another output directory or delete it"
        )


def _account(bar, pending, nll: float, examples: int, words_seen: int) -> tuple[float, int, int]:
    """Wait for a dispatched chunk, add its loss and examples, and advance the progress bar."""
    chunk_nll, n_examples, words = pending
    nll += float(chunk_nll)
    examples += int(n_examples)
    bar.set_postfix(nll=f"{nll / max(examples, 1):.3f}", refresh=False)
    bar.update(words - words_seen)
    return nll, examples, words


def train_from_file(
    corpus: str | Path,
    out: str | Path,
    *,
    phrases: int = 0,
    max_chars: int | None = None,
    write_text: bool = False,
    checkpoint_seconds: float = 300.0,
    progress: bool = True,
    **options,
) -> dict:
    """Normalise a corpus file (text8 rules), optionally join phrases, train, save the vectors.

    Writes ``out/vectors.bin`` (word2vec binary; ``vectors.txt`` too with ``write_text``) and
    checkpoints under ``out/checkpoints`` (a re-run with the same ``out`` resumes). ``options``
    are :class:`Word2VecConfig` fields. Returns a JSON-ready summary.
    """
    from jaxscale.io.word2vec_format import save_word2vec
    from jaxscale.text.normalize import read_text8_words
    from jaxscale.text.phrases import learn_phrases

    config = Word2VecConfig(**{k: v for k, v in options.items() if v is not None})
    words = read_text8_words(corpus, max_chars)
    if not words:
        raise ValueError(f"corpus is empty after normalisation: {corpus}")
    if phrases:
        words, _ = learn_phrases(words, passes=phrases, min_count=config.min_count)
    vocab, ids = prepare_corpus(words, config.min_count)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = train_word2vec(
        ids, vocab, config, checkpoint_dir=out / "checkpoints", checkpoint_seconds=checkpoint_seconds,
        progress=progress,
    )
    save_word2vec(out / "vectors.bin", result.vectors, vocab.words, binary=True)
    if write_text:
        save_word2vec(out / "vectors.txt", result.vectors, vocab.words, binary=False)
    return {
        **{k: getattr(config, k) for k in ("model", "loss", "dim", "window", "negative", "sample", "epochs")},
        "vocab_size": len(vocab),
        "words": len(ids),
        "words_trained": result.words,  # in this call: 0 when it resumed a finished run
        "words_per_second": result.words_per_second,
        "seconds": result.seconds,
        "mean_nll": result.mean_nll,
        "vectors": str(out / "vectors.bin"),
    }
