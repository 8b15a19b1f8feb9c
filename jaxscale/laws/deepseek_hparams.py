"""DeepSeek's optimal learning rate and batch size as power laws of the compute budget.

DeepSeek-AI (2024), "DeepSeek LLM: Scaling Open-Source Language Models with Longtermism"
(arXiv:2401.02954), Section 3.1, Eq. 1, fitted to the near-optimal runs of a grid of small models::

    eta_opt(C) = A C^(-alpha)     (A = 0.3118, alpha = 0.1250)
    B_opt(C)   = A_B C^(beta)     (A_B = 0.2920, beta = 0.3271)

C the compute budget in FLOPs (theirs is C = M D, M the non-embedding FLOPs per token; 6 N D is the
usual stand-in), eta_opt the peak learning rate and B_opt the batch size in tokens. The optimal rate
falls slowly with compute and the batch grows. As with :mod:`jaxscale.laws.steplaw`, each is a
:class:`Law` of one input whose "loss" is the hyperparameter (``quantity``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws.law import Law, NoisePriors, Normal, grid

CITATION = ("DeepSeek-AI (2024), DeepSeek LLM: Scaling Open-Source Language Models with Longtermism, "
            "arXiv:2401.02954, Section 3.1, Eq. 1")


class DeepSeekLRParams(NamedTuple):
    """Parameters of eta_opt(C) = A C^(-alpha)."""

    A: ArrayLike
    alpha: ArrayLike


class DeepSeekBatchParams(NamedTuple):
    """Parameters of B_opt(C) = A C^(beta), B_opt in tokens."""

    A: ArrayLike
    beta: ArrayLike


#: DeepSeek-AI (2024), Eq. 1: the optimal learning rate (C in FLOPs).
PUBLISHED_LR = DeepSeekLRParams(A=0.3118, alpha=0.1250)
#: DeepSeek-AI (2024), Eq. 1: the optimal batch size in tokens (C in FLOPs).
PUBLISHED_BATCH = DeepSeekBatchParams(A=0.2920, beta=0.3271)


def log_lr(p: DeepSeekLRParams, log_c: ArrayLike) -> jnp.ndarray:
    """log eta_opt = log A - alpha log C."""
    A, alpha = p
    return jnp.log(A) - alpha * log_c


def log_batch(p: DeepSeekBatchParams, log_c: ArrayLike) -> jnp.ndarray:
    """log B_opt = log A + beta log C."""
    A, beta = p
    return jnp.log(A) + beta * log_c


@dataclass(frozen=True)
class DeepSeekPriors(NoisePriors):
    """``log_A`` ~ Normal(0, 3); the exponent ~ Normal(0.3, 0.3) truncated to > 0; ``sigma`` the
    scatter of the log hyperparameter about the law."""

    sigma: float = 0.3
    log_A: Normal = (0.0, 3.0)
    exponent: Normal = (0.3, 0.3)


LR_LAW: Law[DeepSeekLRParams] = Law(
    name="deepseek-lr",
    params_type=DeepSeekLRParams,
    log_loss=log_lr,
    log_scale=(True, False),
    init_grid=grid(log_a=(-3.0, -1.0, 1.0), alpha=(0.05, 0.15, 0.3)),
    priors=DeepSeekPriors(),
    formula="eta_opt(C) = A C^-alpha",
    citation=CITATION,
    inputs=("C",),
    needs_independent_inputs=False,
    quantity="learning rate",
)

BATCH_LAW: Law[DeepSeekBatchParams] = Law(
    name="deepseek-batch",
    params_type=DeepSeekBatchParams,
    log_loss=log_batch,
    log_scale=(True, False),
    init_grid=grid(log_a=(-3.0, -1.0, 1.0), beta=(0.2, 0.3, 0.5)),
    priors=DeepSeekPriors(),
    formula="B_opt(C) = A C^beta (tokens)",
    citation=CITATION,
    inputs=("C",),
    needs_independent_inputs=False,
    quantity="batch size",
)
