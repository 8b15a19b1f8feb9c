"""Pearce & Song Step 4: synthetic training curves and the compute-efficient frontier.

Synthetic curves from Eq. 15 for models spanning Kaplan's sizes (N_\\E from ≈790 to ≈1.58e9,
"768 to 1.5 billion non-embedding parameters") at a fixed aspect ratio, i.e. N_T = N_\\E + γN_\\E**δ
(Eq. 7/10). Each model's loss is evaluated on a grid of tokens D; its curve is drawn against the
total budget C_T = 6 N_T D and against the non-embedding budget C_\\E = 6 N_\\E D (Eqs. 3-4).
Chinchilla's Method 1 (:func:`jaxscale.core.frontier.compute_frontier`) picks the best model at each
budget, and a power law N* ∝ C^a is fitted on each basis (Pearce & Song Eqs. 18-19: a ≈ 0.78 on
the non-embedding basis with Epoch's parameters, 0.74 with Chinchilla's; ≈ β/(α+β) on the total
basis).

Everything below is one pure JAX computation of the law parameters and γ, so it can be jitted
and vmapped over posterior draws (:mod:`jaxscale.inference`). The grids are static settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.frontier import Frontier, compute_frontier
from jaxscale.core.power_law import PowerLaw, fit_power_law
from jaxscale.laws import pearce_song
from jaxscale.laws.chinchilla import ChinchillaParams
from jaxscale.optimum import solver as optimal


@dataclass(frozen=True)
class SimulationConfig:
    """Grids of the Step-4 simulation (log10 ranges).

    The budget windows are where Kaplan's 20 sizes cover the frontier on each basis: from the
    budget at which the smallest model stops being optimal to where the largest would need more
    than its size range. They follow the authors' published analysis.
    """

    n_models: int = 20
    log10_n_nonembedding: tuple[float, float] = (2.9, 9.2)
    log10_tokens: tuple[float, float] = (6.0, 25.0)
    n_tokens: int = 1000
    log10_budget_total: tuple[float, float] = (13.4, 20.7)
    log10_budget_nonembedding: tuple[float, float] = (12.95, 20.7)
    n_budgets: int = 100

    def model_sizes(self) -> np.ndarray:
        return np.logspace(*self.log10_n_nonembedding, self.n_models)

    def tokens(self) -> np.ndarray:
        return np.logspace(*self.log10_tokens, self.n_tokens)


DEFAULT_CONFIG = SimulationConfig()


class SyntheticCurves(NamedTuple):
    """Loss of every model at every token count (Eq. 15)."""

    n_nonembedding: jnp.ndarray  # [M]
    n_total: jnp.ndarray  # [M]
    tokens: jnp.ndarray  # [P]
    loss: jnp.ndarray  # [M, P]


class BasisFrontier(NamedTuple):
    """Method-1 frontier on one basis and the power law fitted to it."""

    frontier: Frontier
    n_opt: jnp.ndarray  # [G] size (on this basis) of the best model at each budget
    fit: PowerLaw


class Step4(NamedTuple):
    curves: SyntheticCurves
    total: BasisFrontier  # N_T* against C_T
    nonembedding: BasisFrontier  # N_\E* against C_\E


class FrontierExponents(NamedTuple):
    total: jnp.ndarray  # a in N_T* ∝ C_T^a
    nonembedding: jnp.ndarray  # a in N_\E* ∝ C_\E^a


def synthetic_curves(p: ChinchillaParams, gamma: ArrayLike, delta: ArrayLike = pearce_song.DELTA_KAPLAN,
                     config: SimulationConfig = DEFAULT_CONFIG) -> SyntheticCurves:
    """Eq. 15 on the grid: L = A/(N + γN**δ)**α + B/D**β + E for each size and token count."""
    n = jnp.asarray(config.model_sizes())
    d = jnp.asarray(config.tokens())
    loss = pearce_song.loss(n[:, None], d[None, :], pearce_song.with_embedding(p, gamma, delta))
    n_total = n + gamma * jnp.power(n, delta)
    return SyntheticCurves(n_nonembedding=n, n_total=n_total, tokens=d, loss=loss)


def _basis_frontier(n_basis: jnp.ndarray, curves: SyntheticCurves,
                    log10_budgets: tuple[float, float], n_budgets: int) -> BasisFrontier:
    log_c_curves = jnp.log(6.0 * n_basis[:, None] * curves.tokens[None, :])
    grid = jnp.asarray(np.log(np.logspace(*log10_budgets, n_budgets)))
    frontier = compute_frontier(log_c_curves, curves.loss, grid)
    n_opt = n_basis[frontier.best]
    fit = fit_power_law(jnp.exp(frontier.log_c), n_opt, weights=frontier.valid)
    return BasisFrontier(frontier=frontier, n_opt=n_opt, fit=fit)


def simulate_step4(p: ChinchillaParams, gamma: ArrayLike, delta: ArrayLike = pearce_song.DELTA_KAPLAN,
                   config: SimulationConfig = DEFAULT_CONFIG) -> Step4:
    """Synthetic curves, both frontiers and their local power-law fits."""
    curves = synthetic_curves(p, gamma, delta, config)
    return Step4(
        curves=curves,
        total=_basis_frontier(curves.n_total, curves, config.log10_budget_total, config.n_budgets),
        nonembedding=_basis_frontier(
            curves.n_nonembedding, curves, config.log10_budget_nonembedding, config.n_budgets
        ),
    )


def frontier_exponents(p: ChinchillaParams, gamma: ArrayLike, delta: ArrayLike = pearce_song.DELTA_KAPLAN,
                       config: SimulationConfig = DEFAULT_CONFIG) -> FrontierExponents:
    """The fitted exponents of Step 4 on the total and non-embedding bases (jit/vmap-able over
    ``p``, ``gamma`` and ``delta``; ``config`` is static)."""
    result = simulate_step4(p, gamma, delta, config)
    return FrontierExponents(total=result.total.fit.exponent,
                             nonembedding=result.nonembedding.fit.exponent)


def continuous_optimum_exponent(p: ChinchillaParams, gamma: ArrayLike = pearce_song.GAMMA_PAPER,
                                delta: ArrayLike = pearce_song.DELTA_KAPLAN,
                                config: SimulationConfig = DEFAULT_CONFIG) -> jnp.ndarray:
    """The Kaplan-basis exponent without the discreteness of the simulated models: the power law
    fitted to the continuous optimum N*_\\E(C_\\E) of Eq. 15 (generic solver, no closed form)
    over the Step-4 non-embedding budget window. Differentiable in ``p``, ``gamma`` and ``delta``
    (the frontier exponent is piecewise constant in them); :func:`window_exponent` is the same
    fit over the budgets implied by the size window, differentiable in its bounds too."""
    q = pearce_song.with_embedding(p, gamma, delta)
    c = jnp.logspace(*config.log10_budget_nonembedding, config.n_budgets)
    return fit_power_law(c, optimal.optimal_n(pearce_song.LAW, q, c)).exponent


def kaplan_size_window(config: SimulationConfig = DEFAULT_CONFIG) -> np.ndarray:
    """(log N_min, log N_max), natural logs of the smallest and largest simulated N_\\E."""
    return np.log(10.0) * np.asarray(config.log10_n_nonembedding)


def window_exponent(p: ChinchillaParams, gamma: ArrayLike = pearce_song.GAMMA_PAPER,
                    delta: ArrayLike = pearce_song.DELTA_KAPLAN, log_n_window: ArrayLike | None = None,
                    n_budgets: int = DEFAULT_CONFIG.n_budgets) -> jnp.ndarray:
    """The Kaplan-basis exponent as a smooth function of the size window of Step 4 as well.

    Step 4 fits the frontier of models from N_min to N_max; its exponent is piecewise constant in
    everything, the window's bounds included. Here the window enters through the budgets at
    which its ends are compute-optimal under Eq. 15, C_lo = C*(N_min) and C_hi = C*(N_max)
    (Eq. 16, from the generic solver :func:`jaxscale.optimum.solver.optimal_log_compute`), and the
    exponent is the least-squares slope of the continuous optimum over K = ``n_budgets`` budgets
    equally spaced in log C between them::

        log C_k = log C_lo + k/(K-1) (log C_hi - log C_lo),   a = slope of log N*_\\E(C_k) on log C_k.

    So N*_\\E ranges exactly over [N_min, N_max], and ``a`` is differentiable in ``p``,
    ``gamma``, ``delta`` and ``log_n_window`` = (log N_min, log N_max) (default: Kaplan's sizes,
    :func:`kaplan_size_window`) by implicit differentiation of both the window's ends and the
    optimum; there is no smoothing width to choose. A and B scale C*(N) by one factor
    (βB/(αA))^(1/β) (Eq. 16), which moves the window with the curve, so ``a`` depends on neither
    of them (nor on E), unlike :func:`continuous_optimum_exponent` over fixed budgets."""
    window = kaplan_size_window() if log_n_window is None else log_n_window
    q = pearce_song.with_embedding(p, gamma, delta)
    log_c_lo, log_c_hi = optimal.optimal_log_compute(pearce_song.LAW, q, jnp.asarray(window))
    log_c = log_c_lo + jnp.linspace(0.0, 1.0, n_budgets) * (log_c_hi - log_c_lo)
    return fit_power_law(jnp.exp(log_c), optimal.optimal_n(pearce_song.LAW, q, jnp.exp(log_c))).exponent
