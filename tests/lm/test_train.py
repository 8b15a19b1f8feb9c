"""The training loop: one step learns, schedules, NaN guard, kill-and-resume, 8 devices = 1 device."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.lm import sharding
from jaxscale.lm import train as lm
from jaxscale.lm.tokens import TokenBatches
from jaxscale.networks.transformer import next_token_loss
from jaxscale.support.checkpoints import Checkpoints

REPO = Path(__file__).resolve().parents[2]

# A tiny run on random token ids; the subprocess workers below build exactly the same one.
SETUP = """
import numpy as np
from jaxscale.networks.transformer import TransformerConfig
from jaxscale.lm.tokens import TokenBatches
from jaxscale.lm import train as lm

def tiny_run(run_id="tiny", steps=40, checkpoint_every=4, lr=1e-2, batch_size=8, compute_dtype="float32"):
    model = TransformerConfig(vocab_size=64, n_ctx=8, n_layer=1, d_model=16, n_head=2, compute_dtype=compute_dtype)
    spec = lm.RunSpec(run_id, model, lm.Schedule(lr, steps, 2, "cosine"), batch_size=batch_size,
                      eval_every=2, checkpoint_every=checkpoint_every, val_batches=2)
    ids = np.random.default_rng(0).integers(0, 64, 20_000).astype(np.uint16)
    return spec, TokenBatches(ids, 8, batch_size)
"""
exec(SETUP)


def _losses(curve):
    return np.array([[float(r["step"]), float(r["train_loss"]), float(r["val_loss"])] for r in curve])


def _python(code: str, env_extra: dict | None = None, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=REPO, **kwargs)


def test_one_step_decreases_loss_on_a_fixed_batch():
    spec, data = tiny_run()
    state = lm.init_state(spec)
    batch = jnp.asarray(data.train_batch(0))
    before = float(next_token_loss(spec.model, state["params"], batch))
    state, loss = lm.train_step(state, batch, jnp.float32(3e-2), model=spec.model, optim=spec.optim)
    after = float(next_token_loss(spec.model, state["params"], batch))
    assert float(loss) == pytest.approx(before, rel=1e-5)
    assert after < before - 0.01


def test_microbatches_give_the_one_batch_gradient_and_loss():
    """Gradients accumulated over 4 microbatches of a batch (the memory of a quarter batch) are
    the whole batch's to float32 rounding, and so are the training and validation losses."""
    spec, data = tiny_run(batch_size=16)
    params = lm.init_state(spec)["params"]
    batch = jnp.asarray(data.train_batch(0))
    (loss, grads), (parts_loss, parts_grads) = (lm._loss_and_grads(spec.model, params, batch, k) for k in (1, 4))
    assert float(parts_loss) == pytest.approx(float(loss), rel=1e-6)
    scale = max(float(jnp.abs(g).max()) for g in jax.tree.leaves(grads))
    for a, b in zip(jax.tree.leaves(grads), jax.tree.leaves(parts_grads)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6 * scale)
    val = jnp.asarray(data.val_batches(2))
    assert float(lm.eval_loss(params, val, model=spec.model, microbatches=4)) == pytest.approx(
        float(lm.eval_loss(params, val, model=spec.model)), rel=1e-6)


@pytest.mark.parametrize("batch_size, devices, max_rows, expected", [
    (4096, 1, 512, 8),  # the paper preset on one chip
    (4096, 8, 512, 1),  # ... on a TPU v5e-8 or v2-8 host
    (16, 1, 512, 1),  # the smoke preset
    (96, 1, 40, 3),  # a share of 96 rows in parts of 32: 40 rows would not split it evenly
])
def test_microbatches_for_keeps_each_device_under_its_rows(batch_size, devices, max_rows, expected):
    assert sharding.microbatches_for(batch_size, devices, max_rows) == expected


def test_schedules_warmup_constant_and_cosine():
    const = lm.Schedule(1e-2, 100, 10, "constant")
    cosine = lm.Schedule(1e-2, 100, 10, "cosine", final_fraction=0.1)
    assert const(0) == pytest.approx(1e-3) and const(9) == pytest.approx(1e-2) and const(99) == pytest.approx(1e-2)
    assert cosine(9) == pytest.approx(1e-2)
    assert cosine(99) == pytest.approx(1e-3)
    lrs = [cosine(s) for s in range(10, 100)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))
    with pytest.raises(ValueError, match="warmup"):
        lm.Schedule(1e-2, 10, 10)


def test_another_learning_rate_and_schedule_reuse_the_compiled_step(tmp_path):
    spec, data = tiny_run(steps=4)
    lm.train(spec, data, tmp_path / "first", progress=False)
    compiled = lm.train_updates._cache_size()
    other = dataclasses.replace(spec, run_id="other", schedule=lm.Schedule(3e-3, 6, 1, "constant"))
    curve = lm.train(other, data, tmp_path / "other", progress=False)
    assert lm.train_updates._cache_size() == compiled
    # Each row logs the learning rate of the update that produced its step, read from the optimizer state.
    assert [float(r["learning_rate"]) for r in curve] == [other.schedule(int(r["step"]) - 1) for r in curve]
    assert float(curve[-1]["learning_rate"]) == pytest.approx(3e-3)

def test_log_spaced_evaluation_logs_those_steps_and_the_last(tmp_path):
    spec, data = tiny_run(steps=40)
    logged = dataclasses.replace(spec, eval_every=1, eval_points=6)
    steps = sorted(logged.eval_steps)
    assert steps[0] == 1 and steps[-1] == 40 and len(steps) <= 6
    ratios = np.diff(np.log(steps))
    assert np.ptp(ratios) < 0.5  # evenly spaced in log step, up to rounding to whole steps
    curve = lm.train(logged, data, tmp_path, progress=False)
    assert [int(r["step"]) for r in curve] == steps
    with pytest.raises(ValueError, match="eval_points"):
        dataclasses.replace(spec, eval_points=1)


def test_curve_rows_carry_both_parameter_counts_and_compute_bases(tmp_path):
    spec, data = tiny_run(steps=4)
    curve = lm.train(spec, data, tmp_path, progress=False)
    counts = lm.run_param_counts(spec.model)
    last = curve[-1]
    tokens = 4 * spec.batch_size * spec.model.n_ctx
    assert int(last["tokens"]) == tokens and int(last["n_total"]) == counts.total
    assert int(last["n_embedding"]) + int(last["n_nonembedding"]) == counts.total
    assert float(last["compute_total"]) == 6 * counts.total * tokens
    assert float(last["compute_nonembedding"]) == 6 * counts.nonembedding * tokens
    assert last["loss"] == last["val_loss"] and last["schedule"] == "cosine"
    # the whole schedule, so learning-curve laws can rebuild every step's rate (jaxscale curve)
    assert int(last["warmup_steps"]) == spec.schedule.warmup_steps
    assert float(last["final_fraction"]) == spec.schedule.final_fraction
    assert (tmp_path / lm.DONE_FILE).is_file()


def test_nan_guard_stops_with_message_and_keeps_last_good_checkpoint(tmp_path, monkeypatch):
    spec, data = tiny_run(steps=20, checkpoint_every=2)
    real_updates = lm.train_updates
    calls = {"n": 0}

    def poisoned(state, batches, lrs, count, **kw):  # fault injection: parameters turn NaN after step 6
        calls["n"] += 1  # a call ends at each evaluation step: steps 1-2, 3-4, 5-6, ...
        state, losses = real_updates(state, batches, lrs, count, **kw)
        if calls["n"] == 3:
            state = {**state, "params": jax.tree_util.tree_map(lambda p: p * jnp.nan, state["params"])}
        return state, losses

    monkeypatch.setattr(lm, "train_updates", poisoned)
    with pytest.raises(lm.TrainingDiverged, match=r"loss is nan at step 6.*last good checkpoint kept"):
        lm.train(spec, data, tmp_path, progress=False)
    with Checkpoints(tmp_path / "checkpoints") as ckpt:
        assert ckpt.latest_step() == 4
        restored = ckpt.restore(lm.init_state(spec))
    assert all(np.isfinite(x).all() for x in jax.tree_util.tree_leaves(restored.state))
    assert [int(r["step"]) for r in lm.read_curve(tmp_path)] == [2, 4]
    assert not (tmp_path / lm.DONE_FILE).exists()


def test_killed_run_resumes_to_the_same_curve(tmp_path):
    spec, data = tiny_run(steps=100, checkpoint_every=4)
    reference = _losses(lm.train(spec, data, tmp_path / "reference", progress=False))

    worker = SETUP + f"""
spec, data = tiny_run(steps=100, checkpoint_every=4)
lm.train(spec, data, {str(tmp_path / 'killed')!r}, progress=False)
"""
    ckpt_dir = tmp_path / "killed" / "checkpoints"
    proc = _python(worker)
    deadline = time.time() + 120
    while time.time() < deadline:
        steps = [int(p.name) for p in ckpt_dir.glob("*") if p.name.isdigit()] if ckpt_dir.exists() else []
        if steps and max(steps) >= 12:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed" / lm.DONE_FILE).exists(), "the run finished before it was killed"
    with Checkpoints(ckpt_dir) as ckpt:
        killed_at = ckpt.latest_step()
    assert 12 <= killed_at < 100

    resumed = _python(worker)
    assert resumed.wait(timeout=300) == 0
    curve = _losses(lm.read_curve(tmp_path / "killed"))
    np.testing.assert_array_equal(curve[:, 0], reference[:, 0])
    np.testing.assert_allclose(curve, reference, rtol=1e-5)


@pytest.mark.slow
def test_eight_devices_equal_one_device(tmp_path):
    """The data-parallel step on 8 devices (a TPU v5e-8 or v2-8 host; forced CPU devices here)
    gives the one-device curve, in float32 and in bfloat16 compute, in bfloat16 also with each
    device's share computed in 2 microbatches.

    Tolerances, set before the comparison was run: float32 rtol 2e-5 (summation order only);
    bfloat16 rtol 1e-3, a quarter of bfloat16's relative precision 2^-8 (activations are
    rounded to 8 significant bits, so a parameter differing in its last float32 bits can move a
    rounding). The bfloat16 curve must differ from the float32 one (rtol 1e-5): compute dtype
    really changed."""
    worker = SETUP + f"""
import jax, json
from jaxscale.lm import sharding
assert len(jax.devices()) == 8, jax.devices()
out = {{}}
for dtype, layouts in (("float32", (("one", 1, 1), ("eight", 8, 1))),
                       ("bfloat16", (("one", 1, 1), ("eight", 8, 1), ("eight_x2", 8, 2)))):
    spec, data = tiny_run(steps=10, batch_size=16, compute_dtype=dtype)
    for name, devices, parts in layouts:
        curve = lm.train(spec, data, {str(tmp_path)!r} + f"/{{dtype}}_{{name}}", mesh=sharding.data_mesh(jax.devices()[:devices]),
                         microbatches=parts, progress=False)
        out[f"{{dtype}}_{{name}}"] = [[float(r["val_loss"]), float(r["train_loss"])] for r in curve]
print(json.dumps(out))
"""
    proc = _python(worker, {"XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"},
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    curves = {name: np.array(curve) for name, curve in json.loads(out.strip().splitlines()[-1]).items()}
    for dtype, rtol in (("float32", 2e-5), ("bfloat16", 1e-3)):
        one = curves[f"{dtype}_one"]
        assert one.shape == (5, 2) and np.isfinite(one).all()
        for other in [name for name in curves if name.startswith(dtype) and name != f"{dtype}_one"]:
            np.testing.assert_allclose(curves[other], one, rtol=rtol, err_msg=other)
    assert not np.allclose(curves["bfloat16_one"], curves["float32_one"], rtol=1e-5)


def test_batch_not_divisible_by_devices_is_rejected(tmp_path):
    spec, data = tiny_run()
    with pytest.raises(ValueError, match="batch_size"):
        lm.train(spec, TokenBatches(data.ids, 8, 4), tmp_path, progress=False)
    with pytest.raises(ValueError, match=r"batch_size \(8\) must be divisible by the number of devices \(1\) x microbatches \(3\)"):
        lm.train(spec, data, tmp_path / "parts", microbatches=3, progress=False)


def test_a_curve_row_cut_by_a_kill_is_left_out(tmp_path):
    """A kill between a row's bytes leaves a last line without its end: it is not read as a row."""
    from jaxscale.lm.train import CURVE_FILE, read_curve

    (tmp_path / CURVE_FILE).write_text("step,loss\n1,3.5\n2,3.4\n3,3.")
    assert [row["step"] for row in read_curve(tmp_path)] == ["1", "2"]
