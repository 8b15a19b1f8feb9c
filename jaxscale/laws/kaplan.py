"""Kaplan et al. (2020), "Scaling Laws for Neural Language Models", as pure JAX functions.

N is the number of non-embedding parameters, D tokens, S optimiser steps, B batch size in tokens,
C compute in PF-days (1 PF-day = 8.64e19 FLOP) unless stated. Equation numbers are Kaplan's;
constants are the published fits (Section 1.2 and Tables 2, 3, 5). All functions follow the
dtype of their inputs and are jit/vmap/grad-able; concrete arguments are validated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.validation import check_params_positive, check_positive
from jaxscale.laws.law import Law, NoisePriors, Normal, grid, lse, steps

PF_DAY_FLOP = 1e15 * 24 * 3600

# Single-variable power laws, Eqs. 1.1-1.3 (Kaplan Section 1.2).
ALPHA_N, N_C = 0.076, 8.8e13  # Eq. 1.1, non-embedding parameters
ALPHA_D, D_C = 0.095, 5.4e13  # Eq. 1.2, tokens
ALPHA_CMIN, CMIN_C = 0.050, 3.1e8  # Eq. 1.3, PF-days
# Critical batch size, Eq. 1.4 / 5.3.
B_STAR, ALPHA_B = 2e8, 0.21  # tokens
# Compute-efficient allocation, Eq. 1.7 / Section 6.1 (C_min in PF-days).
N_OPT_COEF, N_OPT_EXP = 1.3e9, 0.73  # N_opt = 1.3e9 * C_min**0.73
D_OPT_COEF, D_OPT_EXP = 2e10, 0.26  # D(C_min) = 2e10 tokens * C_min**0.26 (Section 6.3)
# Overfitting rule, Eq. 4.4: D >~ 5e3 * N**0.74.
OVERFIT_COEF, OVERFIT_EXP = 5e3, 0.74


class KaplanNDParams(NamedTuple):
    """Parameters of L(N, D), Eq. 1.5 / 4.1."""

    N_c: ArrayLike
    D_c: ArrayLike
    alpha_N: ArrayLike
    alpha_D: ArrayLike


class KaplanNSParams(NamedTuple):
    """Parameters of L(N, S_min), Eq. 1.6 / 5.6."""

    N_c: ArrayLike
    S_c: ArrayLike
    alpha_N: ArrayLike
    alpha_S: ArrayLike


#: Table 2 fit of Eq. 1.5 (WebText2).
KAPLAN_ND = KaplanNDParams(N_c=6.4e13, D_c=1.8e13, alpha_N=0.076, alpha_D=0.103)
#: Table 3 fit of Eq. 1.6.
KAPLAN_NS = KaplanNSParams(N_c=6.5e13, S_c=2.1e3, alpha_N=0.077, alpha_S=0.76)


def loss_n(n: ArrayLike, n_c: ArrayLike = N_C, alpha_n: ArrayLike = ALPHA_N) -> jnp.ndarray:
    """Eq. 1.1: L(N) = (N_c / N)**alpha_N, models trained to convergence."""
    check_positive("n", n)
    check_positive("n_c", n_c)
    check_positive("alpha_n", alpha_n)
    return jnp.power(n_c / jnp.asarray(n), alpha_n)


def loss_d(d: ArrayLike, d_c: ArrayLike = D_C, alpha_d: ArrayLike = ALPHA_D) -> jnp.ndarray:
    """Eq. 1.2: L(D) = (D_c / D)**alpha_D, large models with early stopping."""
    check_positive("d", d)
    check_positive("d_c", d_c)
    check_positive("alpha_d", alpha_d)
    return jnp.power(d_c / jnp.asarray(d), alpha_d)


def loss_cmin(
    c_min: ArrayLike, cmin_c: ArrayLike = CMIN_C, alpha_cmin: ArrayLike = ALPHA_CMIN
) -> jnp.ndarray:
    """Eq. 1.3: L(C_min) = (C_min_c / C_min)**alpha_Cmin, C_min in PF-days."""
    check_positive("c_min", c_min)
    check_positive("cmin_c", cmin_c)
    check_positive("alpha_cmin", alpha_cmin)
    return jnp.power(cmin_c / jnp.asarray(c_min), alpha_cmin)


def log_loss_nd(p: KaplanNDParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """Eq. 1.5 in log space: log L = alpha_D LSE((alpha_N/alpha_D)(log N_c - log N), log D_c - log D).
    Parameters are unpacked by position (see :meth:`Law.renamed`)."""
    n_c, d_c, alpha_n, alpha_d = p
    return alpha_d * lse((alpha_n / alpha_d) * (jnp.log(n_c) - log_n), jnp.log(d_c) - log_d)


def log_loss_ns(p: KaplanNSParams, log_n: ArrayLike, log_s: ArrayLike) -> jnp.ndarray:
    """Eq. 1.6 in log space: log L = LSE(alpha_N (log N_c - log N), alpha_S (log S_c - log S_min))."""
    n_c, s_c, alpha_n, alpha_s = p
    return lse(alpha_n * (jnp.log(n_c) - log_n), alpha_s * (jnp.log(s_c) - log_s))


def loss_nd(n: ArrayLike, d: ArrayLike, p: KaplanNDParams = KAPLAN_ND) -> jnp.ndarray:
    """Eq. 1.5 / 4.1: L(N, D) = [(N_c/N)**(alpha_N/alpha_D) + D_c/D]**alpha_D."""
    check_positive("n", n)
    check_positive("d", d)
    check_params_positive(p)
    return LAW_ND.loss(n, d, p)


def loss_ns(n: ArrayLike, s_min: ArrayLike, p: KaplanNSParams = KAPLAN_NS) -> jnp.ndarray:
    """Eq. 1.6 / 5.6: L(N, S_min) = (N_c/N)**alpha_N + (S_c/S_min)**alpha_S."""
    check_positive("n", n)
    check_positive("s_min", s_min)
    check_params_positive(p)
    return LAW_NS.loss(n, s_min, p)


def critical_batch_size(
    loss: ArrayLike, b_star: ArrayLike = B_STAR, alpha_b: ArrayLike = ALPHA_B
) -> jnp.ndarray:
    """Eq. 1.4 / 5.3: B_crit(L) = B* / L**(1/alpha_B), in tokens."""
    check_positive("loss", loss)
    check_positive("b_star", b_star)
    check_positive("alpha_b", alpha_b)
    return b_star / jnp.power(jnp.asarray(loss), 1.0 / alpha_b)


def minimum_steps(steps: ArrayLike, batch: ArrayLike, loss: ArrayLike) -> jnp.ndarray:
    """Eq. 5.4: S_min = S / (1 + B_crit(L) / B), the steps needed at B >> B_crit."""
    check_positive("steps", steps)
    check_positive("batch", batch)
    return jnp.asarray(steps) / (1.0 + critical_batch_size(loss) / jnp.asarray(batch))


def minimum_compute(compute: ArrayLike, batch: ArrayLike, loss: ArrayLike) -> jnp.ndarray:
    """Eq. 5.5: C_min = C / (1 + B / B_crit(L)), the compute needed at B << B_crit."""
    check_positive("compute", compute)
    check_positive("batch", batch)
    return jnp.asarray(compute) / (1.0 + jnp.asarray(batch) / critical_batch_size(loss))


def alpha_cmin_theory(
    alpha_s: ArrayLike = KAPLAN_NS.alpha_S,
    alpha_b: ArrayLike = ALPHA_B,
    alpha_n: ArrayLike = KAPLAN_NS.alpha_N,
) -> jnp.ndarray:
    """Eq. 1.8 / B.4: alpha_Cmin = 1 / (1/alpha_S + 1/alpha_B + 1/alpha_N) (≈ 0.054)."""
    for name, value in (("alpha_s", alpha_s), ("alpha_b", alpha_b), ("alpha_n", alpha_n)):
        check_positive(name, value)
    return 1.0 / (1.0 / jnp.asarray(alpha_s) + 1.0 / alpha_b + 1.0 / alpha_n)


class AllocationExponents(NamedTuple):
    """Exponents of N_opt, B_opt, S_min,opt and D = B S in C_min (Eq. 1.7 / Appendix B)."""

    n: jnp.ndarray
    batch: jnp.ndarray
    steps: jnp.ndarray
    data: jnp.ndarray


def optimal_allocation_exponents(
    alpha_s: ArrayLike = KAPLAN_NS.alpha_S,
    alpha_b: ArrayLike = ALPHA_B,
    alpha_n: ArrayLike = KAPLAN_NS.alpha_N,
) -> AllocationExponents:
    """Appendix B: N_opt ∝ C^(αC/αN), B_opt ∝ C^(αC/αB), S_min ∝ C^(αC/αS), with
    αC = alpha_cmin_theory(...); the data exponent is that of D = B S."""
    a_c = alpha_cmin_theory(alpha_s, alpha_b, alpha_n)
    batch, steps = a_c / alpha_b, a_c / alpha_s
    return AllocationExponents(n=a_c / alpha_n, batch=batch, steps=steps, data=batch + steps)


def overfitting_penalty(n: ArrayLike, d: ArrayLike, p: KaplanNDParams = KAPLAN_ND) -> jnp.ndarray:
    """Eq. 4.3: δL(N, D) = L(N, D)/L(N, ∞) - 1 = [1 + (N/N_c)**(αN/αD) D_c/D]**αD - 1."""
    check_positive("n", n)
    check_positive("d", d)
    check_params_positive(p)
    ratio = jnp.power(jnp.asarray(n) / p.N_c, p.alpha_N / p.alpha_D) * p.D_c / jnp.asarray(d)
    return jnp.power(1.0 + ratio, p.alpha_D) - 1.0


def tokens_to_avoid_overfitting(n: ArrayLike) -> jnp.ndarray:
    """Eq. 4.4: the data that keeps the overfitting penalty small, D ≈ 5e3 N**0.74."""
    check_positive("n", n)
    return OVERFIT_COEF * jnp.power(jnp.asarray(n), OVERFIT_EXP)


def compute_efficient_n(c_min: ArrayLike) -> jnp.ndarray:
    """Eq. 1.7 / 6.1 (empirical): N_opt = 1.3e9 (C_min / PF-day)**0.73."""
    check_positive("c_min", c_min)
    return N_OPT_COEF * jnp.power(jnp.asarray(c_min), N_OPT_EXP)


def compute_efficient_data(c_min: ArrayLike) -> jnp.ndarray:
    """Section 6.3: data processed on the compute-efficient path, D = 2e10 (C_min/PF-day)**0.26."""
    check_positive("c_min", c_min)
    return D_OPT_COEF * jnp.power(jnp.asarray(c_min), D_OPT_EXP)


class ContradictionPoint(NamedTuple):
    """Where L(C_min) meets L(D(C_min)) (Kaplan Section 6.3)."""

    c_pf_days: float
    n: float
    d: float
    loss: float


def contradiction_point() -> ContradictionPoint:
    """Where L(C_min) (Eq. 1.3) meets L(D(C_min)) (Eq. 1.2 at D = 2e10 C^0.26, Section 6.3);
    Kaplan reports C* ~ 1e4 PF-days, N* ~ 1e12, D* ~ 1e12, L* ~ 1.7.

    Both sides are power laws in C, so their logs are affine in log C::

        log L(C_min)    = alpha_Cmin (log C_c - log C)
        log L(D(C_min)) = alpha_D (log D_c - log 2e10 - 0.26 log C)

    and equating them gives the crossing in closed form::

        log C* = [alpha_Cmin log C_c - alpha_D log(D_c / 2e10)] / (alpha_Cmin - 0.26 alpha_D).
    """
    slope = ALPHA_CMIN - ALPHA_D * D_OPT_EXP
    c = float(np.exp((ALPHA_CMIN * np.log(CMIN_C) - ALPHA_D * np.log(D_C / D_OPT_COEF)) / slope))
    return ContradictionPoint(
        c_pf_days=c,
        n=float(compute_efficient_n(c)),
        d=float(compute_efficient_data(c)),
        loss=float(loss_cmin(c)),
    )


@dataclass(frozen=True)
class KaplanPriors(NoisePriors):
    """Weakly informative priors for Kaplan et al. (2020) Eq. 1.5,
    L(N, D) = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D.

    - ``log_N_c``, ``log_D_c`` ~ Normal(31, 5): Kaplan's Table 2 has N_c = 6.4e13 (log 31.8) and
      D_c = 1.8e13 (log 30.5); one SD is a factor e^5 ≈ 150.
    - ``alpha_N``, ``alpha_D`` ~ Normal(0.1, 0.2) truncated to > 0 (Kaplan: 0.076, 0.103).
    - ``sigma``, ``df``: see :class:`~jaxscale.laws.law.NoisePriors`.
    """

    log_N_c: Normal = (31.0, 5.0)
    log_D_c: Normal = (31.0, 5.0)
    alpha_N: Normal = (0.1, 0.2)
    alpha_D: Normal = (0.1, 0.2)


@dataclass(frozen=True)
class KaplanStepsPriors(NoisePriors):
    """Priors for Eq. 1.6: ``log_N_c`` ~ Normal(31, 5) as for Eq. 1.5; ``log_S_c`` ~
    Normal(8, 4) (Table 3: S_c = 2.1e3, log 7.6); ``alpha_N`` ~ Normal(0.1, 0.2) and
    ``alpha_S`` ~ Normal(0.5, 0.5) truncated to > 0 (Table 3: 0.077, 0.76)."""

    log_N_c: Normal = (31.0, 5.0)
    log_S_c: Normal = (8.0, 4.0)
    alpha_N: Normal = (0.1, 0.2)
    alpha_S: Normal = (0.5, 0.5)


#: Starts around Kaplan's published values (N_c ~ 1e13-1e14, D_c ~ 1e13, S_c ~ 2e3,
#: exponents 0.05-0.1), spread over several decades and a factor 8 in the exponents.
_EXPONENT_STARTS = (0.03, 0.06, 0.12, 0.24)

LAW_ND: Law[KaplanNDParams] = Law(
    name="kaplan",
    params_type=KaplanNDParams,
    log_loss=log_loss_nd,
    log_scale=(True, True, False, False),
    init_grid=grid(log_nc=steps(20, 40, 5), log_dc=steps(20, 40, 5),
                   alpha_n=_EXPONENT_STARTS, alpha_d=_EXPONENT_STARTS),
    priors=KaplanPriors(),
    formula="L(N, D) = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D",
    citation="Kaplan et al. (2020), Eq. 1.5 / 4.1",
    published={"kaplan": KAPLAN_ND},
)

LAW_NS: Law[KaplanNSParams] = Law(
    name="kaplan-steps",
    params_type=KaplanNSParams,
    log_loss=log_loss_ns,
    log_scale=(True, True, False, False),
    init_grid=grid(log_nc=steps(20, 40, 5), log_sc=steps(0, 20, 5),
                   alpha_n=_EXPONENT_STARTS, alpha_s=_EXPONENT_STARTS),
    priors=KaplanStepsPriors(),
    formula="L(N, S_min) = (N_c/N)^alpha_N + (S_c/S_min)^alpha_S",
    citation="Kaplan et al. (2020), Eq. 1.6 / 5.6",
    inputs=("N", "S_min"),
    published={"kaplan": KAPLAN_NS},
)
