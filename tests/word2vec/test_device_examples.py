"""Examples built on the device (jaxscale.word2vec.device_examples) against the host's."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.networks.word2vec import Word2VecConfig, init_params, make_train_chunk
from jaxscale.word2vec.device_examples import (
    DeviceExamples,
    centre_spans,
    centres_per_chunk,
    device_batches,
    pair_slot_layout,
    sample_noise_on_device,
)
from jaxscale.word2vec.examples import kept_words, span_windows
from jaxscale.word2vec.train import (
    compile_ahead,
    example_builder,
    train_word2vec,
    training_tables,
)
from jaxscale.word2vec.vocab import noise_distribution
from tests.word2vec.test_word2vec import TINY

DEVICE = dataclasses.replace(TINY, examples="device")


def test_span_windows_are_the_same_on_host_and_device():
    """Each centre's contexts, numpy and jax.numpy alike, are the words at 1..R of it in its
    sentence (counted directly), whatever the span's halo holds."""
    rng = np.random.default_rng(0)
    n, window, lo, count = 200, 3, 57, 40
    words = rng.integers(1, 50, n).astype(np.int32)
    sentence = np.sort(rng.integers(0, 12, n)).astype(np.int32)
    radius = rng.integers(1, window + 1, count)
    span = slice(lo - window, lo + count + window)
    host = span_windows(words[span], sentence[span], radius, window)
    device = span_windows(jnp.asarray(words[span]), jnp.asarray(sentence[span]), jnp.asarray(radius), window, xp=jnp)
    for a, b in zip(host, device):
        np.testing.assert_array_equal(a, np.asarray(b))
    inputs, mask, targets = host
    offsets = [*range(-window, 0), *range(1, window + 1)]
    for i, c in enumerate(range(lo, lo + count)):
        want = [words[c + o] if abs(o) <= radius[i] and sentence[c + o] == sentence[c] else 0 for o in offsets]
        assert inputs[i].tolist() == want and mask[i].tolist() == [w != 0 for w in want]
    np.testing.assert_array_equal(targets, words[lo:lo + count])


def test_spans_cover_every_kept_word_once_with_its_halo(corpus):
    vocab, ids = corpus
    keep, _, _ = training_tables(vocab, DEVICE)
    spans = list(centre_spans(ids, keep, DEVICE, epoch=0))
    n, halo = centres_per_chunk(DEVICE), DEVICE.window
    assert n == DEVICE.steps_per_chunk * DEVICE.batch // (2 * halo)  # skip-gram NEG: 2C slots a centre
    centres = np.concatenate([s.words[halo:halo + n][s.alpha > 0] for s in spans])
    _, kept, _ = kept_words(ids, keep, DEVICE, np.random.default_rng([DEVICE.seed, 0]))
    np.testing.assert_array_equal(centres, kept)  # the host path's kept words, each once, in order
    assert all(np.all(s.alpha > 0) for s in spans[:-1]) and spans[-1].last_position < len(ids)
    assert spans[0].sentence[:halo].tolist() == [-1] * halo and spans[-1].sentence[-halo:].tolist() == [-2] * halo
    np.testing.assert_array_equal(spans[1].words[:2 * halo], spans[0].words[n:])  # halos overlap the neighbours


@pytest.mark.parametrize("model,loss", [("skipgram", "neg"), ("cbow", "neg"), ("skipgram", "hs")])
def test_device_batches_hold_only_valid_examples(corpus, model, loss):
    """Every example with a learning rate pairs a centre with a word of its window; skip-gram NEG
    has one example per valid slot, the others one per centre with at least one context."""
    vocab, ids = corpus
    config = dataclasses.replace(DEVICE, model=model, loss=loss)
    keep, noise, _ = training_tables(vocab, config)
    span = next(centre_spans(ids, keep, config, epoch=0))
    batch = device_batches(span.words, span.sentence, span.alpha, 0, 0, jnp.asarray(noise, jnp.float32), config=config)
    steps, b = config.steps_per_chunk, config.batch
    assert batch.targets.shape == (steps, b) and batch.alpha.shape == (steps, b)
    live = np.asarray(batch.alpha) > 0
    centre_words = set(span.words.tolist())
    assert set(np.asarray(batch.targets)[live].tolist()) <= centre_words
    if model == "skipgram" and loss == "neg":
        n = centres_per_chunk(config)
        assert 2 * n <= live.sum() <= 2 * config.window * n  # each centre has 2R slots, R in 1..C
        assert np.all(np.asarray(batch.inputs)[~live] == 0)
    else:
        mask = np.asarray(batch.input_mask)
        assert np.all(mask[live].sum(-1) >= 1) and np.all(mask[~live] == 0)
    if loss == "neg":
        assert batch.negatives.shape == (steps, b // config.neg_block, config.negative)


def test_skipgram_neg_steps_hold_batch_pairs_on_average(corpus):
    """A centre's 2C slots hold C + 1 pairs on average, so each of the host step's blocks of
    ``neg_block`` pairs becomes neg_block x 2C / (C + 1) slots (rounded up), and a chunk holds
    about as many slots as the host's chunk holds pairs."""
    vocab, ids = corpus
    layout = pair_slot_layout(Word2VecConfig(window=5, batch=1024, neg_block=16))
    assert (layout.neg_block, layout.batch, layout.steps_per_chunk) == (27, 64 * 27, 128 * 1024 // (64 * 27))
    # every word kept, one sentence: windows are cut only at the corpus's two ends
    small = dataclasses.replace(DEVICE, window=3, batch=64, neg_block=8, steps_per_chunk=16, sample=0,
                                sentence_length=len(ids))
    keep, noise, _ = training_tables(vocab, small)
    examples = DeviceExamples(ids, keep, noise, small)
    assert (examples.step_config.batch, examples.step_config.neg_block) == (96, 12)
    pairs = [float(examples.count(span, examples.batches(span, 0, i))) for i, span in enumerate(examples.chunks(0))]
    per_step = np.mean(pairs[:-1]) / examples.step_config.steps_per_chunk  # the last chunk is padded
    assert abs(per_step - small.batch) < 0.05 * small.batch, per_step


def test_device_negatives_follow_the_noise_distribution():
    p = noise_distribution(np.array([100, 30, 10, 1, 50]))
    draws = np.asarray(sample_noise_on_device(jax.random.key(3), jnp.asarray(np.cumsum(p), jnp.float32), (200_000,)))
    np.testing.assert_allclose(np.bincount(draws, minlength=5) / draws.size, p, atol=0.004)


def test_device_examples_are_deterministic_and_not_the_host_stream(corpus, tmp_path):
    """Same seed, same vectors; a checkpoint of device-built examples is another run than the
    host's (their radii and negatives come from other generators), so it is not resumed by it."""
    vocab, ids = corpus
    a = train_word2vec(ids, vocab, DEVICE, checkpoint_dir=tmp_path, progress=False)
    np.testing.assert_array_equal(train_word2vec(ids, vocab, DEVICE, progress=False).vectors, a.vectors)
    assert a.config.examples == "device" and np.isfinite(a.mean_nll)
    with pytest.raises(ValueError, match="different run"):
        train_word2vec(ids, vocab, TINY, checkpoint_dir=tmp_path, progress=False)


def test_examples_auto_takes_the_device_on_accelerators_only(corpus, monkeypatch):
    vocab, ids = corpus

    def builder(model, loss, examples="auto"):
        config = Word2VecConfig(model=model, loss=loss, examples=examples)
        keep, noise, tree = training_tables(vocab, config)
        return example_builder(ids, keep, noise, config, tree, devices=1).name

    assert builder("skipgram", "neg") == "host"  # this test runs on a CPU
    assert builder("skipgram", "neg", "device") == "device"
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert builder("skipgram", "neg") == "device" and builder("skipgram", "hs") == "device"
    assert builder("cbow", "hs") == "host"  # its paths are packed on the host
    with pytest.raises(ValueError, match="CBOW with the hierarchical softmax"):
        builder("cbow", "hs", "device")
    with pytest.raises(ValueError, match="examples must be one of"):
        Word2VecConfig(examples="gpu")


ARCHITECTURE_BUILDERS = [("skipgram", "neg", "host"), ("skipgram", "hs", "host"), ("cbow", "neg", "host"),
                         ("cbow", "hs", "host"), ("skipgram", "neg", "device"), ("skipgram", "hs", "device"),
                         ("cbow", "neg", "device")]  # CBOW HS is built on the host only (tested above)


@pytest.mark.parametrize("model,loss,examples", ARCHITECTURE_BUILDERS)
def test_batch_shapes_are_those_of_every_chunk(corpus, model, loss, examples):
    """The shapes the step is compiled for ahead of the first chunk are every chunk's, so that
    compilation is not wasted; CBOW HS's packed width depends on the chunk (none ahead)."""
    vocab, ids = corpus
    config = dataclasses.replace(TINY, model=model, loss=loss, examples=examples)
    keep, noise, tree = training_tables(vocab, config)
    builder = example_builder(ids, keep, noise, config, tree, devices=1)
    shapes = builder.batch_shapes()
    if (model, loss) == ("cbow", "hs"):
        assert shapes is None
        return
    for index, chunk in enumerate(builder.chunks(epoch=0)):
        batch = builder.batches(chunk, 0, index)
        got = [(np.shape(x), np.asarray(x).dtype) for x in batch]
        assert got == [(s.shape, s.dtype) for s in shapes], index


@pytest.mark.parametrize("examples,dim", [("host", 7), ("device", 9)])  # shapes no other test compiled
def test_step_compiled_ahead_is_reused_by_the_first_chunk(corpus, examples, dim):
    """After :func:`compile_ahead`, training the first chunk compiles no step program again."""
    vocab, ids = corpus
    config = dataclasses.replace(TINY, model="cbow", loss="neg", dim=dim, examples=examples)
    keep, noise, tree = training_tables(vocab, config)
    builder = example_builder(ids, keep, noise, config, tree, devices=1)
    train_chunk = make_train_chunk(config, tree, devices=1)
    params = init_params(len(vocab), config)
    compile_ahead(train_chunk, params, builder.batch_shapes()).join()
    batch = jax.block_until_ready(builder.batches(next(iter(builder.chunks(epoch=0))), 0, 0))
    compiled = []

    def listener(event: str, seconds: float, **kwargs) -> None:
        if "backend_compile" in event:
            compiled.append(event)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        jax.block_until_ready(train_chunk(params, batch))
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert compiled == []
