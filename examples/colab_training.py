"""Pearce & Song's small-scale experiment on a Colab TPU (the notebook colab_tpu.ipynb, as a script).

On a Colab TPU runtime (Runtime -> Change runtime type -> TPU)::

    pip install "jax[tpu]" "jaxscale @ git+https://github.com/<you>/jaxscale"
    wget -O gpt2_tokenizer.json https://huggingface.co/openai-community/gpt2/resolve/main/tokenizer.json
    python colab_tpu.py --preset paper --models 1 --corpus my_text.txt.gz --tokenizer gpt2_tokenizer.json

trains the ``paper`` preset's first model (N_T = 0.8M, context 16, 65,536 tokens per update,
GPT-2 vocabulary, bfloat16 compute) at every learning rate of the grid, data parallel over all
TPU cores, and fits its learning curve. With ``--models 5`` it runs the whole sweep and the
Method-1 fits of Table 1. On a laptop CPU, ``--preset smoke`` runs the same steps in minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import jax
import pandas as pd

from jaxscale.lm import presets
from jaxscale.lm.sweep import format_table, learning_curve_exponent, run_sweep
from jaxscale.runs import schema as rs


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="paper", choices=sorted(presets.PRESETS))
    p.add_argument("--models", type=int, default=None, help="train only the first K model sizes")
    p.add_argument("--corpus", default=None, help="plain .txt or .txt.gz corpus (default: the preset's)")
    p.add_argument("--tokenizer", default=None, help="tokenizer.json to use instead of training a BPE")
    p.add_argument("--out", default=None, help="output directory (default: out/colab/<preset>)")
    return p.parse_args()


def configure(args: argparse.Namespace) -> presets.SweepConfig:
    cfg = presets.preset(args.preset)
    changes = {}
    if args.models is not None:
        changes["sizes"] = cfg.sizes[: args.models]
        if args.models < 2:  # one size: its learning-rate grid only, no annealed budgets
            changes["schemes"] = (1, 2)
    if args.corpus:
        changes["corpus"] = args.corpus
    if args.tokenizer:
        changes["tokenizer_file"] = args.tokenizer
    return dataclasses.replace(cfg, **changes)


def main() -> None:
    args = parse_args()
    print(f"devices: {jax.device_count()} x {jax.devices()[0].platform} ({jax.devices()[0].device_kind})")
    cfg = configure(args)
    out = Path(args.out or f"out/colab/{cfg.name}")
    result = run_sweep(cfg, out)
    for run in result.runs:
        print(f"model {run['name']}: N_T={run['n_total']:,}  N_\\E={run['n_nonembedding']:,}  N_E={run['n_embedding']:,}")
    print(f"best learning rates: {result.best_lr}")
    if result.table.empty:
        frame = pd.read_csv(result.runs_table)
        for run_id, curve in frame.groupby(rs.RUN_ID):
            print(f"{run_id}: final loss {curve[rs.LOSS].iloc[-1]:.3f}, L ∝ D^{learning_curve_exponent(curve):.3f}")
    else:
        print(format_table(result.table), end="")
        for basis in ("total", "nonembedding"):
            a = result.exponent("experiment 1", basis)
            print(f"exponent_{basis} {'undefined' if a is None else f'{a:.3f}'}")
    print(f"runs table: {result.runs_table}   wall time {result.wall_time_s:.0f} s")


if __name__ == "__main__":
    main()
