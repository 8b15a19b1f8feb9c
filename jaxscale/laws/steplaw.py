"""Step Law: the optimal peak learning rate and batch size of a dense LLM (Li et al. 2025).

Li, Zheng, Hu, Wang, Zhang, Wang, Xu, Zhou, Zhang & Jiang (2025), "Predictable Scale: Part I --
Optimal Hyperparameter Scaling Law in Large Language Model Pretraining" (arXiv:2503.04715), fitted
on ~3,700 trained models::

    eta*(N, D) = A N^(-alpha) D^(beta)      (A = 1.79, alpha = 0.713, beta = 0.307)
    B*(D)      = A_B D^(beta_B)             (A_B = 0.58, beta_B = 0.571)

N the model's parameters, D its training tokens, eta* the peak learning rate (AdamW, cosine
decay to a floor) and B* the batch size in tokens. The optimal learning rate falls with the model
and rises with the data; the optimal batch depends on the data alone. Each is a :class:`Law` whose
"loss" is the hyperparameter (``quantity``), so the registry lists them and their formulas, and
loss fits refuse them; :mod:`jaxscale.hyperparameters.per_group` fits their forms to a table of runs.
In logs both are linear in the law's vector (log A and the exponents), which is how they are
fitted: least squares in logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws.law import Law, NoisePriors, Normal, grid

CITATION = ("Li et al. (2025), Predictable Scale: Part I -- Optimal Hyperparameter Scaling Law in Large "
            "Language Model Pretraining (Step Law), arXiv:2503.04715")


class StepLawLRParams(NamedTuple):
    """Parameters of eta*(N, D) = A N^(-alpha) D^(beta)."""

    A: ArrayLike
    alpha: ArrayLike
    beta: ArrayLike


class StepLawBatchParams(NamedTuple):
    """Parameters of B*(D) = A D^(beta), B* in tokens."""

    A: ArrayLike
    beta: ArrayLike


#: Li et al. (2025)'s published fit of the optimal learning rate (N in parameters, D in tokens).
PUBLISHED_LR = StepLawLRParams(A=1.79, alpha=0.713, beta=0.307)
#: Li et al. (2025)'s published fit of the optimal batch size, in tokens (D in tokens).
PUBLISHED_BATCH = StepLawBatchParams(A=0.58, beta=0.571)


def log_lr(p: StepLawLRParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """log eta* = log A - alpha log N + beta log D."""
    A, alpha, beta = p
    return jnp.log(A) - alpha * log_n + beta * log_d


def log_batch(p: StepLawBatchParams, log_d: ArrayLike) -> jnp.ndarray:
    """log B* = log A + beta log D."""
    A, beta = p
    return jnp.log(A) + beta * log_d


@dataclass(frozen=True)
class StepLawLRPriors(NoisePriors):
    """``log_A`` ~ Normal(0, 3) (the published 1.79 at 0.6); ``alpha``, ``beta`` ~ Normal(0.5, 0.5)
    truncated to > 0; ``sigma`` the scatter of log eta* about the law (a factor of e^0.3)."""

    sigma: float = 0.3
    log_A: Normal = (0.0, 3.0)
    alpha: Normal = (0.5, 0.5)
    beta: Normal = (0.5, 0.5)


@dataclass(frozen=True)
class StepLawBatchPriors(NoisePriors):
    """``log_A`` ~ Normal(0, 3) (the published 0.58 at -0.5); ``beta`` ~ Normal(0.5, 0.5) truncated
    to > 0; ``sigma`` the scatter of log B* about the law."""

    sigma: float = 0.3
    log_A: Normal = (0.0, 3.0)
    beta: Normal = (0.5, 0.5)


LR_LAW: Law[StepLawLRParams] = Law(
    name="steplaw-lr",
    params_type=StepLawLRParams,
    log_loss=log_lr,
    log_scale=(True, False, False),
    init_grid=grid(log_a=(-2.0, 0.0, 2.0), alpha=(0.3, 0.7), beta=(0.1, 0.3, 0.6)),
    priors=StepLawLRPriors(),
    formula="eta*(N, D) = A N^-alpha D^beta",
    citation=CITATION,
    quantity="learning rate",
)

BATCH_LAW: Law[StepLawBatchParams] = Law(
    name="steplaw-batch",
    params_type=StepLawBatchParams,
    log_loss=log_batch,
    log_scale=(True, False),
    init_grid=grid(log_a=(-2.0, 0.0, 2.0), beta=(0.3, 0.6)),
    priors=StepLawBatchPriors(),
    formula="B*(D) = A D^beta (tokens)",
    citation=CITATION,
    inputs=("D",),
    needs_independent_inputs=False,
    quantity="batch size",
)
