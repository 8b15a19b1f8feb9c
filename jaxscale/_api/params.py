"""``model_params``: a model's parameter counts and training FLOPs per token, from its configuration
(:mod:`jaxscale.tables.model_config`, :mod:`jaxscale.tables.accounting`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from jaxscale._api._results import Result, rows


@dataclass(frozen=True, repr=False)
class ModelParams(Result):
    r"""A model's parameter counts (Pearce & Song 2024, Eqs. 1-2) and FLOPs per token by convention.

    Attributes:
        config: where the configuration came from (a path, or ``"mapping"``).
        counts: ``architecture`` (the fields read), ``n_total``, ``n_nonembedding``,
            ``n_embedding``, ``flops_per_token`` and ``conventions`` (what each convention counts
            and its source), as :func:`jaxscale.tables.model_config.model_params` returns them.
    """

    config: str
    counts: dict[str, Any]

    def _report(self) -> dict[str, Any]:
        return {"config": self.config, **self.counts}

    def summary(self) -> pd.DataFrame:
        r""":math:`N_T`, :math:`N_{\setminus E}` and :math:`N_E`, then the FLOPs per token of each
        convention (exact counts: no intervals), with what each counts."""
        entries = [{"quantity": key, "estimate": self.counts[key]}
                   for key in ("n_total", "n_nonembedding", "n_embedding")]
        entries += [{"quantity": f"flops_per_token[{name}]", "estimate": flops,
                     "counts": self.counts["conventions"][name]["counts"]}
                    for name, flops in self.counts["flops_per_token"].items()]
        return rows(entries)

    def _title(self) -> str:
        return f"ModelParams ({self.config})"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lines = [f"jaxscale params: {numbers['config']}",
                 *(f"  {key:<16} {numbers[key]:>18,}" for key in ("n_total", "n_nonembedding", "n_embedding")),
                 "  training FLOPs per token:"]
        for name, flops in numbers["flops_per_token"].items():
            convention = numbers["conventions"][name]
            lines.append(f"    {name:<16} {flops:>18,}   {convention['counts']} [{convention['source']}]")
        return lines


def model_params(config: str | Path | Mapping[str, Any]) -> ModelParams:
    r"""Count a decoder-only transformer's parameters exactly, and its training FLOPs per token.

    The total :math:`N_T = N_{\setminus E} + N_E`, with :math:`N_{\setminus E}` the non-embedding and
    :math:`N_E` the embedding parameters (Pearce & Song 2024, Eqs. 1-2), and the FLOPs per token
    under each convention in use: :math:`6N`, :math:`6N_{\setminus E}`, Kaplan et al.'s
    :math:`6N + 6\,n_\mathrm{layer} n_\mathrm{ctx} d_\mathrm{attn}`, Hoffmann et al.'s Appendix F
    and DeepSeek's M (:mod:`jaxscale.tables.accounting`).

    Args:
        config: a Hugging Face ``config.json`` path (GPT-2, GPT-NeoX/Pythia, Llama/Mistral, OLMo),
            or a configuration or a run's hyperparameters as a mapping (``d_model``, ``n_layer``,
            ``n_head``, ``vocab_size``, ``n_ctx``, ...).

    Returns:
        A :class:`ModelParams`.

    Raises:
        ValueError: the configuration names no architecture jaxscale counts (naming the field).
    """
    from jaxscale.tables.model_config import model_params as count

    return ModelParams(str(config) if isinstance(config, (str, Path)) else "mapping", count(config))
