"""The Chinchilla parametric loss and its closed-form compute-optimal allocation.

Hoffmann et al. (2022), Eq. 2 / Pearce & Song (2024), Eq. 12::

    L(N, D) = E + A / N**alpha + B / D**beta,
    log L = LSE(log A - alpha log N, log B - beta log D, log E)   (the form every path uses).

(Pearce & Song write N_c, D_c for A, B.) Under the budget C = 6 N D the minimiser is
Pearce & Song Eq. 14 (Hoffmann et al. Eq. 4)::

    N*(C) = G (C/6)**a,   D*(C) = G**-1 (C/6)**b,
    G = (alpha A / (beta B))**(1/(alpha+beta)),  a = beta/(alpha+beta),  b = alpha/(alpha+beta).

:data:`LAW` is the law as fits, posteriors and the generic optimum take it; :data:`TIED` the
same law with alpha = beta (Hoffmann et al.'s Approach 3 variant). All functions are pure,
jit/vmap/grad-able and follow the dtype of their inputs (enable x64 for float64, see
:mod:`jaxscale.core.numerics`). Concrete arguments are validated; traced ones are not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.validation import check_params_positive, check_positive
from jaxscale.laws.law import Law, LinearPart, NoisePriors, Normal, grid, lse, steps


class ChinchillaParams(NamedTuple):
    """Parameters of L(N, D) = E + A/N^alpha + B/D^beta (a JAX pytree)."""

    A: ArrayLike
    B: ArrayLike
    E: ArrayLike
    alpha: ArrayLike
    beta: ArrayLike


class TiedParams(NamedTuple):
    """Parameters of the law with one exponent, L = E + A/N^alpha + B/D^alpha."""

    A: ArrayLike
    B: ArrayLike
    E: ArrayLike
    alpha: ArrayLike


#: Hoffmann et al. (2022), Approach 3 estimates (their Eq. 10 / Pearce & Song Section 2).
CHINCHILLA = ChinchillaParams(A=406.4, B=410.7, E=1.6934, alpha=0.3392, beta=0.2849)
#: Besiroglu et al. (2024), Epoch AI's replication (their Eq. 4 / Pearce & Song Section 2).
EPOCH = ChinchillaParams(A=482.01, B=2085.43, E=1.8172, alpha=0.3478, beta=0.3658)

#: The published parameter sets by name (:attr:`jaxscale.laws.law.Law.published`).
PUBLISHED: dict[str, ChinchillaParams] = {"epoch": EPOCH, "chinchilla": CHINCHILLA}


def log_loss(p: ChinchillaParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """Hoffmann et al. (2022) Eq. 2 in log space: log L = LSE(log A - alpha log N,
    log B - beta log D, log E). Parameters are unpacked by position (see :meth:`Law.renamed`)."""
    A, B, E, alpha, beta = p
    return lse(jnp.log(A) - alpha * log_n, jnp.log(B) - beta * log_d, jnp.log(E))


def tied_log_loss(p: TiedParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """The Chinchilla law with alpha = beta."""
    return log_loss(ChinchillaParams(*p, p[3]), log_n, log_d)


def loss(n: ArrayLike, d: ArrayLike, p: ChinchillaParams) -> jnp.ndarray:
    """Chinchilla parametric loss, Hoffmann et al. (2022) Eq. 2 / Pearce & Song Eq. 12:
    L(N, D) = E + A / N**alpha + B / D**beta."""
    check_positive("n", n)
    check_positive("d", d)
    check_params_positive(p)
    return LAW.loss(n, d, p)


def loss_at_compute(n: ArrayLike, c: ArrayLike, p: ChinchillaParams) -> jnp.ndarray:
    """Pearce & Song Eq. 13: the loss of a model of N parameters trained with C = 6 N D FLOPs."""
    check_positive("c", c)
    return loss(n, jnp.asarray(c) / (6.0 * jnp.asarray(n)), p)


def allocation_exponents(p: ChinchillaParams) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Pearce & Song Eq. 14: (a, b) = (beta/(alpha+beta), alpha/(alpha+beta)),
    the exponents of N* ∝ C^a and D* ∝ C^b."""
    check_params_positive(p)
    s = jnp.asarray(p.alpha) + p.beta
    return p.beta / s, p.alpha / s


def coefficient_g(p: ChinchillaParams) -> jnp.ndarray:
    """Hoffmann et al. (2022) Eq. 4: G = (alpha A / (beta B))**(1/(alpha+beta))."""
    check_params_positive(p)
    return jnp.power(p.alpha * p.A / (p.beta * p.B), 1.0 / (jnp.asarray(p.alpha) + p.beta))


def compute_optimal_n(c: ArrayLike, p: ChinchillaParams) -> jnp.ndarray:
    """Pearce & Song Eq. 14: N*(C) = (alpha A / (beta B))**(1/(alpha+beta)) (C/6)**(beta/(alpha+beta))."""
    check_positive("c", c)
    a, _ = allocation_exponents(p)
    return coefficient_g(p) * jnp.power(jnp.asarray(c) / 6.0, a)


def compute_optimal_d(c: ArrayLike, p: ChinchillaParams) -> jnp.ndarray:
    """D*(C) = C / (6 N*(C)) = G**-1 (C/6)**(alpha/(alpha+beta))."""
    return jnp.asarray(c) / (6.0 * compute_optimal_n(c, p))


def closed_forms(p: ChinchillaParams) -> dict[str, jnp.ndarray]:
    """a, b and G of Hoffmann et al. (2022) Eq. 4 (the allocation exponents and coefficient)."""
    a, b = allocation_exponents(p)
    return {"a": a, "b": b, "G": coefficient_g(p)}


@dataclass(frozen=True)
class ChinchillaPriors(NoisePriors):
    """Weakly informative priors for L(N, D) = E + A N^-alpha + B D^-beta (Hoffmann Eq. 2).

    - ``log_A``, ``log_B`` ~ Normal(6, 3): published fits have log A ≈ 6.0-6.2 and
      log B ≈ 6.0-7.6; one prior SD is a factor e^3 ≈ 20 either way.
    - ``log_E`` ~ Normal(0.5, 1): E ≈ 1.6-1.8 nats for MassiveText; the prior allows 0.6-4.5
      within one SD.
    - ``alpha``, ``beta`` ~ Normal(0.5, 0.5) truncated to > 0: exponents of language-model
      laws are 0.05-0.7; the prior rules out only negative (non-decreasing) laws.
    - ``sigma``, ``df``: see :class:`~jaxscale.laws.law.NoisePriors`.
    """

    log_A: Normal = (6.0, 3.0)
    log_B: Normal = (6.0, 3.0)
    log_E: Normal = (0.5, 1.0)
    alpha: Normal = (0.5, 0.5)
    beta: Normal = (0.5, 0.5)


@dataclass(frozen=True)
class TiedPriors(NoisePriors):
    """:class:`ChinchillaPriors` with one exponent."""

    log_A: Normal = (6.0, 3.0)
    log_B: Normal = (6.0, 3.0)
    log_E: Normal = (0.5, 1.0)
    alpha: Normal = (0.5, 0.5)


def epoch_grid() -> np.ndarray:
    """Besiroglu et al. (2024)'s 4500 starts: alpha, beta in {0, .5, .., 2}, e in {-1, -.5,
    .., 1}, a, b in {0, 5, .., 25}, in their loop order (alpha, beta, e, a, b), as rows of
    the vector (log A, log B, log E, alpha, beta)."""
    g = grid(alpha=steps(0, 2, 0.5), beta=steps(0, 2, 0.5), e=steps(-1, 1, 0.5),
             a=steps(0, 25, 5), b=steps(0, 25, 5))()
    return g[:, [3, 4, 2, 0, 1]]


def tied_grid() -> np.ndarray:
    """The starts of :func:`epoch_grid` with alpha = beta, as (log A, log B, log E, alpha)."""
    g = epoch_grid()
    return np.unique(g[g[:, 3] == g[:, 4]][:, :4], axis=0)


def _basis(exponents: tuple[ArrayLike, ...], log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """The columns (N^-alpha, D^-beta, 1) of Eq. 2 in which the loss is linear in (A, B, E);
    ``exponents`` is (alpha, beta), or (alpha,) for the tied law."""
    alpha, beta = exponents[0], exponents[-1]
    return jnp.stack(jnp.broadcast_arrays(jnp.exp(-alpha * log_n), jnp.exp(-beta * log_d), jnp.ones_like(log_n)), -1)


#: Eq. 2 is linear in A, B and E (variable projection, :mod:`jaxscale.fitting.vpnls`).
LINEAR = LinearPart(("A", "B", "E"), _basis)

CITATION = "Hoffmann et al. (2022), Eq. 2; Pearce & Song (2024), Eq. 12"

LAW: Law[ChinchillaParams] = Law(
    name="chinchilla",
    params_type=ChinchillaParams,
    log_loss=log_loss,
    log_scale=(True, True, True, False, False),
    init_grid=epoch_grid,
    priors=ChinchillaPriors(),
    formula="L(N, D) = E + A N^-alpha + B D^-beta",
    citation=CITATION,
    centred=(("log_A", "alpha", 0), ("log_B", "beta", 1)),
    closed_forms=closed_forms,
    published=PUBLISHED,
    chinchilla_form=True,
    linear=LINEAR,
)

TIED: Law[TiedParams] = Law(
    name="chinchilla-tied",
    params_type=TiedParams,
    log_loss=tied_log_loss,
    log_scale=(True, True, True, False),
    init_grid=tied_grid,
    priors=TiedPriors(),
    formula="L(N, D) = E + A N^-alpha + B D^-alpha",
    citation=CITATION,
    centred=(("log_A", "alpha", 0), ("log_B", "alpha", 1)),
    closed_forms=lambda p: closed_forms(ChinchillaParams(*p, p[3])),
    linear=LINEAR,
)
