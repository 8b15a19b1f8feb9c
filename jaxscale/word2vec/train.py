"""Training word2vec: vectorised example generation (numpy) feeding the jitted SGD scan.

Per epoch, as in the word2vec tool (Mikolov et al. 2013a/b):

1. every occurrence of word w is kept with probability ``keep_probability`` (Mikolov 2013b
   Eq. 5, see :mod:`jaxscale.word2vec.vocab`); discarded words are removed before windowing;
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
(:mod:`jaxscale.word2vec.device_examples`, chosen by ``Word2VecConfig.examples``); the training loop
takes either builder (:class:`HostExamples` or ``DeviceExamples``).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.networks.word2vec import (
    Batch,
    HuffmanPaths,
    Word2VecConfig,
    Word2VecParams,
    huffman_paths,
    init_params,
    make_train_chunk,
)
from jaxscale.support.progress import progress_bar
from jaxscale.word2vec.device_examples import DeviceExamples
from jaxscale.word2vec.examples import HostExamples, packs_paths
from jaxscale.word2vec.huffman import build_huffman
from jaxscale.word2vec.vocab import (
    Vocab,
    build_vocab,
    encode,
    keep_probability,
    noise_distribution,
)


class Word2VecDiverged(RuntimeError):
    """The loss or the vectors became NaN or infinite: training stopped, and nothing non-finite
    was saved (the last checkpoint before it is kept)."""


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


def builder_kind(config: Word2VecConfig) -> str:
    """The example builder ``config.examples`` asks for: ``"auto"`` takes the device's on a GPU
    or TPU (not for CBOW HS, whose paths are packed on the host) and the host's on a CPU."""
    if config.examples != "auto":
        return config.examples
    on_accelerator = jax.default_backend() != "cpu"
    return "device" if on_accelerator and not packs_paths(config) else "host"


def example_builder(ids: np.ndarray, keep: np.ndarray, cumulative_noise: np.ndarray, config: Word2VecConfig,
                    tree: HuffmanPaths | None, devices: int) -> HostExamples | DeviceExamples:
    """The builder :func:`builder_kind` names for ``config``."""
    if builder_kind(config) == "device":
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
    corpus_settings: dict[str, Any] | None = None,
) -> TrainResult:
    """Train word2vec on the id stream ``ids`` (from :func:`prepare_corpus`).

    With ``checkpoint_dir`` the run saves (params, chunk counter) every ``checkpoint_seconds``
    and at the end, and a new call with the same directory resumes after the last saved chunk,
    giving the same vectors as an uninterrupted run; a directory holding a run with other
    settings (``config``, vocabulary, corpus, and ``corpus_settings``: how the caller read the
    corpus) is refused before anything is restored. ``stop_after_chunks`` ends the call early
    (after saving) once that many chunks in total are done: a bounded slice of a long job.

    Raises:
        Word2VecDiverged: the loss or the vectors became NaN or infinite. Checkpoints are saved
            only from finite vectors, so the last one before is kept.
    """
    ids = np.asarray(ids, dtype=np.int32)
    if ids.size == 0:
        raise ValueError("corpus is empty: no in-vocabulary words to train on")
    if len(vocab) < 2:
        raise ValueError(f"vocabulary must hold at least 2 words; got {len(vocab)}")
    _check_checkpoint_seconds(checkpoint_seconds)
    keep, cumulative_noise, tree = training_tables(vocab, config)
    devices = jax.local_device_count()
    builder = example_builder(ids, keep, cumulative_noise, config, tree, devices)
    train_chunk = make_train_chunk(builder.step_config, tree, devices)
    config = dataclasses.replace(config, examples=builder.name)  # "auto" resolved: part of the run's identity
    params = init_params(len(vocab), config)
    done = 0
    checkpoints = None
    run = _run_settings(config, vocab_size=len(vocab), corpus_words=len(ids), **(corpus_settings or {}))
    if checkpoint_dir is not None:
        from jaxscale.support.checkpoints import Checkpoints

        checkpoints = Checkpoints(checkpoint_dir)
        saved_run = checkpoints.metadata()
        if saved_run is not None:
            _check_same_run(saved_run, run, checkpoint_dir)
            restored = checkpoints.restore(like=params)
            params, done = Word2VecParams(*restored.state), restored.step
    compiling = compile_ahead(train_chunk, params, builder.batch_shapes()) if devices == 1 else None
    total_words = len(ids) * config.epochs
    bar = progress_bar(total=total_words, unit="word", unit_scale=True, disable=not progress, desc="word2vec")
    chunk_index = examples = 0
    nll = 0.0
    words_start = words_seen = 0  # corpus words covered before this call / so far
    start = last_save = time.perf_counter()
    saved = done
    pending = None
    completed = True
    trained_here = False
    try:
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
                    nll, examples, words_seen = _account(bar, pending, nll, examples, words_seen, config)
                elif compiling is not None:
                    compiling.join()
                params, chunk_nll = train_chunk(params, batches)
                trained_here = True
                pending = (chunk_nll, builder.count(chunk, batches), words, epoch, i)
                if checkpoints is not None and time.perf_counter() - last_save > checkpoint_seconds:
                    nll, examples, words_seen = _account(bar, pending, nll, examples, words_seen, config)
                    pending = None
                    _check_finite_vectors(params, epoch, i, config)
                    checkpoints.save(chunk_index, params, run)
                    last_save, saved = time.perf_counter(), chunk_index
                if stop_after_chunks is not None and chunk_index >= stop_after_chunks:
                    completed = False
                    break
            if not completed:
                break
        if pending is not None:
            nll, examples, words_seen = _account(bar, pending, nll, examples, words_seen, config)
            epoch, i = pending[3:]
            _check_finite_vectors(params, epoch, i, config)
    except Word2VecDiverged as err:
        bar.close()
        if checkpoints is None:
            raise
        checkpoints.close()
        kept = (f"the last good checkpoint (chunk {saved}) is kept in {checkpoints.directory}" if saved
                else "no checkpoint was saved before it")
        raise Word2VecDiverged(f"{err}; {kept}") from None
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


def _run_settings(config: Word2VecConfig, **corpus: Any) -> dict[str, Any]:
    """What identifies a run in its checkpoints' metadata: the config's fields, and ``corpus``
    (its vocabulary size, words, and how it was read)."""
    return {"config": dataclasses.asdict(config), **corpus}


def _flat(run: dict[str, Any]) -> dict[str, Any]:
    return {**run.get("config", {}), **{k: v for k, v in run.items() if k != "config"}}


def _check_same_run(saved: dict[str, Any], run: dict[str, Any], directory: str | Path, partial: bool = False) -> None:
    """Refuse to resume the checkpoints in ``directory``, saved by the run ``saved``
    (:func:`_run_settings`), as the run ``run``, naming every setting that differs. With
    ``partial``, only the settings ``run`` holds are compared (those known before the corpus is
    read)."""
    theirs, ours = _flat(saved), _flat(run)
    keys = list(ours) + ([] if partial else [k for k in theirs if k not in ours])
    differ = [f"{k} {theirs.get(k)!r} there, {ours.get(k)!r} here" for k in keys if theirs.get(k) != ours.get(k)]
    if differ:
        raise ValueError(
            f"{directory} holds checkpoints of a different run ({'; '.join(differ)}); "
            "use another output directory or delete it"
        )


def _refuse_another_run(directory: Path, run: dict[str, Any]) -> None:
    """:func:`_check_same_run` on the settings known before the corpus is read, if ``directory``
    holds checkpoints."""
    if not directory.is_dir():
        return
    from jaxscale.support.checkpoints import Checkpoints

    with Checkpoints(directory) as checkpoints:
        saved = checkpoints.metadata()
    if saved is not None:
        _check_same_run(saved, run, directory, partial=True)


def _check_checkpoint_seconds(seconds: float) -> None:
    if not seconds >= 0:
        raise ValueError(f"checkpoint_seconds must be >= 0; got {seconds}")


@jax.jit
def _all_finite(params: Word2VecParams) -> jax.Array:
    return jnp.all(jnp.asarray([jnp.isfinite(table).all() for table in params]))


def _diverged(what: str, epoch: int, chunk: int, config: Word2VecConfig) -> Word2VecDiverged:
    return Word2VecDiverged(f"word2vec diverged: {what} in chunk {chunk + 1} of epoch {epoch + 1} (learning rate "
                            f"alpha {config.learning_rate:g}, batch {config.batch}); training stopped. Smaller "
                            "steps help: a smaller --batch, a lower --alpha, or with negative sampling --neg-row-cap "
                            "(a cap on each row's summed step per batch)")


def _check_finite_vectors(params: Word2VecParams, epoch: int, chunk: int, config: Word2VecConfig) -> None:
    if not bool(_all_finite(params)):
        raise _diverged("the vectors hold NaN or infinite values", epoch, chunk, config)


def _account(bar, pending, nll: float, examples: int, words_seen: int,
             config: Word2VecConfig) -> tuple[float, int, int]:
    """Wait for a dispatched chunk, add its loss and examples, and advance the progress bar;
    raise :class:`Word2VecDiverged` if its loss is not finite."""
    chunk_nll, n_examples, words, epoch, chunk = pending
    loss = float(chunk_nll)
    if not math.isfinite(loss):
        raise _diverged(f"the loss is {loss}", epoch, chunk, config)
    nll += loss
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
    normalize: str = "text8",
    write_text: bool = False,
    checkpoint_seconds: float = 300.0,
    progress: bool = True,
    **options,
) -> dict:
    """Normalise a corpus file (``normalize``: text8 rules by default, see
    :mod:`jaxscale.word2vec.normalize`), optionally join phrases, train, save the vectors.

    Writes ``out/vectors.bin`` (word2vec binary; ``vectors.txt`` too with ``write_text``) and
    checkpoints under ``out/checkpoints`` (a re-run with the same ``out`` resumes). ``options``
    are :class:`Word2VecConfig` fields. Returns a JSON-ready summary.

    Before the corpus is read, ``out`` is created and a checkpoint there of a run with other
    settings is refused; the corpus is checked as it is read (:mod:`jaxscale.support.corpus`).
    A run that diverges raises :class:`Word2VecDiverged` and writes no vectors.
    """
    from jaxscale.word2vec.normalize import normalizer, read_words
    from jaxscale.word2vec.phrases import learn_phrases
    from jaxscale.support.atomic import write_manifest
    from jaxscale.word2vec.vector_files import save_word2vec

    config = Word2VecConfig(**{k: v for k, v in options.items() if v is not None})
    _check_checkpoint_seconds(checkpoint_seconds)
    normalizer(normalize)  # an unknown name is refused before anything is written
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_settings = {"max_chars": max_chars, "phrases": phrases, "normalize": normalize}
    _refuse_another_run(out / "checkpoints", _run_settings(dataclasses.replace(config, examples=builder_kind(config)),
                                                          **corpus_settings))
    words = read_words(corpus, max_chars, normalize)
    if not words:
        raise ValueError(f"corpus is empty after normalisation: {corpus}")
    if phrases:
        words, _ = learn_phrases(words, passes=phrases, min_count=config.min_count)
    vocab, ids = prepare_corpus(words, config.min_count)
    result = train_word2vec(
        ids, vocab, config, checkpoint_dir=out / "checkpoints", checkpoint_seconds=checkpoint_seconds,
        progress=progress, corpus_settings=corpus_settings,
    )
    save_word2vec(out / "vectors.bin", result.vectors, vocab.words, binary=True)
    if write_text:
        save_word2vec(out / "vectors.txt", result.vectors, vocab.words, binary=False)
    write_manifest(out, ["vectors.bin", *(["vectors.txt"] if write_text else [])])
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
