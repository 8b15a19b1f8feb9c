"""Column names of the runs table: the one schema training writes and fitting reads.

A runs table is tidy: one row per evaluation point of one training run. Training code
(:mod:`jaxscale.train`, :mod:`jaxscale.experiments`) writes these columns; :mod:`jaxscale.tables.table`
loads and validates them (and recognises other spellings, e.g. Epoch AI's ``Model Size``).

Symbols follow Pearce & Song (2024), Eqs. 1-4: N_T = N_E + N_\\E, C_T = 6 N_T D, C_\\E = 6 N_\\E D.
"""

import re

RUN_ID = "run_id"  # identifier of one training run (one model, one LR, one schedule)
STEP = "step"  # optimiser step of this evaluation point
N_TOTAL = "n_total"  # N_T, total parameters
N_NONEMBEDDING = "n_nonembedding"  # N_\E, non-embedding parameters
N_EMBEDDING = "n_embedding"  # N_E = (h + v) d, embedding parameters
TOKENS = "tokens"  # D, training tokens seen so far
COMPUTE_TOTAL = "compute_total"  # C_T = 6 N_T D (FLOPs)
COMPUTE_NONEMBEDDING = "compute_nonembedding"  # C_\E = 6 N_\E D (FLOPs)
LOSS = "loss"  # the loss the fits use (validation loss for training runs)
TRAIN_LOSS = "train_loss"
VAL_LOSS = "val_loss"
LEARNING_RATE = "learning_rate"
PEAK_LR = "peak_lr"  # the schedule's peak learning rate
BATCH_TOKENS = "batch_tokens"  # tokens per optimiser step
TOTAL_STEPS = "total_steps"  # the schedule's length in optimiser steps
SCHEDULE = "schedule"  # the schedule's kind: "constant" or "cosine" (after warmup)
WARMUP_STEPS = "warmup_steps"  # linear warmup from 0 to the peak over this many steps
FINAL_FRACTION = "final_fraction"  # a cosine schedule ends at this fraction of the peak
UNIQUE_TOKENS = "unique_tokens"  # U_D, the distinct tokens the run's data holds (Muennighoff et al. 2023)
# Computed from a run's schedule (jaxscale.laws.schedule_areas), not written by training:
FORWARD_AREA = "S1"  # sum of the learning rates so far (Tissue et al. 2024)
ANNEALING_AREA = "S2"  # the annealing area of the rates so far (Tissue et al. 2024)
FORWARD_TOKENS = "forward_tokens"  # Dt = tokens per step x S1 / peak rate (jaxscale.laws.chinchilla_annealing)
ANNEALING_STEPS = "annealing_steps"  # St2 = S2 / peak rate (jaxscale.laws.chinchilla_annealing)

#: The two parameter bases of Pearce & Song (2024): basis -> (model size, compute) columns.
BASES = {
    "total": (N_TOTAL, COMPUTE_TOTAL),  # Chinchilla's N_T and C_T = 6 N_T D
    "nonembedding": (N_NONEMBEDDING, COMPUTE_NONEMBEDDING),  # Kaplan's N_\E and C_\E = 6 N_\E D
}

REQUIRED_FOR_FIT = (N_TOTAL, TOKENS, LOSS)

#: Accepted spellings of each role, compared after :func:`fold`. The first role a column matches wins.
ALIASES: dict[str, tuple[str, ...]] = {
    N_TOTAL: ("n_total", "n", "model_size", "params", "parameters", "num_params",
           "n_params", "nparams", "total_params", "model_params", "parameter_count"),
    N_NONEMBEDDING: ("n_nonembedding", "n_non_embedding", "non_embedding_params",
                    "nonembedding_params", "n_ne", "n_no_emb"),
    TOKENS: ("tokens", "d", "training_tokens", "train_tokens", "n_tokens", "num_tokens",
             "data", "dataset_size"),
    COMPUTE_TOTAL: ("compute_total", "c", "compute", "flops", "flop", "training_flop",
                    "training_flops", "train_flops", "training_compute", "budget"),
    COMPUTE_NONEMBEDDING: ("compute_nonembedding", "compute_non_embedding", "c_nonembedding", "c_no_emb"),
    LOSS: ("loss", "l", "final_loss", "val_loss", "eval_loss", "validation_loss"),
    RUN_ID: ("run_id", "run", "run_name"),
    STEP: ("step", "steps", "iteration", "current_steps", "current_step"),
    UNIQUE_TOKENS: ("unique_tokens", "u_d", "unique_data", "unique_training_tokens"),
}


def fold(name: str) -> str:
    """A column name as :data:`ALIASES` spells it: lower case, runs of spaces, dashes, slashes and
    underscores folded to one underscore (``"Model Size"``, ``"val/loss"`` -> ``model_size``, ``val_loss``)."""
    return re.sub(r"[\s\-_/]+", "_", str(name).strip().lower())

#: Which losses a run contributes (:mod:`jaxscale.tables.policy`); ``ema:SPAN`` sets the EMA's span.
LOSS_POLICIES = ("every", "final", "min", "ema")
