"""The word2vec SGD steps lower for GPUs and TPUs from this CPU machine.

As for the transformer (tests/lm/test_cross_platform.py): each compiled chunk of SGD steps,
for every architecture (skip-gram and CBOW, negative sampling and hierarchical softmax), and
the builder that makes examples on an accelerator (the default there, for the three
architectures it builds) are exported for ``cuda`` and ``tpu`` with JAX's cross-platform
export; exported for the CPU too, each runs here as the jitted function does. Data parallel
over 8 devices (forced CPU devices, in a subprocess), the exported steps gather the devices'
updates and sum their losses.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.networks.word2vec import init_params, make_train_chunk
from jaxscale.word2vec.device_examples import device_batches
from jaxscale.word2vec.train import example_builder, training_tables
from tests.word2vec.test_word2vec import TINY

PLATFORMS = ("cuda", "tpu")
ARCHITECTURES = [("skipgram", "neg"), ("skipgram", "hs"), ("cbow", "neg"), ("cbow", "hs")]


def _shapes(tree):
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype), tree)


def _first_chunk(corpus, config, devices=1):
    """The builder of ``config``'s examples, its first chunk's span or examples, and its batches."""
    vocab, ids = corpus
    keep, noise, tree = training_tables(vocab, config)
    builder = example_builder(ids, keep, noise, config, tree, devices)
    chunk = next(iter(builder.chunks(0)))
    return builder, tree, chunk, builder.batches(chunk, 0, 0)


@pytest.mark.parametrize("model,loss,examples", [(*a, "host") for a in ARCHITECTURES] + [
    ("skipgram", "neg", "device"), ("skipgram", "hs", "device"), ("cbow", "neg", "device")])
def test_sgd_chunk_exported_for_gpu_and_tpu_runs_as_the_jitted_chunk_on_cpu(corpus, model, loss, examples):
    vocab, _ = corpus
    config = dataclasses.replace(TINY, model=model, loss=loss, examples=examples)
    builder, tree, _, batches = _first_chunk(corpus, config)
    train_chunk = make_train_chunk(builder.step_config, tree, devices=1)
    exported = jax.export.export(train_chunk, platforms=("cpu", *PLATFORMS))(
        _shapes(init_params(len(vocab), config)), _shapes(batches))
    assert exported.platforms == ("cpu", *PLATFORMS)
    params, nll = exported.call(init_params(len(vocab), config), batches)
    want_params, want_nll = train_chunk(init_params(len(vocab), config), batches)
    assert float(nll) == pytest.approx(float(want_nll), rel=1e-5)
    for got, want in zip(params, want_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("model,loss", ARCHITECTURES[:3])
def test_device_example_builder_exported_for_gpu_and_tpu_builds_the_same_batches_on_cpu(corpus, model, loss):
    config = dataclasses.replace(TINY, model=model, loss=loss, examples="device")
    builder, _, span, batches = _first_chunk(corpus, config)
    scalar = jax.ShapeDtypeStruct((), jnp.int32)
    arrays = (span.words, span.sentence, span.alpha)
    exported = jax.export.export(device_batches, platforms=("cpu", *PLATFORMS))(
        *_shapes(arrays), scalar, scalar, _shapes(builder.cumulative_noise), config=builder.step_config, groups=1)
    got = exported.call(*arrays, jnp.int32(0), jnp.int32(0), builder.cumulative_noise)
    for field, a, b in zip(batches._fields, got, batches):
        np.testing.assert_array_equal(a, b, err_msg=field)


def test_data_parallel_steps_lower_for_gpu_and_tpu_on_eight_devices():
    script = """
import dataclasses, functools, jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
from jaxscale.networks.word2vec import data_mesh, init_params, make_train_chunk
from jaxscale.word2vec.device_examples import device_batches
from jaxscale.word2vec.train import example_builder, prepare_corpus, training_tables
from tests.word2vec.test_word2vec import TINY, synthetic_words

assert jax.device_count() == 8
vocab, ids = prepare_corpus(synthetic_words(), 5)
mesh = data_mesh(8)
replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P(None, "data"))
for model, loss, examples in [("skipgram", "neg", "host"), ("skipgram", "hs", "host"), ("cbow", "neg", "host"),
                              ("cbow", "hs", "host"), ("skipgram", "neg", "device"), ("skipgram", "hs", "device"),
                              ("cbow", "neg", "device")]:
    config = dataclasses.replace(TINY, model=model, loss=loss, examples=examples, batch=64)
    keep, noise, tree = training_tables(vocab, config)
    builder = example_builder(ids, keep, noise, config, tree, 8)
    span = next(iter(builder.chunks(0)))
    batches = builder.batches(span, 0, 0)
    params = init_params(len(vocab), config)
    shape = lambda x, sharding: jax.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype, sharding=sharding)
    step = jax.export.export(jax.jit(make_train_chunk(builder.step_config, tree, 8)), platforms=("cuda", "tpu"))(
        jax.tree.map(lambda x: shape(x, replicated), params), jax.tree.map(lambda x: shape(x, split), batches))
    text = step.mlir_module()
    assert step.nr_devices == 8 and "all_gather" in text and "all_reduce" in text, (model, loss, examples)
    if examples == "device":
        scalar = jax.ShapeDtypeStruct((), jnp.int32)
        build = jax.export.export(device_batches, platforms=("cuda", "tpu"))(
            *[shape(x, None) for x in (span.words, span.sentence, span.alpha)], scalar, scalar,
            shape(builder.cumulative_noise, None), config=builder.step_config, groups=8)
        assert [a.shape for a in build.out_avals] == [np.shape(x) for x in batches]
    print("exported", model, loss, examples)
"""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", script], check=False, cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("exported") == 7
