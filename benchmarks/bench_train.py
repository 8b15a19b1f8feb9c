"""Training throughput of the sweep's transformers against this machine's matmul peak (MFU).

Anchor: a large dense ``jnp.dot`` in the training's compute dtype (the best FLOP/s this machine's
XLA reaches: float32 on a CPU, bfloat16 on a GPU or TPU). Measured: tokens/s of the jitted train
step (AdamW, clipping) on a preset's model at the preset's batch, achieved model FLOP/s =
tokens/s x training FLOPs per token (6 x matmul parameters + Kaplan's attention term
6 n_layer n_ctx d), and MFU = achieved / peak.

    python benchmarks/bench_train.py [--preset cpu|paper] [--size NAME|all] [--dtype float32|bfloat16]
        [--steps 50] [--matmul N] [--batch-size B]

Defaults: the ``cpu`` preset's largest model in float32 (the CPU figure); on an accelerator
``--preset paper --size all`` gives one row per model of Pearce & Song's settings in bfloat16.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.lm import presets
from jaxscale.lm import train as lm
from jaxscale.lm.sweep import model_config
from jaxscale.lm.tokens import TokenBatches
from jaxscale.networks.transformer import flops_per_token, matmul_params, param_counts


def train_throughput(spec: lm.RunSpec, steps: int) -> float:
    """Tokens per second of ``steps`` train steps on random ids (after one compiling step)."""
    vocab = spec.model.vocab_size
    ids = np.random.default_rng(0).integers(0, vocab, 4_000_000).astype(np.uint16)
    data = TokenBatches(ids, spec.model.n_ctx, spec.batch_size)
    state = lm.init_state(spec)
    lr = jnp.float32(1e-3)
    state, loss = lm.train_step(state, jnp.asarray(data.train_batch(0)), lr, model=spec.model, optim=spec.optim)
    loss.block_until_ready()
    batches = [jnp.asarray(data.train_batch(step)) for step in range(1, steps + 1)]
    start = time.perf_counter()
    for batch in batches:
        state, loss = lm.train_step(state, batch, lr, model=spec.model, optim=spec.optim)
    loss.block_until_ready()
    return steps * spec.tokens_per_step / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="cpu", choices=sorted(presets.PRESETS))
    p.add_argument("--size", default=None, help="model name of the preset, or 'all' (default: the largest)")
    p.add_argument("--dtype", default=None, choices=("float32", "bfloat16"),
                   help="compute dtype (default: the preset's)")
    p.add_argument("--steps", type=int, default=50)
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
    platform = jax.devices()[0].platform
    n = args.matmul or lm.peak_matmul_size()
    batch = args.batch_size or cfg.batch_size

    print(f"devices: {jax.device_count()} x {jax.devices()[0].device_kind} ({platform})")
    peak = lm.matmul_peak_flops(n, dtype=cfg.compute_dtype)
    print(f"anchor  dense {cfg.compute_dtype} matmul {n}^3: {peak / 1e12:.3f} TFLOP/s")
    for size in sizes:
        model = model_config(cfg, size, cfg.vocab_size)
        spec = lm.RunSpec("bench", model, lm.Schedule(1e-3, 10), batch, 10, 10)
        counts = param_counts(model)
        flops_token = flops_per_token(model, matmul_params(model))
        tokens_s = train_throughput(spec, args.steps)
        achieved = tokens_s * flops_token
        print(f"jaxscale train step, {cfg.name}-preset model {size.name} (N_T={counts.total:,}, l={model.n_layer}, "
              f"d={model.d_model}, vocab={model.vocab_size}, n_ctx={model.n_ctx}, batch={batch}, "
              f"{cfg.compute_dtype}):")
        print(f"  {tokens_s:,.0f} tokens/s x {flops_token:,} FLOP/token = {achieved / 1e12:.4f} TFLOP/s; "
              f"{spec.tokens_per_step / tokens_s * 1e3:.2f} ms/step")
        print(f"  ratio achieved / peak (MFU): {achieved / peak:.1%}")


if __name__ == "__main__":
    main()
