"""Pearce & Song (2024), "Reconciling Kaplan and Chinchilla Scaling Laws", Section 2.

The Chinchilla law written in non-embedding terms. With N = ``N_\\E`` the non-embedding parameters,

- Eq. 7 (generalised exponent δ, the paper fits δ = 0.34 and uses 1/3):
  N_T = N + γ N**δ
- Eq. 15: L(N, ``C_\\E``) = A / (N + γ N**δ)**α + B / (``C_\\E`` / 6N)**β + E  (A, B are N_c, D_c)
- Eq. 16 (derived here from Eq. 15, see :func:`compute_at_optimum`; the shared text copy lost
  the exponents on N in two terms):
  ``C_\\E`` = 6 N (N + δγ N**δ)**(-1/β) (N + γ N**δ)**((1+α)/β) (β B / (α A))**(1/β)
- Eq. 17: 1/g = d log ``C_\\E`` / d log N*
  = 1 - (1/β) (N + δ²γ N**δ)/(N + δγ N**δ) + ((1+α)/β) (N + δγ N**δ)/(N + γ N**δ),
  which for δ = 1/3 is the paper's (N^(2/3) + γ/9)/(N^(2/3) + γ/3) and (N^(2/3) + γ/3)/(N^(2/3) + γ).

Derivation of Eq. 16: with f(N) = N + γN^δ and D = C/(6N), dL/dN = 0 reads
α A f^(-α-1) f'(N) = β B (6/C)^β N^(β-1). Solving for C and using N f'(N) = N + δγN^δ gives the
expression above; Eq. 17 is its logarithmic derivative, d log(N + kN^δ)/d log N =
(N + δkN^δ)/(N + kN^δ) applied to both factors.

:data:`LAW` is Eq. 15 as a :class:`~jaxscale.laws.law.Law` of (``N_\\E``, D) with the flat
parameters (A, B, E, α, β, γ, δ); the Step-1 fit of γ, δ to Table A9 is part of the Section-2
pipeline (:mod:`jaxscale.reconciliation.pipeline`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.validation import check_params_positive, check_positive
from jaxscale.laws import table_a9
from jaxscale.laws.chinchilla import ChinchillaParams, ChinchillaPriors, epoch_grid
from jaxscale.laws.law import Law, Normal, lse

#: Pearce & Song Section 2, Step 1: the published fit of Eq. 7 to Table A9.
GAMMA_PAPER = 47491.0
DELTA_PAPER = 0.34
#: The exponent of Eq. 7 used in Eqs. 15-17 (Kaplan's fixed-aspect-ratio sizing, Eq. 10).
DELTA_KAPLAN = 1.0 / 3.0


class PearceSongParams(NamedTuple):
    """Chinchilla parameters plus the embedding relation N_T = N + γ N**δ (a pytree)."""

    A: ArrayLike
    B: ArrayLike
    E: ArrayLike
    alpha: ArrayLike
    beta: ArrayLike
    gamma: ArrayLike
    delta: ArrayLike = DELTA_KAPLAN

    @property
    def chinchilla(self) -> ChinchillaParams:
        """The Chinchilla-law part (A, B, E, α, β)."""
        return ChinchillaParams(*self[:5])


def with_embedding(p: ChinchillaParams, gamma: ArrayLike, delta: ArrayLike = DELTA_KAPLAN) -> PearceSongParams:
    """Eq. 15's parameters from Chinchilla's and the embedding relation (γ, δ) of Eq. 7."""
    return PearceSongParams(*p, gamma, delta)


def total_params(n_nonembedding: ArrayLike, gamma: ArrayLike, delta: ArrayLike = DELTA_KAPLAN) -> jnp.ndarray:
    """Eq. 7: N_T = N_\\E + γ N_\\E**δ."""
    check_positive("n_nonembedding", n_nonembedding)
    check_positive("gamma", gamma)
    check_positive("delta", delta)
    return n_nonembedding + gamma * jnp.power(n_nonembedding, delta)


def aspect_ratio_from_gamma(gamma: ArrayLike, vocab_size: ArrayLike = table_a9.VOCAB_SIZE,
                            context: ArrayLike = 0) -> jnp.ndarray:
    """Invert Eq. 10, γ = (v + h)(A/12)**(1/3): the aspect ratio A = d/l = 12 (γ/(v+h))**3."""
    check_positive("gamma", gamma)
    return 12.0 * jnp.power(gamma / (vocab_size + context), 3)


def gamma_from_aspect_ratio(aspect_ratio: ArrayLike, vocab_size: ArrayLike = table_a9.VOCAB_SIZE,
                            context: ArrayLike = 0) -> jnp.ndarray:
    """Eq. 10: γ = (v + h)(A/12)**(1/3) for models of fixed aspect ratio A = d/l."""
    check_positive("aspect_ratio", aspect_ratio)
    return (vocab_size + context) * jnp.power(aspect_ratio / 12.0, 1.0 / 3.0)


def _log_total(log_n: ArrayLike, gamma: ArrayLike, delta: ArrayLike) -> jnp.ndarray:
    """log N_T = log(N + γ N**δ) = LSE(log N, log γ + δ log N) (Eq. 7), elementwise."""
    return lse(log_n, jnp.log(gamma) + delta * log_n)


def log_loss(q: PearceSongParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """Eq. 15 in log space: log L = LSE(log A - α log N_T, log B - β log D, log E) with
    log N_T from Eq. 7. Parameters are unpacked by position."""
    A, B, E, alpha, beta, gamma, delta = q
    return lse(jnp.log(A) - alpha * _log_total(log_n, gamma, delta), jnp.log(B) - beta * log_d, jnp.log(E))


def loss(n_nonembedding: ArrayLike, d: ArrayLike, q: PearceSongParams) -> jnp.ndarray:
    """Eq. 15 as a law of (N_\\E, D): A/(N + γN**δ)**α + B/D**β + E, with D = C_\\E/(6 N_\\E).

    Written in (N, D) so that the generic solver of :mod:`jaxscale.optimum.solver`, which imposes
    C = 6 N D, optimises over N_\\E under the non-embedding budget C_\\E (Eq. 4)."""
    check_positive("n_nonembedding", n_nonembedding)
    check_positive("d", d)
    check_params_positive(q)
    return LAW.loss(n_nonembedding, d, q)
def log_compute_at_optimum(log_n: ArrayLike, q: PearceSongParams) -> jnp.ndarray:
    """Eq. 16 in log space, x = log N_\\E and w = γ e^((δ-1)x) = γ N**(δ-1):
    log C = log 6 + x - (1/β)(x + log1p(δw)) + ((1+α)/β)(x + log1p(w)) + (1/β) log(βB / (αA)),
    since N + δγN**δ = N (1 + δw) and N + γN**δ = N (1 + w). Valid for N > 1e-300 (float64)."""
    x, p = jnp.asarray(log_n), q  # p: the Chinchilla part, read as in Eq. 16
    w = jnp.exp((q.delta - 1.0) * x + jnp.log(q.gamma))
    log_n_f_prime = x + jnp.log1p(q.delta * w)  # log(N + δγN^δ)
    log_n_total = x + jnp.log1p(w)  # log(N + γN^δ) = log N_T
    return (
        jnp.log(6.0) + x - log_n_f_prime / p.beta + (1.0 + p.alpha) / p.beta * log_n_total
        + jnp.log(p.beta * p.B / (p.alpha * p.A)) / p.beta
    )


def compute_at_optimum(n_nonembedding: ArrayLike, q: PearceSongParams) -> jnp.ndarray:
    """Eq. 16 (corrected, general δ): the budget C_\\E at which N_\\E is compute-optimal,
    C = 6 N (N + δγN**δ)**(-1/β) (N + γN**δ)**((1+α)/β) (βB/(αA))**(1/β)."""
    check_positive("n_nonembedding", n_nonembedding)
    return jnp.exp(log_compute_at_optimum(jnp.log(jnp.asarray(n_nonembedding)), q))


def local_exponent(n_nonembedding: ArrayLike, q: PearceSongParams) -> jnp.ndarray:
    """Eq. 17 (general δ): g = d log N*_\\E / d log C_\\E at the optimal size N*_\\E."""
    check_positive("n_nonembedding", n_nonembedding)
    n, p = jnp.asarray(n_nonembedding), q
    k = q.gamma * jnp.power(n, q.delta)
    inv_g = (
        1.0
        - (1.0 / p.beta) * (n + q.delta**2 * k) / (n + q.delta * k)
        + ((1.0 + p.alpha) / p.beta) * (n + q.delta * k) / (n + k)
    )
    return 1.0 / inv_g


def local_exponent_autodiff(n_nonembedding: ArrayLike, q: PearceSongParams) -> jnp.ndarray:
    """g by automatic differentiation of Eq. 16: 1/g = d log C_\\E / d log N from ``jax.grad``,
    no hand derivative involved (agrees with :func:`local_exponent`, Eq. 17, to rounding). The
    fully generic route, which does not use Eq. 16 either, is
    :func:`jaxscale.optimum.solver.local_exponent_at_n`."""
    check_positive("n_nonembedding", n_nonembedding)
    total_log_compute = lambda log_n: jnp.sum(log_compute_at_optimum(log_n, q))  # noqa: E731
    return 1.0 / jax.grad(total_log_compute)(jnp.log(jnp.asarray(n_nonembedding)))


def limit_small(q: PearceSongParams) -> jnp.ndarray:
    """g as N*_\\E -> 0 (embeddings dominate): β/(δα + β), i.e. β/(α/3 + β) for δ = 1/3."""
    return q.beta / (q.delta * q.alpha + q.beta)


def limit_large(q: PearceSongParams) -> jnp.ndarray:
    """g as N*_\\E -> ∞ (embeddings negligible): β/(α + β), Chinchilla's exponent (Eq. 14)."""
    return q.beta / (q.alpha + q.beta)


def transition_size(q: PearceSongParams) -> jnp.ndarray:
    """N_\\E where embedding and non-embedding parameters are equal, γN**δ = N:
    N = γ**(1/(1-δ)), i.e. γ**(3/2) ≈ 1e7 for δ = 1/3 (the middle of the transition phase)."""
    return jnp.power(q.gamma, 1.0 / (1.0 - q.delta))


@dataclass(frozen=True)
class PearceSongPriors(ChinchillaPriors):
    """:class:`~jaxscale.laws.chinchilla.ChinchillaPriors` for A, B, E, α, β, and for Eq. 7:
    ``log_gamma`` ~ Normal(10.8, 2) (Table A9: γ = 47491, log 10.77; one SD a factor e^2) and
    ``delta`` ~ Normal(1/3, 0.1) truncated to > 0 (fixed aspect ratio gives 1/3, Eq. 10)."""

    log_gamma: Normal = (10.8, 2.0)
    delta: Normal = (1.0 / 3.0, 0.1)


def _grid() -> np.ndarray:
    """Epoch's Chinchilla starts, each with the paper's γ = 47491 and δ = 1/3."""
    base = epoch_grid()
    embedding = np.broadcast_to([np.log(GAMMA_PAPER), DELTA_KAPLAN], (len(base), 2))
    return np.concatenate([base, embedding], axis=1)


LAW: Law[PearceSongParams] = Law(
    name="pearce-song",
    params_type=PearceSongParams,
    log_loss=log_loss,
    log_scale=(True, True, True, False, False, True, False),
    init_grid=_grid,
    priors=PearceSongPriors(),
    formula="L(N_ne, D) = E + A (N_ne + gamma N_ne^delta)^-alpha + B D^-beta",
    citation="Pearce & Song (2024), Eq. 15 with Eq. 7",
    inputs=("N_nonembedding", "D"),
    centred=(("log_B", "beta", 1),),
)
