"""Laws of downstream accuracy: what a benchmark scores, as a law of the loss or of compute.

A multiple-choice task answered at random scores its chance level (0.25 with four choices, 0.5
with two, 0 for a cloze task such as LAMBADA), and no law of accuracy should fall below it. Each
law here therefore describes the accuracy *above chance*, as the fraction of the way from chance
to a perfect score,

    a(x) = (acc - chance) / (1 - chance)  in (0, 1],    acc = chance + (1 - chance) a(x),

so the chance floor is a property of the task, applied once where a law meets a task
(:func:`accuracy`), and never fitted: nothing a fit does can put a prediction below chance.
``log_loss`` of each law is log a (the registry's "loss" of these laws is the accuracy above
chance, ``Law.quantity``). The forms:

- ``accuracy-of-loss``, stage 2 of the two-step method (Bhagia et al. 2024, Eq. 2; Llama 3's
  report, Section 3.2.1): a sigmoid of an intermediate loss L (a task's loss, or a general one
  such as LAMBADA's log-perplexity), falling as the loss rises::

      a(L) = sigma(-k (L - L0)),     acc = chance + (1 - chance) sigma(-k (L - L0)),

  fitted as a(L) = sigma(log B - k L) with the scale B = e^(k L0), so that the midpoint L0 =
  log(B) / k may lie beyond the losses seen, on either side of zero (a task still near its floor
  at the ladder's lowest loss, such as WinoGrande at Pythia's sizes, has its midpoint there);

- ``accuracy-of-log-compute``, a sigmoid in log compute (the common baseline; Ruan et al. 2024)::

      a(C) = sigma(k (log C - log C0));

- ``direct-accuracy``, the direct form of Krajewski et al. (2025, Eq. 1) at a fixed ratio of
  tokens to parameters, -log accuracy a power law in compute, written above chance::

      -log a(C) = A C^-alpha;

- ``direct-accuracy-nd``, their form across ratios (Eq. 4), Chinchilla's sum of two power laws
  in place of one::

      -log a(N, D) = A N^-alpha + B D^-beta.

Stage 1 of the two-step method, the intermediate loss as a law of (N, D), is a loss law like any
other (:mod:`jaxscale.laws.intermediate_loss`, or any law of the registry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.laws.law import Law, NoisePriors, Normal, grid, lse

CITATIONS = {
    "two-step": "Bhagia et al. (2024), Establishing Task Scaling Laws via Compute-Efficient Model Ladders, Eq. 2",
    "direct": "Krajewski et al. (2025), Revisiting the Scaling Properties of Downstream Metrics, Eq. 1 and 4",
    "log-compute": "Ruan et al. (2024), Observational Scaling Laws; the sigmoid-in-log-compute baseline",
}
#: The quantity every law of this module predicts (``Law.quantity``).
QUANTITY = "accuracy above chance"


def accuracy(above_chance: ArrayLike, chance: ArrayLike) -> ArrayLike:
    """acc = chance + (1 - chance) a: the task's accuracy from the fraction ``above_chance`` a of
    the way from chance to a perfect score (the one place the chance floor enters)."""
    return chance + (1.0 - chance) * above_chance


def above_chance(acc: ArrayLike, chance: ArrayLike) -> ArrayLike:
    """a = (acc - chance) / (1 - chance), the inverse of :func:`accuracy`."""
    return (acc - chance) / (1.0 - chance)


class AccuracyOfLossParams(NamedTuple):
    """Parameters of a(L) = sigma(log B - k L): the steepness k and the scale B = e^(k L0) of the
    midpoint L0 (:func:`midpoint`)."""

    k: ArrayLike
    B: ArrayLike


def log_accuracy_of_loss(p: AccuracyOfLossParams, log_l: ArrayLike) -> jnp.ndarray:
    """log a(L) = log sigma(log B - k L), elementwise (``jax.nn.log_sigmoid``: finite at any L)."""
    k, B = p
    return jax.nn.log_sigmoid(jnp.log(B) - k * jnp.exp(log_l))


def midpoint(p: AccuracyOfLossParams) -> ArrayLike:
    """L0 = log(B) / k, the loss at which the task is half-way from chance to perfect."""
    return np.log(p.B) / p.k


class LogComputeSigmoidParams(NamedTuple):
    """Parameters of a(C) = sigma(k (log C - log C0)): the steepness k per e-fold of compute and
    the compute C0 at which the task is half-way from chance to perfect."""

    k: ArrayLike
    C0: ArrayLike


def log_accuracy_of_log_compute(p: LogComputeSigmoidParams, log_c: ArrayLike) -> jnp.ndarray:
    """log a(C) = log sigma(k (log C - log C0)), elementwise."""
    k, C0 = p
    return jax.nn.log_sigmoid(k * (log_c - jnp.log(C0)))


class DirectParams(NamedTuple):
    """Parameters of -log a(C) = A C^-alpha."""

    A: ArrayLike
    alpha: ArrayLike


def log_direct_accuracy(p: DirectParams, log_c: ArrayLike) -> jnp.ndarray:
    """log a(C) = -A C^-alpha = -exp(log A - alpha log C), elementwise."""
    A, alpha = p
    return -jnp.exp(jnp.log(A) - alpha * log_c)


class DirectNDParams(NamedTuple):
    """Parameters of -log a(N, D) = A N^-alpha + B D^-beta."""

    A: ArrayLike
    B: ArrayLike
    alpha: ArrayLike
    beta: ArrayLike


def log_direct_accuracy_nd(p: DirectNDParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """log a(N, D) = -(A N^-alpha + B D^-beta) = -exp(LSE(log A - alpha log N, log B - beta log D))."""
    A, B, alpha, beta = p
    return -jnp.exp(lse(jnp.log(A) - alpha * log_n, jnp.log(B) - beta * log_d))


@dataclass(frozen=True)
class AccuracyOfLossPriors(NoisePriors):
    """``k`` ~ Normal(1, 1) truncated to > 0 (per nat of LAMBADA's log-perplexity, 0.3-1.1 at
    Pythia's sizes); ``log_B`` = k L0 ~ Normal(0, 5) (midpoints anywhere within a few nats);
    ``sigma``: accuracy scatter of a few points."""

    sigma: float = 0.05
    k: Normal = (1.0, 1.0)
    log_B: Normal = (0.0, 5.0)


@dataclass(frozen=True)
class LogComputePriors(NoisePriors):
    """``k`` ~ Normal(0.5, 0.5) truncated to > 0 per e-fold of compute; ``log_C0`` ~ Normal(50, 10)
    (half-way at 1e17 to 1e26 FLOP)."""

    sigma: float = 0.05
    k: Normal = (0.5, 0.5)
    log_C0: Normal = (50.0, 10.0)


@dataclass(frozen=True)
class DirectPriors(NoisePriors):
    """``log_A`` ~ Normal(10, 10); ``alpha`` ~ Normal(0.2, 0.2) truncated to > 0 (Krajewski et al.
    report exponents of 0.05-0.5 in compute)."""

    sigma: float = 0.05
    log_A: Normal = (10.0, 10.0)
    alpha: Normal = (0.2, 0.2)


@dataclass(frozen=True)
class DirectNDPriors(NoisePriors):
    """``log_A``, ``log_B`` ~ Normal(5, 10); ``alpha``, ``beta`` ~ Normal(0.3, 0.3) truncated to > 0."""

    sigma: float = 0.05
    log_A: Normal = (5.0, 10.0)
    log_B: Normal = (5.0, 10.0)
    alpha: Normal = (0.3, 0.3)
    beta: Normal = (0.3, 0.3)


ACCURACY_OF_LOSS: Law[AccuracyOfLossParams] = Law(
    name="accuracy-of-loss",
    params_type=AccuracyOfLossParams,
    log_loss=log_accuracy_of_loss,
    log_scale=(False, True),
    init_grid=grid(k=(0.2, 0.5, 1.0, 3.0), log_b=(-5.0, -2.0, 0.0, 2.0, 5.0)),
    priors=AccuracyOfLossPriors(),
    formula="acc = chance + (1 - chance) sigma(-k (L - L0))",
    citation=CITATIONS["two-step"],
    inputs=("L",),
    needs_independent_inputs=False,
    quantity=QUANTITY,
    min_decades=0.0,
)

LOG_COMPUTE_SIGMOID: Law[LogComputeSigmoidParams] = Law(
    name="accuracy-of-log-compute",
    params_type=LogComputeSigmoidParams,
    log_loss=log_accuracy_of_log_compute,
    log_scale=(False, True),
    init_grid=grid(k=(0.2, 0.5, 1.0), log_C0=(40.0, 45.0, 50.0, 55.0, 60.0)),
    priors=LogComputePriors(),
    formula="acc = chance + (1 - chance) sigma(k (log C - log C0))",
    citation=CITATIONS["log-compute"],
    inputs=("C",),
    needs_independent_inputs=False,
    quantity=QUANTITY,
)

DIRECT: Law[DirectParams] = Law(
    name="direct-accuracy",
    params_type=DirectParams,
    log_loss=log_direct_accuracy,
    log_scale=(True, False),
    init_grid=grid(log_a=(2.0, 6.0, 10.0, 15.0), alpha=(0.05, 0.1, 0.2, 0.4)),
    priors=DirectPriors(),
    formula="acc = chance + (1 - chance) exp(-A C^-alpha)",
    citation=CITATIONS["direct"],
    inputs=("C",),
    needs_independent_inputs=False,
    quantity=QUANTITY,
)

DIRECT_ND: Law[DirectNDParams] = Law(
    name="direct-accuracy-nd",
    params_type=DirectNDParams,
    log_loss=log_direct_accuracy_nd,
    log_scale=(True, True, False, False),
    init_grid=grid(log_a=(2.0, 6.0), log_b=(2.0, 6.0), alpha=(0.1, 0.3), beta=(0.1, 0.3)),
    priors=DirectNDPriors(),
    formula="acc = chance + (1 - chance) exp(-(A N^-alpha + B D^-beta))",
    citation=CITATIONS["direct"],
    quantity=QUANTITY,
)
