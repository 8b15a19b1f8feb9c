"""Parameter and FLOP accounting: the papers' formulas, and exact counts of released models from
their configuration files equal to the counts their authors publish."""

from __future__ import annotations

import json

import pytest

from jaxscale.tables import accounting
from jaxscale.tables.accounting import Architecture, flops_per_token, param_counts
from jaxscale.tables.model_config import hf_architecture, read_hf_config, run_architecture

# Fields of each released model's config.json that the count reads, copied from the model's
# Hugging Face repository (the other fields do not change a parameter count).
GPT2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
        "n_positions": 1024, "n_inner": None}  # openai-community/gpt2
PYTHIA = {  # EleutherAI/pythia-{70m,160m,410m,1b,1.4b,2.8b,6.9b,12b}
    "70m": (512, 6, 8, 2048, 50304), "160m": (768, 12, 12, 3072, 50304), "410m": (1024, 24, 16, 4096, 50304),
    "1b": (2048, 16, 8, 8192, 50304), "1.4b": (2048, 24, 16, 8192, 50304), "2.8b": (2560, 32, 32, 10240, 50304),
    "6.9b": (4096, 32, 32, 16384, 50432), "12b": (5120, 36, 40, 20480, 50688),
}
LLAMA2_7B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
             "max_position_embeddings": 4096, "tie_word_embeddings": False}  # meta-llama/Llama-2-7b-hf
LLAMA3_8B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
             "max_position_embeddings": 8192, "tie_word_embeddings": False}  # meta-llama/Meta-Llama-3-8B
OLMO_1B = {"model_type": "olmo", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
           "num_key_value_heads": 16, "intermediate_size": 8192, "vocab_size": 50304,
           "max_position_embeddings": 2048, "tie_word_embeddings": True}  # allenai/OLMo-1B-hf
OLMO_7B = {**OLMO_1B, "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 32, "intermediate_size": 11008, "tie_word_embeddings": False}  # allenai/OLMo-7B-hf

# Published counts. GPT-2 small: 124,439,808 (tied head; `GPT2LMHeadModel.num_parameters()`, the
# count printed for openai-community/gpt2). Pythia: the model card's "Naming convention and
# parameter count" table (total, non-embedding). Llama 2 7B: 6,738,415,616 (the count PEFT prints
# for meta-llama/Llama-2-7b-hf). Llama 3 8B: 8,030,261,248. OLMo: 1,176,764,416 and 6,888,095,744
# (the released checkpoints' parameter counts).
PYTHIA_PUBLISHED = {
    "70m": (70_426_624, 18_915_328), "160m": (162_322_944, 85_056_000), "410m": (405_334_016, 302_311_424),
    "1b": (1_011_781_632, 805_736_448), "1.4b": (1_414_647_808, 1_208_602_624),
    "2.8b": (2_775_208_960, 2_517_652_480), "6.9b": (6_857_302_016, 6_444_163_072),
    "12b": (11_846_072_320, 11_327_027_200),
}
PUBLISHED_TOTALS = [
    ("gpt2-124m", GPT2, 124_439_808),
    ("llama-2-7b", LLAMA2_7B, 6_738_415_616),
    ("llama-3-8b", LLAMA3_8B, 8_030_261_248),
    ("olmo-1b", OLMO_1B, 1_176_764_416),
    ("olmo-7b", OLMO_7B, 6_888_095_744),
]


def pythia_config(size: str) -> dict:
    d, layers, heads, d_ff, vocab = PYTHIA[size]
    return {"model_type": "gpt_neox", "hidden_size": d, "num_hidden_layers": layers, "num_attention_heads": heads,
            "intermediate_size": d_ff, "vocab_size": vocab, "max_position_embeddings": 2048,
            "tie_word_embeddings": False}


@pytest.mark.parametrize("name, config, published", PUBLISHED_TOTALS, ids=[t[0] for t in PUBLISHED_TOTALS])
def test_total_parameters_equal_the_published_counts(name, config, published):
    assert param_counts(hf_architecture(config)).total == published


@pytest.mark.parametrize("size", list(PYTHIA))
def test_pythia_total_and_nonembedding_equal_the_model_card(size):
    counts = param_counts(hf_architecture(pythia_config(size)))
    assert (counts.total, counts.nonembedding) == PYTHIA_PUBLISHED[size]
    assert counts.embedding == 2 * PYTHIA[size][4] * PYTHIA[size][0]  # embed_in + untied embed_out


def test_counts_split_and_tied_head():
    gpt2 = hf_architecture(GPT2)
    counts = param_counts(gpt2)
    assert counts.embedding == (50257 + 1024) * 768  # Pearce & Song Eq. 2 with learned positions
    assert counts.total == counts.embedding + counts.nonembedding
    assert counts.nonembedding_weights == accounting.nonembedding_params(12, 768)  # Kaplan's 12 l d^2
    untied = param_counts(hf_architecture({**GPT2, "tie_word_embeddings": False}))
    assert untied.total - counts.total == 50257 * 768


def test_read_hf_config_file_and_bad_files(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA2_7B, "torch_dtype": "float16"}))
    assert param_counts(read_hf_config(path)).total == 6_738_415_616
    path.write_text(json.dumps({"model_type": "t5", "d_model": 512}))
    with pytest.raises(ValueError, match="config.json: model_type 't5'"):
        read_hf_config(path)
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    with pytest.raises(ValueError, match="without 'num_hidden_layers'"):
        read_hf_config(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a JSON file"):
        read_hf_config(path)


def test_run_hyperparameters_name_an_architecture_or_none():
    arch = run_architecture({"d_model": "64", "n_layer": 2, "n_head": 4, "vocab_size": 97, "n_ctx": 16,
                             "tied": "False", "positions": "sinusoidal"})
    assert arch == Architecture(d_model=64, n_layer=2, n_head=4, vocab_size=97, n_ctx=16, tied=False,
                                learned_positions=False)
    assert run_architecture({"d_model": 64, "lr": 1e-3}) is None
    with pytest.raises(ValueError, match="run 7: n_layer must be a whole number"):
        run_architecture({"d_model": 64, "n_layer": 2.5, "n_head": 4, "vocab_size": 97, "n_ctx": 16}, "run 7")


def test_flop_conventions_by_their_formulas():
    # A standard shape (d_ff = 4d, multi-head attention) where each paper's formula applies as printed.
    arch = Architecture(d_model=512, n_layer=6, n_head=8, vocab_size=1000, n_ctx=256)
    counts, l, d, t, v = param_counts(arch), 6, 512, 256, 1000
    flops = flops_per_token(arch)
    assert set(flops) == set(accounting.FLOP_CONVENTIONS)
    assert flops["6N"] == 6 * counts.total
    assert flops["6N_nonembedding"] == 6 * counts.nonembedding
    assert flops["kaplan"] == 6 * counts.nonembedding + 6 * l * t * d  # Kaplan Table 1
    assert flops["deepseek"] == 72 * l * d**2 + 12 * l * d * t  # DeepSeek LLM Eq. 2, as printed
    # Hoffmann et al. App. F, term by term for one sequence of t tokens, divided by t, times 3.
    h, key = 8, 64
    layer = (2 * 3 * t * d * key * h + 2 * t * t * key * h + 3 * h * t * t + 2 * t * t * key * h
             + 2 * t * key * h * d + 2 * t * (d * 4 * d + d * 4 * d))
    forward = 2 * t * v * d + l * layer + 2 * t * d * v
    assert flops["chinchilla"] * t == 3 * forward


def test_grouped_query_attention_and_gated_mlp_count_each_matrix_once():
    mha = Architecture(d_model=256, n_layer=2, n_head=8, vocab_size=100, n_ctx=64, gated_mlp=True, d_ff=512,
                       attention_bias=False, mlp_bias=False, norm="rmsnorm", learned_positions=False)
    gqa = Architecture(**{**mha.__dict__, "n_kv_head": 2})
    per_layer_saving = 2 * 256 * (256 - 2 * 32)  # k and v shrink from 8 heads to 2 of width 32
    assert param_counts(mha).total - param_counts(gqa).total == 2 * per_layer_saving
    assert param_counts(mha).nonembedding_weights == 2 * (4 * 256 * 256 + 3 * 256 * 512)


def test_architecture_refuses_bad_shapes():
    with pytest.raises(ValueError, match="n_layer must be a positive integer"):
        Architecture(d_model=64, n_layer=0, n_head=4, vocab_size=10, n_ctx=8)
    with pytest.raises(ValueError, match="multiple of n_kv_head"):
        Architecture(d_model=64, n_layer=1, n_head=4, vocab_size=10, n_ctx=8, n_kv_head=3)


def test_accounting_formulas():
    # GPT-2 small shape: 12 layers, d = 768 (Kaplan's 12 l d^2 = 84.9M non-embedding).
    assert accounting.nonembedding_params(12, 768) == 12 * 12 * 768**2
    assert accounting.nonembedding_params(2, 64, d_attn=32, d_ff=128) == 2 * 64 * 2 * (64 + 128)
    assert accounting.embedding_params(768, 50257, context=1024) == (50257 + 1024) * 768
    assert accounting.embedding_params(768, 50257, context=1024, learned_positions=False) == 50257 * 768
    assert accounting.embedding_params(768, 50257, context=1024, tied=False) == (2 * 50257 + 1024) * 768
    assert accounting.unembedding_params(768, 50257) == 50257 * 768
    assert accounting.forward_flops_per_token(1e6, 4, 128, 64) == 2e6 + 2 * 4 * 128 * 64
    assert accounting.training_flops_per_token(1e6, 4, 128, 64) == 3 * (2e6 + 2 * 4 * 128 * 64)
    assert accounting.training_compute(1e6, 2e7) == 1.2e14
    assert accounting.total_params(10, 5) == 15
    with pytest.raises(ValueError, match="d_model"):
        accounting.nonembedding_params(2, 0)


@pytest.mark.parametrize("family", ["llama", "gpt_neox", "olmo"])
def test_a_configuration_without_its_mlp_width_is_refused_naming_the_key(family):
    """Llama-2 7B's configuration without ``intermediate_size`` counted 8,852,344,832 parameters
    (a 4 x d_model MLP assumed); the model has 6,738,415,616. Such families' code does not derive
    the width from d_model, so the count is refused, naming the key."""
    config = {**LLAMA2_7B, "model_type": family}
    del config["intermediate_size"]
    with pytest.raises(ValueError, match=f"{family} configuration without 'intermediate_size'"):
        hf_architecture(config)


def test_gpt2_without_n_inner_is_four_times_its_width_as_its_code_says():
    assert hf_architecture({k: v for k, v in GPT2.items() if k != "n_inner"}).ff_width == 4 * GPT2["n_embd"]


def test_a_boolean_is_no_count_of_layers():
    with pytest.raises(ValueError, match="n_layer must be a whole number, got True"):
        run_architecture({"d_model": 64, "n_layer": True, "n_head": 4, "vocab_size": 100, "n_ctx": 32})
