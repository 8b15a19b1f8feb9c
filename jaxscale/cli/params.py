"""``jaxscale params``: parameter counts and FLOPs per token of a model from its configuration."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "params", "N_T, N_\\E, N_E and FLOPs per token of a model from its config.json",
        "Count a decoder-only transformer's parameters exactly from its Hugging Face config.json "
        "(GPT-2, GPT-NeoX/Pythia, Llama/Mistral, OLMo): total N_T, non-embedding N_\\E and embedding N_E "
        "(Pearce & Song 2024, Eqs. 1-2), and its training FLOPs per token under each convention in use: 6N, "
        "6N_\\E, Kaplan et al.'s 6N + 6 n_layer n_ctx d_attn, Hoffmann et al.'s Appendix F, DeepSeek's M.",
        "jaxscale params config.json\njaxscale params Llama-2-7b-hf/config.json --json",
    )
    p.add_argument("config", type=Path, help="a Hugging Face config.json")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import model_params

    return o.report(model_params(args.config), args)

