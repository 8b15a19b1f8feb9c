"""The transformer's compiled functions lower for GPUs and TPUs from this CPU machine.

No GPU or TPU is at hand in CI, so the training step and the evaluation are exported with JAX's
cross-platform export (``jax.export.export(jitted, platforms=...)``) for ``cuda`` and ``tpu``:
a change that could not be lowered there (an op without a lowering on that platform, a host
callback, a CPU-only custom call) fails here. Each module is exported for the CPU too and run
there, so it is checked to compute what the jitted function computes. Shapes: a tiny model, and
the ``paper`` preset's first model as a free Colab runtime trains it (one device, 8
microbatches); sharded over an 8-device mesh (the shape of a TPU v5e-8 host; forced CPU devices,
in a subprocess) in float32 and bfloat16.
"""

from __future__ import annotations

import dataclasses
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.lm import presets, sweep
from jaxscale.lm import train as lm
from tests.lm.test_train import SETUP, _python, tiny_run

PLATFORMS = ("cuda", "tpu")


def _step_shapes(spec: lm.RunSpec):
    state = jax.eval_shape(lambda: lm.init_state(spec))
    batch = jax.ShapeDtypeStruct((spec.batch_size, spec.model.n_ctx + 1), jnp.int32)
    return state, batch, jax.ShapeDtypeStruct((), jnp.float32)


@pytest.mark.parametrize("compute_dtype, microbatches", [("float32", 1), ("bfloat16", 4)])
def test_train_step_exported_for_gpu_and_tpu_runs_as_the_jitted_step_on_cpu(compute_dtype, microbatches):
    spec, data = tiny_run(batch_size=16, compute_dtype=compute_dtype)
    # eps = 1 makes Adam's first update smooth in the gradient (with eps = 1e-8 it is lr x sign(g),
    # whose tiny entries flip with the rounding of two compilations of one program)
    spec = dataclasses.replace(spec, optim=lm.OptimConfig(eps=1.0))
    statics = {"model": spec.model, "optim": spec.optim, "microbatches": microbatches}
    exported = jax.export.export(lm.train_step, platforms=("cpu", *PLATFORMS))(*_step_shapes(spec), **statics)
    assert exported.platforms == ("cpu", *PLATFORMS) and exported.nr_devices == 1
    batch, lr = jnp.asarray(data.train_batch(0)), jnp.float32(1e-2)
    expected_state, expected_loss = lm.train_step(lm.init_state(spec), batch, lr, **statics)
    state, loss = exported.call(lm.init_state(spec), batch, lr)
    assert float(loss) == pytest.approx(float(expected_loss), rel=1e-6)
    for got, want in zip(jax.tree.leaves(state), jax.tree.leaves(expected_state)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


def test_paper_presets_first_model_lowers_for_gpu_and_tpu_in_microbatches():
    """The step and the evaluation a Colab notebook runs on one 16 GB chip: 4096 sequences of
    17 tokens, GPT-2's 50,257-token vocabulary, bfloat16 compute, 8 microbatches."""
    cfg = presets.PAPER
    spec = sweep.run_spec(cfg, cfg.sizes[0], 50257, cfg.learning_rates[0], "constant")
    state, batch, lr = _step_shapes(spec)
    step = jax.export.export(lm.train_step, platforms=PLATFORMS)(state, batch, lr, model=spec.model,
                                                                  optim=spec.optim, microbatches=8)
    assert [a.shape for a in step.in_avals[-2:]] == [(4096, 17), ()]
    assert "bf16" in step.mlir_module()
    val = jax.ShapeDtypeStruct((cfg.val_batches, *batch.shape), jnp.int32)
    evaluation = jax.export.export(lm.eval_loss, platforms=PLATFORMS)(state["params"], val, model=spec.model,
                                                                      microbatches=8)
    assert evaluation.out_avals[0].shape == ()


def test_sharded_step_and_evaluation_lower_for_gpu_and_tpu_on_eight_devices():
    """Replicated state, batch split over the mesh's "data" axis: the exported modules keep
    those shardings for 8 devices (XLA's partitioner inserts the all-reduce on the target)."""
    worker = SETUP + """
import jax, jax.numpy as jnp
from jaxscale.lm import sharding
assert jax.device_count() == 8
mesh = sharding.data_mesh()
rep, split = sharding.replicated(mesh), sharding.batch_sharded(mesh)
for dtype, parts in (("float32", 1), ("bfloat16", 1), ("bfloat16", 2)):
    spec, data = tiny_run(batch_size=16, compute_dtype=dtype)
    state = jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=rep),
                         jax.eval_shape(lambda: lm.init_state(spec)))
    batch = jax.ShapeDtypeStruct((16, 9), jnp.int32, sharding=split)
    lr = jax.ShapeDtypeStruct((), jnp.float32, sharding=rep)
    step = jax.export.export(lm.train_step, platforms=("cuda", "tpu"))(state, batch, lr, model=spec.model,
                                                                        optim=spec.optim, microbatches=parts)
    assert step.nr_devices == 8 and step.platforms == ("cuda", "tpu")
    assert step.in_shardings_jax(mesh)[-2:] == (split, rep), step.in_shardings_jax(mesh)[-2:]
    val = jax.ShapeDtypeStruct((2, 16, 9), jnp.int32, sharding=sharding.batch_sharded(mesh, batch_axis=1))
    evaluation = jax.export.export(lm.eval_loss, platforms=("cuda", "tpu"))(state["params"], val, model=spec.model,
                                                                            microbatches=parts)
    assert evaluation.nr_devices == 8
    print("exported", dtype, parts)
"""
    proc = _python(worker, {"XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"},
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert out.count("exported") == 3
