"""Training language models: AdamW, warmup + constant/cosine schedule, checkpoints, runs table.

AdamW (Loshchilov & Hutter 2019) with gradient clipping is the optax chain
``clip_by_global_norm -> scale_by_adam -> add_decayed_weights (matrices only) ->
scale_by_learning_rate``, i.e. theta <- theta - lr (m_hat / (sqrt(v_hat) + eps) + wd theta),
applied with ``optax.apply_updates``. The learning rate is an ``optax.inject_hyperparams``
hyperparameter, a traced value in the optimizer state: the host evaluates the schedule (built
once per run) and the jitted step writes that value into the state before the update, so every
learning rate and schedule of a sweep reuses one compiled step per model shape.

Every evaluation point appends one row to the run's curve (``curve.csv``, columns of
:mod:`jaxscale.tables.schema`): tokens D, N_T, N_\\E, N_E, C_T = 6 N_T D, C_\\E = 6 N_\\E D, learning
rate, schedule, train and validation loss (``loss`` is the validation loss). State is
checkpointed (orbax) every ``checkpoint_every`` steps; a restarted run restores the latest
checkpoint, truncates the curve to it and continues, and since batches are a function of
(seed, step) it ends with the same curve as an uninterrupted run. A non-finite loss stops the
run with :class:`TrainingDiverged`; no non-finite state is ever checkpointed.

Updates run :data:`UPDATES_PER_CALL` at a time in one compiled loop (:func:`train_updates`),
each call ending at the next evaluation step at the latest, so the host's work between updates
(dispatch, batches, the schedule, read from the schedule's ``rates`` without waiting on the
device) is paid once per call: a tiny model's update costs milliseconds, as much as that work.

Runs of one model shape train side by side (:func:`train_together`): their parameters and
optimizer states stacked on a leading axis and updated by ``jax.vmap`` of the one-run updates in
one compiled loop (:func:`train_updates_together`), each on its own batches at its own steps and
learning rates, each with its own curve, checkpoints, divergence stop and resume; a run that
ends or diverges leaves the stack and the others go on. :func:`train` is that for one run.
"""

from __future__ import annotations

import contextlib
import csv
import io
import dataclasses
import functools
import json
import math
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxscale.lm import distributed, sharding
from jaxscale.lm.tokens import TokenBatches
from jaxscale.networks.blocked_cross_entropy import VOCAB_BLOCK
from jaxscale.networks.transformer import (
    ParamCounts,
    TransformerConfig,
    flops_per_token,
    init_params,
    matmul_params,
    next_token_loss,
    param_counts,
)
from jaxscale.tables import accounting
from jaxscale.tables import schema as rs
from jaxscale.tables.learning_rates import Schedule
from jaxscale.support.atomic import atomic_path, write_text_atomic
from jaxscale.support.checkpoints import Checkpoints
from jaxscale.support.progress import progress_bar

CURVE_FILE = "curve.csv"
DONE_FILE = "done.json"
RATE_FILE = "rate.json"
SPEC_FILE = "spec.json"
#: Updates per compiled call (:func:`train_updates`); a call also ends at every evaluation step.
#: 32 updates of the ``cpu`` preset's models take 0.2-0.6 s on 2 cores, so the host's work
#: between calls is a few percent of the time.
UPDATES_PER_CALL = 32
CURVE_COLUMNS = (
    rs.RUN_ID, rs.STEP, rs.N_TOTAL, rs.N_NONEMBEDDING, rs.N_EMBEDDING, rs.TOKENS,
    rs.COMPUTE_TOTAL, rs.COMPUTE_NONEMBEDDING, rs.LOSS, rs.TRAIN_LOSS, rs.VAL_LOSS,
    rs.LEARNING_RATE, rs.SCHEDULE, rs.PEAK_LR, rs.TOTAL_STEPS, rs.WARMUP_STEPS, rs.FINAL_FRACTION,
)  # fmt: skip


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


@dataclasses.dataclass(frozen=True)
class OptimConfig:
    """AdamW hyperparameters other than the learning rate (static: part of the compiled step)."""

    b1: float = 0.9
    b2: float = 0.95
    eps: float = 1e-8
    weight_decay: float = 0.0
    clip_norm: float = 1.0


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """Everything that determines one training run."""

    run_id: str
    model: TransformerConfig
    schedule: Schedule
    batch_size: int
    eval_every: int
    checkpoint_every: int
    val_batches: int = 4
    seed: int = 0
    optim: OptimConfig = OptimConfig()
    eval_points: int | None = None  # evaluate at this many log-spaced steps instead of every eval_every

    def __post_init__(self) -> None:
        for name in ("batch_size", "eval_every", "checkpoint_every", "val_batches"):
            if getattr(self, name) < 1:
                raise ValueError(f"RunSpec.{name} must be >= 1; got {getattr(self, name)}")
        if self.eval_points is not None and self.eval_points < 2:
            raise ValueError(f"RunSpec.eval_points must be >= 2 or None; got {self.eval_points}")

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.model.n_ctx

    @functools.cached_property
    def eval_steps(self) -> frozenset[int]:
        """The steps after which the validation loss is logged: every ``eval_every`` steps, or, with
        ``eval_points``, that many steps evenly spaced in log step from ``eval_every`` to the end
        (Method 1 reads curves on a log-compute grid, so log spacing resolves every budget
        alike at a fraction of the evaluations); the last step always."""
        total = self.schedule.total_steps
        if self.eval_points is None:
            steps = range(self.eval_every, total + 1, self.eval_every)
        else:
            steps = np.unique(np.round(np.geomspace(min(self.eval_every, total), total, self.eval_points)))
        return frozenset(int(s) for s in steps) | {total}


# ----------------------------------------------------------------------------------------------
# The compiled functions.


def _decay_mask(params: Any) -> Any:
    """Weight decay on matrices (ndim >= 2) only, not on biases and LayerNorm gains."""
    return jax.tree_util.tree_map(lambda p: p.ndim >= 2, params)


def _adamw(learning_rate: float, optim: OptimConfig) -> optax.GradientTransformation:
    """AdamW with clipping: the update -lr (m_hat / (sqrt(v_hat) + eps) + wd theta) from the
    clipped gradient (Loshchilov & Hutter 2019; ``optax.adamw`` after a global-norm clip)."""
    return optax.chain(
        optax.clip_by_global_norm(optim.clip_norm),
        optax.scale_by_adam(optim.b1, optim.b2, optim.eps),
        optax.add_decayed_weights(optim.weight_decay, mask=_decay_mask),
        optax.scale_by_learning_rate(learning_rate),
    )


def _optimizer(optim: OptimConfig) -> optax.GradientTransformation:
    """:func:`_adamw` with the learning rate injected as a hyperparameter of the state (its
    initial value is a placeholder: :func:`train_step` sets it before every update)."""
    return optax.inject_hyperparams(_adamw, static_args="optim")(learning_rate=0.0, optim=optim)


def init_state(spec: RunSpec) -> dict[str, Any]:
    """Float32 parameters and AdamW state for ``spec`` (deterministic in ``spec.seed``)."""
    params = init_params(spec.model, jax.random.key(spec.seed))
    return {"params": params, "opt_state": _optimizer(spec.optim).init(params)}


def learning_rate(state: dict[str, Any]) -> jax.Array:
    """The learning rate of the last update, as held in the optimizer state."""
    return state["opt_state"].hyperparams["learning_rate"]


def _microbatches(batch: jax.Array, k: int, axis: int = 0) -> jax.Array:
    """``batch`` split along ``axis`` into ``k`` equal microbatches stacked on a new leading axis.

    Microbatch j holds rows j, j + k, j + 2k, ...: a device holding a contiguous block of the
    rows (the batch sharded along ``axis``) contributes its share to every microbatch, so the
    split moves no data between devices.
    """
    shape = batch.shape
    split = batch.reshape(*shape[:axis], shape[axis] // k, k, *shape[axis + 1 :])
    return jnp.moveaxis(split, axis + 1, 0)


def _loss_and_grads(model: TransformerConfig, params: Any, batch: jax.Array, microbatches: int,
                    vocab_block: int | None = VOCAB_BLOCK) -> tuple[jax.Array, Any]:
    """The mean next-token loss of ``batch`` and its gradient, accumulated over ``microbatches``
    equal parts one after another: the mean of equal-sized parts' means is the whole batch's
    mean, so the update is the same (up to rounding) in 1/k of the activation memory."""
    loss_and_grads = jax.value_and_grad(functools.partial(next_token_loss, model, vocab_block=vocab_block))
    if microbatches == 1:
        return loss_and_grads(params, batch)

    def add(total: tuple[jax.Array, Any], part: jax.Array) -> tuple[tuple[jax.Array, Any], None]:
        return jax.tree.map(jnp.add, total, loss_and_grads(params, part)), None

    zeros = jax.tree.map(jnp.zeros_like, (jnp.zeros((), jnp.float32), params))
    total, _ = jax.lax.scan(add, zeros, _microbatches(batch, microbatches))
    return jax.tree.map(lambda x: x / microbatches, total)


def _update(state: dict[str, Any], batch: jax.Array, lr: jax.Array, model: TransformerConfig, optim: OptimConfig,
            microbatches: int, vocab_block: int | None) -> tuple[dict[str, Any], jax.Array]:
    """One AdamW update at learning rate ``lr`` on ``batch``: the new state and the loss before it."""
    loss, grads = _loss_and_grads(model, state["params"], batch, microbatches, vocab_block)
    opt_state = state["opt_state"]
    opt_state = opt_state._replace(hyperparams={**opt_state.hyperparams, "learning_rate": lr})
    updates, opt_state = _optimizer(optim).update(grads, opt_state, state["params"])
    return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, loss


@functools.partial(jax.jit, static_argnames=("model", "optim", "microbatches", "vocab_block"), donate_argnums=(0,))
def train_step(
    state: dict[str, Any], batch: jax.Array, lr: jax.Array, *, model: TransformerConfig, optim: OptimConfig,
    microbatches: int = 1, vocab_block: int | None = VOCAB_BLOCK,
) -> tuple[dict[str, Any], jax.Array]:
    """One AdamW update at learning rate ``lr`` (a traced scalar, so no recompilation per value)
    on ``batch``: returns the new state and the loss before the update. With ``microbatches``
    k > 1 the gradient is accumulated over k parts of the batch in turn (the same update in
    1/k of the memory: 4096 sequences of the ``paper`` preset's first model ask XLA for 27 GB at
    once, more than one 16 GB accelerator holds). The loss is computed ``vocab_block``
    vocabulary entries at a time (:func:`~jaxscale.networks.transformer.next_token_loss`;
    ``None``: from the whole logits)."""
    return _update(state, batch, lr, model, optim, microbatches, vocab_block)


def _updates(state: dict[str, Any], batches: jax.Array, lrs: jax.Array, count: jax.Array, model: TransformerConfig,
             optim: OptimConfig, microbatches: int, vocab_block: int | None) -> tuple[dict[str, Any], jax.Array]:
    """The first ``count`` of :func:`_update` on ``batches[i]`` at ``lrs[i]`` in turn, in one
    compiled loop: the new state and each update's loss (0 for the slots past ``count``)."""

    def body(i: jax.Array, carry: tuple[dict[str, Any], jax.Array]) -> tuple[dict[str, Any], jax.Array]:
        state, losses = carry
        state, loss = _update(state, batches[i], lrs[i], model, optim, microbatches, vocab_block)
        return state, losses.at[i].set(loss)

    return jax.lax.fori_loop(0, count, body, (state, jnp.zeros(lrs.shape, jnp.float32)))


@functools.partial(jax.jit, static_argnames=("model", "optim", "microbatches", "vocab_block"), donate_argnums=(0,))
def train_updates(
    state: dict[str, Any], batches: jax.Array, lrs: jax.Array, count: jax.Array, *, model: TransformerConfig,
    optim: OptimConfig, microbatches: int = 1, vocab_block: int | None = VOCAB_BLOCK,
) -> tuple[dict[str, Any], jax.Array]:
    """Up to ``len(batches)`` updates of :func:`train_step` in one call: the first ``count`` (a
    traced integer, so one compilation serves every count) on ``batches[i]`` ``(batch, n_ctx +
    1)`` at ``lrs[i]`` in turn. Returns the new state and the updates' losses ``(len(batches),)``,
    0 past ``count``. A tiny model's update takes milliseconds, so the host's work between
    updates (dispatch, reading the schedule) costs as much as the update itself; here it is paid
    once per :data:`UPDATES_PER_CALL` updates."""
    return _updates(state, batches, lrs, count, model, optim, microbatches, vocab_block)


@functools.partial(jax.jit, static_argnames=("model", "optim", "microbatches", "vocab_block"), donate_argnums=(0,))
def train_updates_together(
    states: dict[str, Any], batches: jax.Array, lrs: jax.Array, count: jax.Array, *, model: TransformerConfig,
    optim: OptimConfig, microbatches: int = 1, vocab_block: int | None = VOCAB_BLOCK,
) -> tuple[dict[str, Any], jax.Array]:
    """:func:`train_updates` of several runs of one model shape side by side, in one compiled
    loop: ``states`` are their states stacked on a new leading axis, ``batches`` ``(updates,
    runs, batch, n_ctx + 1)`` and ``lrs`` ``(updates, runs)`` theirs; returns the new stacked
    states and the losses ``(runs, updates)``. ``jax.vmap`` of the one-run updates, so each run's
    updates are the ones it would have alone."""
    updates = functools.partial(_updates, model=model, optim=optim, microbatches=microbatches, vocab_block=vocab_block)
    return jax.vmap(updates, in_axes=(0, 1, 1, None))(states, batches, lrs, count)


@functools.partial(jax.jit, static_argnames=("model", "microbatches", "vocab_block"))
def eval_loss(params: Any, batches: jax.Array, *, model: TransformerConfig, microbatches: int = 1,
              vocab_block: int | None = VOCAB_BLOCK) -> jax.Array:
    """Mean next-token loss over ``batches`` of shape ``(n, batch, n_ctx + 1)``, each batch in
    ``microbatches`` equal parts (one part at a time)."""
    parts = _microbatches(batches, microbatches, axis=1)
    parts = parts.reshape(-1, *parts.shape[2:])
    loss = functools.partial(next_token_loss, model, params, vocab_block=vocab_block)
    return jnp.mean(jax.lax.map(loss, parts))


def peak_matmul_size() -> int:
    """The side of the square matmul that measures the default device's peak: 8192 on a GPU or
    TPU (smaller products leave their matrix units idle part of the time), 2048 on a CPU."""
    return 2048 if jax.devices()[0].platform == "cpu" else 8192


def matmul_peak_flops(n: int | None = None, repeats: int = 5, dtype: str = "float32") -> float:
    """This machine's dense matmul rate (FLOP/s) in ``dtype``: best of ``repeats`` ``n x n``
    products, ``n`` by default :func:`peak_matmul_size`. MFU divides by this rate measured in the
    training's compute dtype (a float32 peak under bfloat16 training overstates MFU many times)."""
    n = n or peak_matmul_size()
    key_a, key_b = jax.random.split(jax.random.key(0))
    a = jax.random.normal(key_a, (n, n), dtype)
    b = jax.random.normal(key_b, (n, n), dtype)
    dot = jax.jit(jnp.dot)
    dot(a, b).block_until_ready()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        dot(a, b).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return 2.0 * n**3 / best


# ----------------------------------------------------------------------------------------------
# The curve file.


def read_curve(directory: Path) -> list[dict[str, str]]:
    """The rows of a run's curve file; a last row cut short by a kill (no line end) is left out,
    as the rows after the last checkpoint are rewritten on resume anyway."""
    path = directory / CURVE_FILE
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        text = f.read()
    whole = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    return list(csv.DictReader(io.StringIO(whole, newline="")))


def _write_curve(directory: Path, rows: list[dict[str, Any]]) -> None:
    if jax.process_index() != 0:  # multi-host: one process writes the files
        return
    with atomic_path(directory / CURVE_FILE) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CURVE_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _append_row(directory: Path, row: dict[str, Any]) -> None:
    if jax.process_index() != 0:
        return
    path = directory / CURVE_FILE
    new = not path.is_file()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CURVE_COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow(row)
        f.flush()


def curve_row(spec: RunSpec, step: int, lr: float, train_loss: float, val_loss: float) -> dict[str, Any]:
    """One runs-table row (Pearce & Song Eqs. 1-4: C_T = 6 N_T D, C_\\E = 6 N_\\E D)."""
    counts = run_param_counts(spec.model)
    tokens = step * spec.tokens_per_step
    return {
        rs.RUN_ID: spec.run_id,
        rs.STEP: step,
        rs.N_TOTAL: counts.total,
        rs.N_NONEMBEDDING: counts.nonembedding,
        rs.N_EMBEDDING: counts.embedding,
        rs.TOKENS: tokens,
        rs.COMPUTE_TOTAL: accounting.training_compute(counts.total, float(tokens)),
        rs.COMPUTE_NONEMBEDDING: accounting.training_compute(counts.nonembedding, float(tokens)),
        rs.LOSS: val_loss,
        rs.TRAIN_LOSS: train_loss,
        rs.VAL_LOSS: val_loss,
        rs.LEARNING_RATE: lr,
        rs.SCHEDULE: spec.schedule.kind,
        rs.PEAK_LR: spec.schedule.peak_lr,
        rs.TOTAL_STEPS: spec.schedule.total_steps,
        rs.WARMUP_STEPS: spec.schedule.warmup_steps,
        rs.FINAL_FRACTION: spec.schedule.final_fraction,
    }


@functools.lru_cache(maxsize=None)
def run_param_counts(model: TransformerConfig) -> ParamCounts:
    """:func:`param_counts`, computed once per model shape."""
    return param_counts(model)


# ----------------------------------------------------------------------------------------------
# The loop.


def _check_finite(value: float, spec: RunSpec, step: int, directory: Path, what: str) -> None:
    if not math.isfinite(value):
        raise TrainingDiverged(
            f"run {spec.run_id}: {what} is {value} at step {step} (learning rate "
            f"{spec.schedule.peak_lr}); stopped, last good checkpoint kept in {directory}"
        )


@dataclasses.dataclass
class _Lane:
    """One run trained side by side with others: where it is and what it has seen since its last evaluation."""

    spec: RunSpec
    directory: Path
    checkpoints: Checkpoints
    state: Any
    step: int
    end: int
    saved: int
    rates: np.ndarray  # the learning rate of each update, from the first: ``rates[step]`` produces step + 1
    losses: list[tuple[jax.Array, int, int]] = dataclasses.field(default_factory=list)  # (a call's losses, this run's row, updates)
    outcome: TrainingDiverged | None = None
    val_loss: float | None = None  # at its last evaluation


def _check_group(specs: list[RunSpec], data: TokenBatches) -> None:
    """Runs trained side by side share one compiled step: one model, optimizer and batch size."""
    first = specs[0]
    for spec in specs[1:]:
        if (spec.model, spec.optim, spec.batch_size) != (first.model, first.optim, first.batch_size):
            raise ValueError(f"run {spec.run_id} cannot train beside {first.run_id}: runs trained together need "
                             "the same model, optimizer settings and batch size")
    if len({spec.run_id for spec in specs}) != len(specs):
        raise ValueError("runs trained together need distinct run ids")
    if (data.batch_size, data.n_ctx) != (first.batch_size, first.model.n_ctx):
        raise ValueError(
            f"data batches are ({data.batch_size}, {data.n_ctx}) but run {first.run_id} needs "
            f"(batch_size, n_ctx) = ({first.batch_size}, {first.model.n_ctx})"
        )
    if first.model.vocab_size < int(np.max(data.ids[: min(len(data.ids), 1_000_000)])) + 1:
        raise ValueError(f"token ids exceed the model's vocab_size {first.model.vocab_size}")


def _gather(states: list[Any]) -> Any:
    """The states of the runs going on as :func:`_advance` takes them: one run's as it is, several stacked."""
    if len(states) < 2:
        return states[0] if states else None
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def _column(tree: Any, i: int) -> Any:
    return jax.tree.map(lambda leaf: leaf[i], tree)


def _advance(states: Any, lanes: list[_Lane], count: int, data: TokenBatches, mesh: jax.sharding.Mesh,
             statics: dict[str, Any]) -> tuple[Any, jax.Array]:
    """``count`` updates of every run going on, each on its own batches at its own learning
    rates: one run by :func:`train_updates`, several side by side by
    :func:`train_updates_together`; the runs' losses ``(runs, UPDATES_PER_CALL)``."""
    batches = np.zeros((UPDATES_PER_CALL, len(lanes), data.batch_size, data.n_ctx + 1), np.int32)
    lrs = np.zeros((UPDATES_PER_CALL, len(lanes)), np.float32)
    for i, lane in enumerate(lanes):
        lrs[:count, i] = lane.rates[lane.step:lane.step + count]
        for j in range(count):
            batches[j, i] = data.train_batch(lane.step + j, lane.spec.seed)
    count = np.int32(count)
    if len(lanes) == 1:
        state, losses = train_updates(states, sharding.shard_global_batch(batches[:, 0], mesh, batch_axis=1),
                                      lrs[:, 0], count, **statics)
        return state, losses[None]
    return train_updates_together(states, sharding.shard_global_batch(batches, mesh, batch_axis=2), lrs, count, **statics)


def _evaluate(lane: _Lane, val: jax.Array, microbatches: int, vocab_block: int | None) -> bool:
    """Log the lane's evaluation row and checkpoint it when due (True if it was); a non-finite
    loss ends the lane with :class:`TrainingDiverged` and checkpoints nothing."""
    spec, step = lane.spec, lane.step
    try:
        train_loss = float(np.mean(np.concatenate([np.asarray(losses)[i, :count] for losses, i, count in lane.losses])))
        lane.losses = []
        _check_finite(train_loss, spec, step, lane.directory, "training loss")
        val_loss = float(eval_loss(lane.state["params"], val, model=spec.model, microbatches=microbatches,
                                   vocab_block=vocab_block))
        _check_finite(val_loss, spec, step, lane.directory, "validation loss")
    except TrainingDiverged as err:
        lane.outcome = err
        return False
    lane.val_loss = val_loss
    _append_row(lane.directory, curve_row(spec, step, float(learning_rate(lane.state)), train_loss, val_loss))
    if step - lane.saved >= spec.checkpoint_every or step == spec.schedule.total_steps:
        lane.checkpoints.save(step, lane.state, {"run_id": spec.run_id, "val_loss": val_loss})
        lane.saved = step
        return True
    return False


def _next_stop(lane: _Lane) -> int:
    """The step at which the lane next stops to evaluate, or ends."""
    return min([step for step in lane.spec.eval_steps if step > lane.step] + [lane.end])


def _loss_range(lanes: list[_Lane]) -> str:
    """The validation loss the progress bar shows: one run's, or the range of a group's last ones."""
    losses = [lane.val_loss for lane in lanes if lane.val_loss is not None]
    if not losses:
        return "nan"
    low, high = min(losses), max(losses)
    return f"{low:.3f}" if len(losses) == 1 else f"{low:.3f}-{high:.3f}"


def _write_rate(directory: Path, run_updates: int, seconds: float, runs_together: int) -> None:
    """Keep, beside a run's checkpoint, the rate at which its group has trained since the process
    started (updates of all its runs per second, compilation included), the number of runs
    trained side by side and the device: what the time a sweep has left is estimated from."""
    if jax.process_index() != 0 or seconds <= 0:
        return
    rate = {"run_updates_per_s": run_updates / seconds, "run_updates": run_updates, "seconds": seconds,
            "runs_together": runs_together, "device": f"{jax.device_count()} x {jax.devices()[0].device_kind}"}
    write_text_atomic(directory / RATE_FILE, json.dumps(rate))


def train_together(
    specs: list[RunSpec],
    data: TokenBatches,
    directories: list[str | Path],
    *,
    mesh: jax.sharding.Mesh | None = None,
    peak_flops: float | None = None,
    progress: bool = True,
    stop_after: int | None = None,
    microbatches: int = 1,
    vocab_block: int | None = VOCAB_BLOCK,
) -> list[list[dict[str, str]] | TrainingDiverged]:
    """Train the runs ``specs`` of one model shape side by side, each in its own directory, in one
    compiled loop (:func:`train_updates_together`: ``jax.vmap`` over their parameters and optimizer states),
    and return each run's curve rows, or the :class:`TrainingDiverged` that stopped it.

    Each run keeps its own schedule, data order (``seed``), evaluation steps, curve, checkpoints
    and divergence stop, and resumes from its own checkpoint, so runs may stand at different
    steps: each update takes every run's own batch at its own step. A run that ends or diverges
    leaves the group (the step is compiled once per number of runs still going); the others go on.
    Run by run the curves are those of :func:`train` training the runs one at a time (up to
    rounding). ``stop_after`` ends the process's work early at that step (tests of resumption).
    """
    directories = [Path(d) for d in directories]
    if len(directories) != len(specs) or not specs:
        raise ValueError(f"train_together needs one directory per run; got {len(specs)} runs, {len(directories)} directories")
    _check_group(specs, data)
    model, optim = specs[0].model, specs[0].optim
    mesh = mesh if mesh is not None else sharding.data_mesh()
    sharding.check_divisible(specs[0].batch_size, mesh, microbatches)
    outcomes: list[Any] = [None] * len(specs)
    finished = [_claim_directory(spec, directory) for spec, directory in zip(specs, directories)]
    flops_step = flops_per_token(model, matmul_params(model)) * specs[0].tokens_per_step
    vals: dict[int, jax.Array] = {}
    advice = (
        f"runs {', '.join(s.run_id for s in specs)}: their last checkpoints are kept in their directories; "
        "relaunch every process with the same command to resume from them"
    )
    with contextlib.ExitStack() as stack:
        stack.enter_context(distributed.lost_process_guard(advice))
        lanes: list[_Lane] = []
        for i, (spec, directory) in enumerate(zip(specs, directories)):
            if finished[i]:
                continue
            ckpt = stack.enter_context(Checkpoints(directory / "checkpoints", max_to_keep=1))
            state = sharding.replicate(init_state(spec), mesh)
            restored = ckpt.restore(state)
            state, step = (restored.state, restored.step) if restored is not None else (state, 0)
            _write_curve(directory, [r for r in read_curve(directory) if int(r[rs.STEP]) <= step])
            end = spec.schedule.total_steps if stop_after is None else min(stop_after, spec.schedule.total_steps)
            lanes.append(_Lane(spec, directory, ckpt, state, step, end, step, spec.schedule.rates))
            if spec.val_batches not in vals:
                vals[spec.val_batches] = sharding.shard_global_batch(data.val_batches(spec.val_batches), mesh, batch_axis=1)
        desc = lanes[0].spec.run_id + (f" +{len(lanes) - 1}" if len(lanes) > 1 else "") if lanes else ""
        bar = progress_bar(total=sum(lane.spec.schedule.total_steps for lane in lanes),
                           initial=sum(lane.step for lane in lanes), desc=desc, disable=not progress, leave=False)
        going = [lane for lane in lanes if lane.step < lane.end]
        states = _gather([lane.state for lane in going])
        statics = {"model": model, "optim": optim, "microbatches": microbatches, "vocab_block": vocab_block}
        tick, tick_steps = time.perf_counter(), 0
        started, advanced = tick, 0
        while going:
            count = min(UPDATES_PER_CALL, *(_next_stop(lane) - lane.step for lane in going))
            states, losses = _advance(states, going, count, data, mesh, statics)
            tick_steps += count * len(going)
            advanced += count * len(going)
            for i, lane in enumerate(going):
                lane.losses.append((losses, i, count))
                lane.step += count
                if lane.step in lane.spec.eval_steps:
                    lane.state = states if len(going) == 1 else _column(states, i)
                    if _evaluate(lane, vals[lane.spec.val_batches], microbatches, vocab_block):
                        _write_rate(lane.directory, advanced, time.perf_counter() - started, len(going))
                    now = time.perf_counter()
                    rate = tick_steps / max(now - tick, 1e-9)
                    postfix = {"loss": _loss_range(lanes), "tok/s": f"{rate * lane.spec.tokens_per_step:.3g}"}
                    if peak_flops:
                        postfix["MFU"] = f"{rate * flops_step / peak_flops:.0%}"
                    bar.set_postfix(postfix)
                    tick, tick_steps = now, 0
            bar.update(count * len(going))
            keep = [i for i, lane in enumerate(going) if lane.step < lane.end and lane.outcome is None]
            if len(keep) < len(going):
                for i in keep:  # a run that goes on leaves the stack as its own state, then is stacked anew
                    going[i].state = states if len(going) == 1 else _column(states, i)
                going = [going[i] for i in keep]
                states = _gather([lane.state for lane in going])
        bar.close()
    for lane in lanes:
        if lane.outcome is None and lane.step == lane.spec.schedule.total_steps and distributed.is_main_process():
            write_text_atomic(lane.directory / DONE_FILE, json.dumps({"final_val_loss": float(read_curve(lane.directory)[-1][rs.LOSS])}))
    by_directory = {lane.directory: lane for lane in lanes}
    for i, directory in enumerate(directories):
        lane = by_directory.get(directory)
        outcomes[i] = lane.outcome if lane is not None and lane.outcome is not None else read_curve(directory)
    return outcomes


def train(
    spec: RunSpec,
    data: TokenBatches,
    directory: str | Path,
    *,
    mesh: jax.sharding.Mesh | None = None,
    peak_flops: float | None = None,
    progress: bool = True,
    stop_after: int | None = None,
    microbatches: int = 1,
    vocab_block: int | None = VOCAB_BLOCK,
) -> list[dict[str, str]]:
    """Train ``spec`` on ``data`` in ``directory`` (resuming from its checkpoint) and return the
    curve rows: :func:`train_together` of one run. ``stop_after`` ends the process's work early
    at that step (tests of resumption). ``mesh`` and ``microbatches`` say how each batch is
    computed (over the mesh's devices, each device's share in that many parts one after
    another), not what: the same run to rounding.

    ``data.batch_size`` and ``data.n_ctx`` must equal the spec's; ``peak_flops`` (FLOP/s, e.g.
    :func:`matmul_peak_flops`) turns achieved FLOP/s into MFU on the progress bar.

    Raises:
        TrainingDiverged: the loss became non-finite (the last good checkpoint is kept).
    """
    (outcome,) = train_together([spec], data, [directory], mesh=mesh, peak_flops=peak_flops, progress=progress,
                                stop_after=stop_after, microbatches=microbatches, vocab_block=vocab_block)
    if isinstance(outcome, TrainingDiverged):
        raise outcome
    return outcome


def _claim_directory(spec: RunSpec, directory: Path) -> bool:
    """Record ``spec`` in ``directory`` and say whether the run there is finished.

    A directory holding a different run is refused, except that a constant-learning-rate run may
    be extended to more steps (its curve so far is unchanged; it is then unfinished). Every
    process decides from the files as they were before process 0 rewrites them.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / SPEC_FILE
    new = json.loads(json.dumps(dataclasses.asdict(spec), default=str))
    old = json.loads(path.read_text()) if path.is_file() else new
    extended = (
        old != new
        and spec.schedule.kind == "constant"
        and old["schedule"]["total_steps"] < spec.schedule.total_steps
        and {**old, "schedule": {**old["schedule"], "total_steps": 0}}
        == {**new, "schedule": {**new["schedule"], "total_steps": 0}}
    )
    if old != new and not extended:
        raise ValueError(f"{directory} holds a different run than {spec.run_id!r}; use another directory")
    done = (directory / DONE_FILE).is_file() and not extended
    distributed.sync(f"claimed {spec.run_id}")
    if distributed.is_main_process():
        if extended:
            (directory / DONE_FILE).unlink(missing_ok=True)
        write_text_atomic(path, json.dumps(new, indent=1))
    return done
