"""Training throughput of the sweep's transformers, before and after, against this machine's matmul peak (MFU).

Anchor: a large dense ``jnp.dot`` in the training's compute dtype (the best FLOP/s this machine's
XLA reaches: float32 on a CPU, bfloat16 on a GPU or TPU), measured in the same process.

Measured, per model size of a preset, at the preset's batch, in the same process and rounds:

- before: one run at a time, one compiled call per update (:func:`jaxscale.lm.train.train_step`)
  with the whole float32 logits (``vocab_block=None``) and the learning rate read from the
  schedule on the host before each update, as the sweep trained until issue 41;
- after, one run: :data:`jaxscale.lm.train.UPDATES_PER_CALL` updates per compiled call
  (:func:`jaxscale.lm.train.train_updates`), the loss over vocabulary blocks
  (:mod:`jaxscale.networks.blocked_cross_entropy`), the rates read from the schedule's array;
- after, side by side: the size's learning-rate grid (as many runs as the preset has rates,
  ``--runs`` to change) in one compiled loop (:func:`jaxscale.lm.train.train_updates_together`).

Tokens/s are summed over the runs trained together; achieved model FLOP/s = tokens/s x training
FLOPs per token (6 x matmul parameters + Kaplan's attention term 6 n_layer n_ctx d), and
MFU = achieved / peak. Each figure is the best of ``--rounds`` rounds of ``--steps`` updates
(after one compiling update), before and after alternating, so both see the same load; the
process's CPU time per update is printed beside the wall time (on a shared CPU it varies less).

    python benchmarks/bench_train.py [--preset cpu|paper] [--size NAME|all] [--dtype float32|bfloat16]
        [--steps 64] [--rounds 3] [--runs R] [--matmul N] [--batch-size B]

Defaults: the ``cpu`` preset's largest model in float32; on an accelerator ``--preset paper --size
all`` gives one row per model of Pearce & Song's settings in bfloat16.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.lm import presets
from jaxscale.lm import train as lm
from jaxscale.lm.sweep import model_config
from jaxscale.networks.transformer import flops_per_token, matmul_params, param_counts


def _one_at_a_time(spec: lm.RunSpec, batch: jax.Array) -> tuple[Callable[[], jax.Array], int]:
    """One update of one run per call, whole logits, the rate read from the schedule on the host
    before it (the sweep's step before)."""
    box = [lm.init_state(spec)]

    def update() -> jax.Array:
        box[0], loss = lm.train_step(box[0], batch, jnp.float32(spec.schedule(5)), model=spec.model,
                                     optim=spec.optim, vocab_block=None)
        return loss

    return update, 1


def _in_calls(spec: lm.RunSpec, batches: jax.Array) -> tuple[Callable[[], jax.Array], int]:
    """:data:`~jaxscale.lm.train.UPDATES_PER_CALL` updates of one run per call, blocked loss."""
    box = [lm.init_state(spec)]
    k = lm.UPDATES_PER_CALL
    chunk, lrs = batches[jnp.arange(k) % len(batches)], np.asarray(spec.schedule.rates[:k])

    def update() -> jax.Array:
        box[0], losses = lm.train_updates(box[0], chunk, lrs, np.int32(k), model=spec.model, optim=spec.optim)
        return losses

    return update, k


def _side_by_side(spec: lm.RunSpec, batches: jax.Array) -> tuple[Callable[[], jax.Array], int]:
    """:data:`~jaxscale.lm.train.UPDATES_PER_CALL` updates of ``len(batches)`` runs trained
    together per call, blocked loss (the sweep's step after, on an accelerator)."""
    runs, k = batches.shape[0], lm.UPDATES_PER_CALL
    box = [jax.tree.map(lambda *leaves: jnp.stack(leaves), *[lm.init_state(spec)] * runs)]
    chunk = jnp.broadcast_to(batches[None], (k, *batches.shape))
    lrs = np.broadcast_to(np.geomspace(1e-3, 1e-2, runs).astype(np.float32), (k, runs))

    def update() -> jax.Array:
        box[0], losses = lm.train_updates_together(box[0], chunk, lrs, np.int32(k), model=spec.model,
                                                   optim=spec.optim)
        return losses

    return update, k


def _seconds_per_update(case: tuple[Callable[[], jax.Array], int], steps: int) -> tuple[float, float]:
    """Wall and CPU seconds per update over at least ``steps`` updates (whole calls of ``case``,
    a function and the updates one call makes)."""
    update, per_call = case
    update().block_until_ready()
    calls = max(1, round(steps / per_call))
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        loss = update()
    loss.block_until_ready()
    return (time.perf_counter() - wall) / (calls * per_call), (time.process_time() - cpu) / (calls * per_call)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="cpu", choices=sorted(presets.PRESETS))
    p.add_argument("--size", default=None, help="model name of the preset, or 'all' (default: the largest)")
    p.add_argument("--dtype", default=None, choices=("float32", "bfloat16"),
                   help="compute dtype (default: the preset's)")
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=None, help="runs trained together (default: the preset's rates)")
    p.add_argument("--matmul", type=int, default=None,
                   help="size n of the n x n matmul anchor (default 2048 on a CPU, 8192 elsewhere)")
    p.add_argument("--batch-size", type=int, default=None, help="override the preset's batch size")
    args = p.parse_args()

    cfg = presets.preset(args.preset)
    if args.dtype:
        cfg = dataclasses.replace(cfg, compute_dtype=args.dtype)
    if args.size == "all":
        sizes = list(cfg.sizes)
    elif args.size is None:
        sizes = [max(cfg.sizes, key=lambda s: param_counts(model_config(cfg, s, cfg.vocab_size)).total)]
    else:
        sizes = [s for s in cfg.sizes if s.name == args.size]
        if not sizes:
            p.error(f"--size: {args.size!r} is not a model of the {cfg.name} preset "
                    f"({', '.join(s.name for s in cfg.sizes)})")
    runs = args.runs or len(cfg.learning_rates)
    n = args.matmul or lm.peak_matmul_size()
    batch_size = args.batch_size or cfg.batch_size

    print(f"devices: {jax.device_count()} x {jax.devices()[0].device_kind} ({jax.devices()[0].platform})")
    peak = lm.matmul_peak_flops(n, dtype=cfg.compute_dtype)
    print(f"anchor  dense {cfg.compute_dtype} matmul {n}^3: {peak / 1e12:.3f} TFLOP/s")
    rng = np.random.default_rng(0)
    for size in sizes:
        model = model_config(cfg, size, cfg.vocab_size)
        spec = lm.RunSpec("bench", model, lm.Schedule(1e-3, 1000, 10), batch_size, 10, 10)
        batches = jnp.asarray(rng.integers(0, model.vocab_size, (runs, batch_size, model.n_ctx + 1)), jnp.int32)
        cases = {"before: 1 run, an update per call, whole logits": (_one_at_a_time(spec, batches[0]), 1),
                 f"after: 1 run, {lm.UPDATES_PER_CALL} updates per call": (_in_calls(spec, batches), 1),
                 f"after: {runs} runs side by side": (_side_by_side(spec, batches), runs)}
        best = {name: (np.inf, np.inf) for name in cases}
        for _ in range(args.rounds):
            for name, (case, _) in cases.items():
                best[name] = min(best[name], _seconds_per_update(case, args.steps))
        counts = param_counts(model)
        flops_token = flops_per_token(model, matmul_params(model))
        print(f"{cfg.name}-preset model {size.name} (N_T={counts.total:,}, l={model.n_layer}, d={model.d_model}, "
              f"vocab={model.vocab_size}, n_ctx={model.n_ctx}, batch={batch_size}, {cfg.compute_dtype}):")
        rates = {}
        for name, (_, k) in cases.items():
            wall, cpu = best[name]
            rates[name] = tokens_s = k * spec.tokens_per_step / wall
            print(f"  {name}: {tokens_s:,.0f} tokens/s summed, {wall * 1e3:.2f} ms/update "
                  f"(CPU time {cpu * 1e3:.2f} ms), {tokens_s * flops_token / 1e12:.4f} TFLOP/s, "
                  f"MFU {tokens_s * flops_token / peak:.1%}")
        before, *afters = rates.values()
        print("  ratio after / before (tokens/s summed): "
              + ", ".join(f"{name.split(': ')[1]} {after / before:.2f}x" for name, after in zip(list(rates)[1:], afters)))


if __name__ == "__main__":
    main()
