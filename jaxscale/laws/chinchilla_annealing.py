"""Chinchilla's law on every checkpoint: model size, the forward area in tokens, and annealing.

Hoffmann et al. (2022), Eq. 2, describes finished, annealed runs: L(N, D) = E + A/N^alpha + B/D^beta.
Written with the annealing law of Tissue et al. (2024, Eq. 1; :mod:`jaxscale.laws.lr_annealing`)
in place of the data term, it describes every checkpoint of every run::

    L(N, s) = E + A N^(-alpha) + B Dt^(-beta) - C St2,
    Dt  = (tokens per step) S1(s) / eta_peak,      St2 = S2(s) / eta_peak,

Dt the tokens seen, each step weighted by its rate relative to the run's peak (Dt = D for a
constant rate without warmup), St2 the annealing area in steps at the peak rate. One set of
(E, A, B, C, alpha, beta) for all sizes and schedules; with S2 = 0 and a constant rate it is
Eq. 2 exactly, so alpha and beta are Chinchilla's exponents, estimated from whole curves
instead of last checkpoints. This combination is jaxscale's (declared before fitting it: see
docs/guides/curves.md, "Chinchilla on every checkpoint"), not a published law.

The inputs are columns of the runs table that ``jaxscale curve --every-checkpoint`` adds from
each run's schedule (:func:`jaxscale.curves.every_checkpoint.checkpoint_table`), so the law is fitted
as any other (:func:`jaxscale.fitting.approach3.fit_approach3`, and NUTS through
:mod:`jaxscale.inference`).

Log form, overflow-safe: P = LSE(log E, log A - alpha log N, log B - beta log Dt) and
log L = P + log(1 - exp(log C + log St2 - P)) (:func:`jaxscale.laws.lr_annealing.log_difference`),
NaN where the law's loss would be <= 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law, NoisePriors, Normal, grid, lse
from jaxscale.laws.lr_annealing import log_difference
from jaxscale.tables import schema as rs


class ChinchillaAnnealingParams(NamedTuple):
    """Parameters of L = E + A N^(-alpha) + B Dt^(-beta) - C St2."""

    E: ArrayLike
    A: ArrayLike
    B: ArrayLike
    C: ArrayLike
    alpha: ArrayLike
    beta: ArrayLike


def log_loss(p: ChinchillaAnnealingParams, log_n: ArrayLike, log_d: ArrayLike, log_s2: ArrayLike) -> jnp.ndarray:
    """log L from log N, log Dt and log St2, elementwise."""
    E, A, B, C, alpha, beta = p
    forward = lse(jnp.log(E), jnp.log(A) - alpha * log_n, jnp.log(B) - beta * log_d)
    return log_difference(forward, jnp.log(C) + log_s2)


def closed_forms(p: ChinchillaAnnealingParams) -> dict[str, jnp.ndarray]:
    """Chinchilla's allocation exponents of the law's (A, B, E, alpha, beta): a = beta / (alpha +
    beta), b = alpha / (alpha + beta) (Hoffmann et al. 2022, Eq. 4)."""
    E, A, B, _, alpha, beta = p
    a, b = chinchilla.allocation_exponents(chinchilla.ChinchillaParams(A, B, E, alpha, beta))
    return {"a": a, "b": b}


@dataclass(frozen=True)
class ChinchillaAnnealingPriors(NoisePriors):
    """Chinchilla's priors for E, A, B, alpha, beta, reordered to the law's vector, and ``log_C``
    ~ Normal(-5, 3): C is the loss bought per step of annealing at the peak rate, about 1e-4
    to 1e-1 nats in jaxscale's runs and the (Mis)Fitting runs."""

    log_E: Normal = chinchilla.ChinchillaPriors.log_E
    log_A: Normal = chinchilla.ChinchillaPriors.log_A
    log_B: Normal = chinchilla.ChinchillaPriors.log_B
    log_C: Normal = (-5.0, 3.0)
    alpha: Normal = chinchilla.ChinchillaPriors.alpha
    beta: Normal = chinchilla.ChinchillaPriors.beta


LAW: Law[ChinchillaAnnealingParams] = Law(
    name="chinchilla-annealing",
    params_type=ChinchillaAnnealingParams,
    log_loss=log_loss,
    log_scale=(True, True, True, True, False, False),
    # Epoch's Chinchilla ranges, coarser, times three annealing scales.
    init_grid=grid(log_e=(-1.0, 0.5, 1.5), log_a=(0.0, 10.0, 20.0), log_b=(0.0, 10.0, 20.0),
                   log_c=(-8.0, -5.0, -2.0), alpha=(0.0, 0.5, 1.0, 1.5), beta=(0.0, 0.5, 1.0, 1.5)),
    priors=ChinchillaAnnealingPriors(),
    formula="L(N, s) = E + A N^(-alpha) + B Dt^(-beta) - C St2",
    citation="Hoffmann et al. (2022), Eq. 2, with the annealing term of Tissue et al. (2024), Eq. 1",
    inputs=(rs.N_TOTAL, rs.FORWARD_TOKENS, rs.ANNEALING_STEPS),
    closed_forms=closed_forms,
    positive=False,
)
