"""A model's architecture from its configuration: a Hugging Face ``config.json`` or a run's logged
hyperparameters, as an :class:`~jaxscale.tables.accounting.Architecture`.

Hugging Face configurations name the same quantities differently per family, and leave the
flags that change the count (biases, the kind of norm, a gated MLP, tied heads) to the model's
code; :data:`FAMILIES` states them for the families read here, from each family's modelling code
in ``transformers``. A run's own hyperparameters (jaxscale's sweep logs ``d_model``, ``n_layer``,
``n_head``, ``vocab_size``, ``n_ctx``, ``d_ff``, ``tied``, ``positions``) are read as jaxscale's
transformer, which is GPT-2's shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jaxscale.tables.accounting import Architecture

#: Per ``model_type``: the config's name for each field of :class:`Architecture` and the flags the
#: family's code fixes (GPT-2: biases, LayerNorm, learned positions, tied head; GPT-NeoX (Pythia):
#: biases, LayerNorm, rotary positions, untied head; Llama and its kin: no biases, RMSNorm, gated
#: MLP, rotary, untied unless the config ties; OLMo: as Llama but a LayerNorm without weights).
FAMILIES: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
    "gpt2": ({"d_model": "n_embd", "n_layer": "n_layer", "n_head": "n_head", "vocab_size": "vocab_size",
              "n_ctx": "n_positions", "d_ff": "n_inner", "tied": "tie_word_embeddings"},
             {"tied": True, "learned_positions": True, "norm": "layernorm"}),
    "gpt_neox": ({"d_model": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                  "vocab_size": "vocab_size", "n_ctx": "max_position_embeddings", "d_ff": "intermediate_size",
                  "tied": "tie_word_embeddings", "attention_bias": "attention_bias"},
                 {"tied": False, "learned_positions": False, "norm": "layernorm", "attention_bias": True}),
    "llama": ({"d_model": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
               "n_kv_head": "num_key_value_heads", "d_head": "head_dim", "vocab_size": "vocab_size",
               "n_ctx": "max_position_embeddings", "d_ff": "intermediate_size", "tied": "tie_word_embeddings",
               "attention_bias": "attention_bias", "mlp_bias": "mlp_bias"},
              {"tied": False, "learned_positions": False, "norm": "rmsnorm", "gated_mlp": True,
               "attention_bias": False, "mlp_bias": False}),
}
FAMILIES["mistral"] = FAMILIES["llama"]
FAMILIES["olmo"] = (FAMILIES["llama"][0], {**FAMILIES["llama"][1], "norm": "nonparametric"})
#: The fields a configuration must give. The MLP's width is among them except for GPT-2, whose
#: code makes a missing ``n_inner`` 4 x d_model; the other families' configuration classes fill a
#: missing ``intermediate_size`` with a constant of their own (Llama's 11008 whatever the width),
#: so a count that assumed 4 x d_model would be wrong by billions (8.85e9 for Llama-2 7B's
#: configuration without it, whose model has 6.74e9).
REQUIRED = ("d_model", "n_layer", "n_head", "vocab_size", "n_ctx")
_REQUIRED_BY_FAMILY = {family: REQUIRED if family == "gpt2" else (*REQUIRED, "d_ff") for family in FAMILIES}

#: jaxscale's own hyperparameter names (the sweep's runs table and its TensorBoard hparams), with
#: the spellings other trainers log (nanoGPT's n_embd, block_size).
RUN_KEYS: dict[str, tuple[str, ...]] = {
    "d_model": ("d_model", "n_embd", "hidden_size", "dim"),
    "n_layer": ("n_layer", "n_layers", "num_layers", "num_hidden_layers"),
    "n_head": ("n_head", "n_heads", "num_heads", "num_attention_heads"),
    "vocab_size": ("vocab_size", "n_vocab", "vocab"),
    "n_ctx": ("n_ctx", "seq_len", "sequence_length", "block_size", "context_length", "max_seq_len"),
    "d_ff": ("d_ff", "n_inner", "ffn_dim", "intermediate_size"),
}


def read_hf_config(path: str | Path) -> Architecture:
    """The architecture of a Hugging Face ``config.json`` (families of :data:`FAMILIES`).

    Raises:
        ValueError: naming the file and the field when the file is not JSON, names no known
            ``model_type``, or lacks a field.
    """
    path = Path(path)
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not a JSON file ({err.msg}, line {err.lineno})") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: a model configuration is a JSON object, got {type(config).__name__}")
    return hf_architecture(config, where=str(path))


def hf_architecture(config: Mapping[str, Any], where: str = "config") -> Architecture:
    """The architecture of a Hugging Face configuration given as a mapping (see :func:`read_hf_config`)."""
    family = config.get("model_type")
    if family not in FAMILIES:
        raise ValueError(f"{where}: model_type {family!r} is not one whose parameters jaxscale counts "
                         f"(known: {', '.join(sorted(FAMILIES))}); give the architecture's fields instead")
    names, fixed = FAMILIES[family]
    fields = dict(fixed)
    for field, key in names.items():
        if config.get(key) is not None:
            fields[field] = config[key]
        elif field in _REQUIRED_BY_FAMILY[family]:
            raise ValueError(f"{where}: {family} configuration without {key!r}")
    return _architecture(fields, where)


def run_architecture(config: Mapping[str, Any], where: str = "run") -> Architecture | None:
    """The architecture a run's logged hyperparameters describe (jaxscale's transformer:
    :data:`RUN_KEYS`, plus ``tied`` and ``positions``), a Hugging Face configuration when it names
    its ``model_type``, or None when the hyperparameters name no architecture."""
    if "model_type" in config:
        return hf_architecture(config, where)
    fields = {field: next((config[k] for k in keys if _given(config.get(k))), None) for field, keys in RUN_KEYS.items()}
    if any(fields[f] is None for f in REQUIRED):
        return None
    if fields["d_ff"] is None:
        del fields["d_ff"]
    if _given(config.get("tied")):
        fields["tied"] = _flag(config["tied"], "tied", where)
    if _given(config.get("positions")):
        fields["learned_positions"] = str(config["positions"]) == "learned"
    return _architecture(fields, where)


def _given(value: Any) -> bool:
    return value is not None and str(value).strip() not in ("", "nan", "None")


def _flag(value: Any, name: str, where: str) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "1", "1.0", "yes"):
        return True
    if text in ("false", "0", "0.0", "no"):
        return False
    raise ValueError(f"{where}: {name} must be true or false, got {value!r}")


def _architecture(fields: dict[str, Any], where: str) -> Architecture:
    flags = {"tied", "learned_positions", "gated_mlp", "attention_bias", "mlp_bias"}
    values = {}
    for name, value in fields.items():
        if name in flags:
            values[name] = value if isinstance(value, bool) else _flag(value, name, where)
        elif name == "norm":
            values[name] = value
        else:
            values[name] = _integer(value, name, where)
    try:
        return Architecture(**values)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def _integer(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool):  # JSON true is no count of layers
        raise ValueError(f"{where}: {name} must be a whole number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {name} must be a whole number, got {value!r}") from None
    if not number.is_integer():
        raise ValueError(f"{where}: {name} must be a whole number, got {value!r}")
    return int(number)


def model_params(config: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """N_T, N_\\E, N_E and training FLOPs per token under each convention of a model configuration
    (a ``config.json`` path, a Hugging Face configuration or a run's hyperparameters as a mapping).

    Returns:
        ``{"architecture": fields, "n_total", "n_nonembedding", "n_embedding", "flops_per_token":
        {convention: FLOPs}, "conventions": {convention: {"counts": ..., "source": ...}}}``.

    Raises:
        ValueError: the configuration names no architecture jaxscale counts (naming the field).
    """
    from dataclasses import asdict

    from jaxscale.tables.accounting import FLOP_CONVENTIONS, flops_per_token, param_counts

    if isinstance(config, Mapping):
        arch = run_architecture(config, "config")
        if arch is None:
            raise ValueError(f"config: no architecture (needs {', '.join(k for k in RUN_KEYS if k != 'd_ff')}, "
                             "or a Hugging Face model_type)")
    else:
        arch = read_hf_config(config)
    counts = param_counts(arch)
    return {
        "architecture": asdict(arch), "n_total": counts.total, "n_nonembedding": counts.nonembedding,
        "n_embedding": counts.embedding, "flops_per_token": flops_per_token(arch),
        "conventions": {name: {"counts": what, "source": source} for name, (what, source) in FLOP_CONVENTIONS.items()},
    }
