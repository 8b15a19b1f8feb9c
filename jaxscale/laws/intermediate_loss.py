"""Stage 1 of the two-step method on a ladder of one data budget: an intermediate loss as a power
law in model size.

Kaplan et al. (2020, Eq. 1.1) write the loss of models trained to convergence as
L(N) = (N_c / N)^alpha_N. On a ladder whose rungs all see the same D tokens (Pythia's 300B) this
is the law of (N, D) at that D: no term of D can be told from a constant there, so the law
keeps the one power of N, with the scale written as A = N_c^alpha::

    L(N) = A N^-alpha,     log L = log A - alpha log N.

The intermediate loss is the one a downstream map reads (:mod:`jaxscale.laws.downstream_accuracy`),
e.g. LAMBADA's log-perplexity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws.law import Law, NoisePriors, Normal, grid


class IntermediateLossParams(NamedTuple):
    """Parameters of L(N) = A N^-alpha."""

    A: ArrayLike
    alpha: ArrayLike


def log_intermediate_loss(p: IntermediateLossParams, log_n: ArrayLike) -> jnp.ndarray:
    """log L = log A - alpha log N, elementwise."""
    A, alpha = p
    return jnp.log(A) - alpha * log_n


@dataclass(frozen=True)
class IntermediateLossPriors(NoisePriors):
    """``log_A`` ~ Normal(8, 5) (LAMBADA's log-perplexity, 2 to 5 nats at 1e8-1e9 parameters,
    falls with alpha ~ 0.3-0.5); ``alpha`` ~ Normal(0.3, 0.3) truncated to > 0."""

    log_A: Normal = (8.0, 5.0)
    alpha: Normal = (0.3, 0.3)


LAW: Law[IntermediateLossParams] = Law(
    name="intermediate-loss-n",
    params_type=IntermediateLossParams,
    log_loss=log_intermediate_loss,
    log_scale=(True, False),
    init_grid=grid(log_a=(2.0, 5.0, 8.0, 12.0), alpha=(0.1, 0.3, 0.6)),
    priors=IntermediateLossPriors(),
    formula="L(N) = A N^-alpha (at the ladder's one data budget D)",
    citation="Kaplan et al. (2020), Eq. 1.1, as stage 1 of Bhagia et al. (2024)",
    inputs=("N",),
    needs_independent_inputs=False,
)
