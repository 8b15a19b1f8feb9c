"""Pearce & Song's training sweep on whatever JAX sees: a TPU, a GPU or the CPU (colab_training.ipynb as a script).

Data parallel over every device ``jax.devices()`` lists: one chip (today's free Colab TPU, a
v5e-1; a T4 GPU) or eight (a TPU v5e-8 or v2-8 host). Two modes:

- ``--mode smoke`` trains the ``smoke`` preset (three tiny models) on a CPU in about a minute;
- ``--mode paper`` trains the ``paper`` preset's first ``--models`` sizes (N_T = 0.8M first,
  context 16, 65,536 tokens per update, GPT-2's vocabulary, bfloat16 compute) at every learning
  rate of its grid; with ``--models 5`` the whole sweep and Table 1's Method-1 fits.
- ``--mode auto`` (the default): paper on an accelerator, smoke on a CPU.

Batches are computed in microbatches of at most 512 sequences per device (the paper preset's
4096 sequences at once ask XLA for about 27 GB; 512 for about 3.3 GB, which a 16 GB chip holds)::

    pip install "jaxscale[lm] @ git+https://github.com/<you>/jaxscale"
    wget -O gpt2.json https://huggingface.co/openai-community/gpt2/resolve/main/tokenizer.json
    python colab_training.py --mode paper --corpus my_text.txt.gz --tokenizer gpt2.json
    python colab_training.py --mode smoke      # on a laptop CPU, with ../shared/data beside a clone

On a TPU or GPU the runs of one model size (its learning rates; its cosine budgets) train side
by side in one compiled program with the loss over blocks of the vocabulary; on a CPU one at a
time (:func:`jaxscale.lm.sweep.side_by_side`). Runs are checkpointed: the same command resumes
an interrupted sweep, and ``jaxscale sweep --preset paper --out OUT/paper --status`` says what is
left in device-minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import jax
import pandas as pd

import jaxscale as js
from jaxscale.lm import presets, sharding
from jaxscale.lm.sweep import format_table, learning_curve_exponent
from jaxscale.tables import schema as rs

#: Sequences a device computes at a time (see the module docstring).
MAX_ROWS_PER_DEVICE = 512


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("auto", "smoke", "paper"), default="auto",
                   help="smoke: the smoke preset; paper: the paper preset's first models; auto: paper on a TPU or GPU")
    p.add_argument("--models", type=int, default=1, help="paper mode: train the first K model sizes (5: all)")
    p.add_argument("--corpus", default=None,
                   help=".txt or .txt.gz corpus (default: $JAXSCALE_CORPUS, else ../shared/data beside the clone)")
    p.add_argument("--tokenizer", default=None, help="tokenizer.json to use instead of training a BPE (paper: GPT-2's)")
    p.add_argument("--out", default="out/colab", help="output directory; the mode's sweep goes in OUT/<preset>")
    return p.parse_args(argv)


def configure(args: argparse.Namespace, platform: str) -> presets.SweepConfig:
    """The sweep the arguments ask for on ``platform`` ("cpu", "gpu" or "tpu")."""
    mode = args.mode if args.mode != "auto" else ("smoke" if platform == "cpu" else "paper")
    cfg = presets.preset(mode)
    if mode == "paper":
        cfg = presets.first_sizes(cfg, args.models)
    if args.tokenizer:
        cfg = dataclasses.replace(cfg, tokenizer_file=args.tokenizer)
    return presets.with_corpus(cfg, args.corpus)


def report(result) -> None:
    """Each run's learning-curve slope with one size; Table 1's Method-1 fits with several."""
    for run in result.runs:
        print(f"model {run['name']}: N_T={run['n_total']:,}  N_\\E={run['n_nonembedding']:,}  N_E={run['n_embedding']:,}")
    print(f"best learning rates: {result.best_lr}")
    if len(result.runs) == 1:
        frame = pd.read_csv(result.runs_table)
        for run_id, curve in frame.groupby(rs.RUN_ID):
            print(f"{run_id}: final loss {curve[rs.LOSS].iloc[-1]:.3f}, L ∝ D^{learning_curve_exponent(curve):.3f}")
    else:
        print(format_table(result.table), end="")
        for basis in ("total", "nonembedding"):
            a = result.exponent("experiment 1", basis)
            print(f"exponent_{basis} {'undefined' if a is None else f'{a:.3f}'}")
    print(f"runs table: {result.runs_table}   wall time {result.wall_time_s:.0f} s")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    devices = jax.devices()
    platform = devices[0].platform
    print(f"JAX {jax.__version__}: {len(devices)} x {platform} ({devices[0].device_kind})")
    cfg = configure(args, platform)
    microbatches = sharding.microbatches_for(cfg.batch_size, len(devices), MAX_ROWS_PER_DEVICE)
    print(f"training the {cfg.name} preset ({len(cfg.sizes)} sizes) on {cfg.corpus}, "
          f"{cfg.batch_size} sequences per update in {microbatches} microbatch(es) per device")
    report(js.sweep(cfg, out=Path(args.out) / cfg.name, microbatches=microbatches).result)


if __name__ == "__main__":
    main()
