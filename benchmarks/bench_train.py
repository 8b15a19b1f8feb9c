"""Training throughput of the largest ``cpu``-preset transformer against this machine's matmul peak.

Anchor: a large dense float32 ``jnp.dot`` (the best FLOP/s this machine's XLA reaches). Measured:
tokens/s of the jitted train step (AdamW, clipping) on the largest model of the ``cpu`` preset at
the preset's batch, achieved model FLOP/s = tokens/s x training FLOPs per token (6 x matmul
parameters + Kaplan's attention term 6 n_layer n_ctx d), and MFU = achieved / peak.

    python benchmarks/bench_train.py [--steps 50] [--matmul 2048] [--batch-size B]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.experiments import presets
from jaxscale.experiments.sweep import model_config
from jaxscale.models.transformer import flops_per_token, matmul_params, param_counts
from jaxscale.text.tokens import TokenBatches
from jaxscale.train import lm


def train_throughput(spec: lm.RunSpec, steps: int) -> float:
    """Tokens per second of ``steps`` train steps on random ids (after one compiling step)."""
    vocab = spec.model.vocab_size
    ids = np.random.default_rng(0).integers(0, vocab, 2_000_000).astype(np.uint16)
    data = TokenBatches(ids, spec.model.n_ctx, spec.batch_size)
    state = lm.init_state(spec)
    lr = jnp.float32(1e-3)
    state, loss = lm.train_step(state, jnp.asarray(data.train_batch(0)), lr, model=spec.model, optim=spec.optim)
    loss.block_until_ready()
    start = time.perf_counter()
    for step in range(1, steps + 1):
        batch = jnp.asarray(data.train_batch(step))
        state, loss = lm.train_step(state, batch, lr, model=spec.model, optim=spec.optim)
    loss.block_until_ready()
    return steps * spec.tokens_per_step / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--matmul", type=int, default=2048, help="size n of the n x n matmul anchor")
    p.add_argument("--batch-size", type=int, default=None, help="override the preset's batch size")
    args = p.parse_args()

    cfg = presets.CPU
    size = max(cfg.sizes, key=lambda s: param_counts(model_config(cfg, s, cfg.vocab_size)).total)
    model = model_config(cfg, size, cfg.vocab_size)
    batch = args.batch_size or cfg.batch_size
    spec = lm.RunSpec("bench", model, lm.Schedule(1e-3, 10), batch, 10, 10)
    counts = param_counts(model)
    flops_token = flops_per_token(model, matmul_params(model))

    print(f"devices: {jax.device_count()} x {jax.devices()[0].device_kind}")
    peak = lm.matmul_peak_flops(args.matmul)
    print(f"anchor  dense float32 matmul {args.matmul}^3: {peak / 1e9:.1f} GFLOP/s")
    tokens_s = train_throughput(spec, args.steps)
    achieved = tokens_s * flops_token
    print(f"jaxscale train step, cpu-preset model {size.name} (N_T={counts.total:,}, l={model.n_layer}, "
          f"d={model.d_model}, vocab={model.vocab_size}, n_ctx={model.n_ctx}, batch={batch}):")
    print(f"  {tokens_s:,.0f} tokens/s x {flops_token:,} FLOP/token = {achieved / 1e9:.2f} GFLOP/s")
    print(f"ratio achieved / peak (MFU): {achieved / peak:.1%}   (goal >= 35%)")


if __name__ == "__main__":
    main()
