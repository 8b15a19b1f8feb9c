"""The data-constrained law of Muennighoff et al. (2023): Chinchilla's law in effective data and parameters.

Muennighoff et al. (2023), "Scaling Data-Constrained Language Models" (NeurIPS 2023),
Section 3 ("Method: Data-Constrained Scaling Laws"). A run of N parameters sees D tokens of
which U_D are unique; R_D = D/U_D - 1 is the number of repetitions. A repeated token is worth
less than a fresh one, with a value that decays exponentially in the repetitions, so the data
are worth the effective data

    D' = U_D + U_D R*_D (1 - exp(-R_D / R*_D)),

and likewise parameters beyond U_N, the compute-optimal size for the unique data, are worth

    N' = U_N + U_N R*_N (1 - exp(-R_N / R*_N)),   R_N = N/U_N - 1,
    U_N = min(N, N_opt(U_D)),

where N_opt(D) is Chinchilla's compute-optimal size for D tokens (Hoffmann et al. 2022, Eq. 4
solved for N: N_opt = G (G D)^(beta/alpha), G = (alpha A / (beta B))^(1/(alpha+beta))). The loss
is Chinchilla's law (Hoffmann et al. 2022, Eq. 2) in (N', D')::

    L(N, D; U_D) = E + A / N'^alpha + B / D'^beta.

R*_D and R*_N are the repetitions after which repeated data (excess parameters) have lost
1 - 1/e of their value; D' saturates at U_D (1 + R*_D). Limits: with R*_D, R*_N -> infinity the
law is Chinchilla's in (N, D); with D <= U_D and N <= N_opt(D) it is Chinchilla's exactly, for
any R*. Note that the excess-parameter discount applies without any repetition: a model larger
than N_opt(D) for its own D has N' < N (Muennighoff et al.'s definition of U_N; see the
authors' code in the repository below, which computes U_N = min(N, N_opt(U_D))).

The law's ``inputs`` are ("N", "D", "U_D"). Fits and posteriors read U_D per run from a runs
table's ``unique_tokens`` column (``jaxscale fit/bayes --law data-constrained``), and
``LAW.given(U_D=u)`` is the law of (N, D) at u unique tokens, which the compute-optimal solver
of :mod:`jaxscale.optimum.solver` and :func:`jaxscale.optimum.allocation.optimal_allocation_given_unique_tokens` take (see
:meth:`jaxscale.laws.law.Law.given`). ``U_D`` here is the unique-token *budget*: a run that sees
fewer tokens than the budget sees D unique tokens (U_D = min(U_D, D), as in the authors' code).

:data:`MUENNIGHOFF` holds the authors' published fit (C4, their Chinchilla-form refit with
alpha = beta, and R*_D = 15.39, R*_N = 5.31), at the full precision given in their repository's
README ("Parametric Fit", github.com/huggingface/datablations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.core.validation import check_positive
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law, Normal, grid


class DataConstrainedParams(NamedTuple):
    """Chinchilla's A, B, E, alpha, beta and the decay constants R*_D, R*_N of Muennighoff et al. (2023)."""

    A: ArrayLike
    B: ArrayLike
    E: ArrayLike
    alpha: ArrayLike
    beta: ArrayLike
    R_D_star: ArrayLike
    R_N_star: ArrayLike


#: Muennighoff et al. (2023), the data-constrained fit on C4 (R*_D = 15.39, R*_N = 5.31 in the
#: paper's Section 3), at the precision of the authors' repository README ("Parametric Fit",
#: github.com/huggingface/datablations), which lists log A = 6.255414, log B = 7.3049974,
#: log E = 0.6254804, alpha = beta = 0.3526596, R*_D = 15.387756, R*_N = 5.309743.
MUENNIGHOFF = DataConstrainedParams(A=math.exp(6.255414), B=math.exp(7.3049974), E=math.exp(0.6254804),
                                    alpha=0.3526596, beta=0.3526596, R_D_star=15.387756, R_N_star=5.309743)

#: The published parameter sets by name (:attr:`jaxscale.laws.law.Law.published`): Muennighoff
#: et al.'s fit, and two what-ifs on the Chinchilla laws of Hoffmann et al. (``"chinchilla"``) and
#: Besiroglu et al. (``"epoch"``) with Muennighoff et al.'s R*_D, R*_N (fitted with their own
#: A, B, E, alpha, beta, not with these).
PUBLISHED: dict[str, DataConstrainedParams] = {
    "muennighoff": MUENNIGHOFF,
    **{name: DataConstrainedParams(*base, MUENNIGHOFF.R_D_star, MUENNIGHOFF.R_N_star)
       for name, base in chinchilla.PUBLISHED.items()},
}

#: Above R/R* = e^7 ≈ 1100 the decay exp(-R/R*) is below float64's smallest number: D' has
#: saturated at U (1 + R*). Repetitions are capped there, which leaves the value unchanged and
#: keeps R and its derivatives finite at any count the solvers try (up to 1e300).
_SATURATED_LOG = 7.0
#: log 1e300: a size and a token count far past saturation for any U_D and R* of interest.
_LOG_UNBOUNDED = 690.0


def base_params(p: DataConstrainedParams) -> chinchilla.ChinchillaParams:
    """The Chinchilla law the data-constrained law is built on: (A, B, E, alpha, beta)."""
    return chinchilla.ChinchillaParams(*p[:5])


def log_effective_count(log_count: ArrayLike, log_unique: ArrayLike, r_star: ArrayLike) -> jnp.ndarray:
    """log of U + U R* (1 - exp(-R/R*)) with U = min(count, unique) and R = count/U - 1
    (Muennighoff et al. 2023, Section 3: D' of the tokens, N' of the parameters)."""
    log_u = jnp.minimum(log_count, log_unique)
    log_epochs = jnp.minimum(log_count - log_u, jnp.log(r_star) + _SATURATED_LOG)  # log(1 + R)
    repetitions = jnp.expm1(log_epochs)
    return log_u + jnp.log1p(-r_star * jnp.expm1(-repetitions / r_star))


def effective_data(d: ArrayLike, unique_tokens: ArrayLike, r_d_star: ArrayLike) -> jnp.ndarray:
    """D' = U_D + U_D R*_D (1 - exp(-R_D/R*_D)), R_D = D/U_D - 1: the fresh tokens that D tokens
    drawn from ``unique_tokens`` are worth (Muennighoff et al. 2023, Section 3). E.g. 4 epochs
    at R*_D = 15.39 are worth 1 + 15.39 (1 - e^(-3/15.39)) ≈ 3.73 epochs of fresh data."""
    for name, value in (("d", d), ("unique_tokens", unique_tokens), ("r_d_star", r_d_star)):
        check_positive(name, value)
    return jnp.exp(log_effective_count(jnp.log(d), jnp.log(unique_tokens), r_d_star))


def log_optimal_size_for_data(p: chinchilla.ChinchillaParams, log_d: ArrayLike) -> jnp.ndarray:
    """log N_opt(D): the size whose Chinchilla compute-optimal token count is D, from Hoffmann et
    al. (2022) Eq. 4 (N* = G (C/6)^a, D* = (C/6)^b / G): N_opt = G (G D)^(a/b) (U_N of
    Muennighoff et al. 2023, Section 3)."""
    a, b = chinchilla.allocation_exponents(p)
    log_g = jnp.log(chinchilla.coefficient_g(p))
    return log_g + (a / b) * (log_g + log_d)


def log_loss(p: DataConstrainedParams, log_n: ArrayLike, log_d: ArrayLike, log_unique: ArrayLike) -> jnp.ndarray:
    """log L(N, D; U_D) = log of Chinchilla's Eq. 2 at (N', D') (Muennighoff et al. 2023,
    Section 3), elementwise. Parameters are unpacked by position."""
    *_, r_d_star, r_n_star = p
    base = base_params(p)
    log_d_eff = log_effective_count(log_d, log_unique, r_d_star)
    log_unique_params = log_optimal_size_for_data(base, jnp.minimum(log_d, log_unique))
    log_n_eff = log_effective_count(log_n, log_unique_params, r_n_star)
    return chinchilla.log_loss(base, log_n_eff, log_d_eff)


def loss(n: ArrayLike, d: ArrayLike, unique_tokens: ArrayLike, p: DataConstrainedParams) -> jnp.ndarray:
    """L(N, D; U_D) = E + A/N'^alpha + B/D'^beta (Muennighoff et al. 2023, Section 3)."""
    for name, value in (("n", n), ("d", d), ("unique_tokens", unique_tokens)):
        check_positive(name, value)
    return LAW.given(U_D=unique_tokens).loss(n, d, p)


def loss_floor(unique_tokens: ArrayLike, p: DataConstrainedParams) -> jnp.ndarray:
    """The lowest loss U_D unique tokens allow, at N, D -> infinity: both decays saturated,
    D' = U_D (1 + R*_D) and N' = N_opt(U_D) (1 + R*_N). Where the compute-optimal run reaches
    it to float64 precision, more compute buys nothing and N* is not determined."""
    check_positive("unique_tokens", unique_tokens)
    return jnp.exp(log_loss(p, _LOG_UNBOUNDED, _LOG_UNBOUNDED, jnp.log(unique_tokens)))


@dataclass(frozen=True)
class DataConstrainedPriors(chinchilla.ChinchillaPriors):
    """Chinchilla's priors for A, B, E, alpha, beta, and ``log_R_D_star``, ``log_R_N_star`` ~
    Normal(2, 1.5): the published values are log 15.4 = 2.7 and log 5.3 = 1.7; one SD is a
    factor 4.5 either way."""

    log_R_D_star: Normal = (2.0, 1.5)
    log_R_N_star: Normal = (2.0, 1.5)


LAW: Law[DataConstrainedParams] = Law(
    name="data-constrained",
    params_type=DataConstrainedParams,
    log_loss=log_loss,
    log_scale=(True, True, True, False, False, True, True),
    init_grid=grid(log_a=(2.0, 6.0, 10.0), log_b=(2.0, 6.0, 10.0), log_e=(0.0, 0.5), alpha=(0.2, 0.5),
                   beta=(0.2, 0.5), log_rd=(1.0, 3.0), log_rn=(1.0, 3.0)),
    priors=DataConstrainedPriors(),
    formula="L(N, D; U_D) = E + A N'^-alpha + B D'^-beta, D' = U_D + U_D R*_D (1 - exp(-R_D/R*_D)), "
            "N' likewise with U_N = min(N, N_opt(U_D)), R*_N",
    citation="Muennighoff et al. (2023), Section 3; Hoffmann et al. (2022), Eq. 2 and 4",
    inputs=("N", "D", "U_D"),
    published=PUBLISHED,
)
