"""The named quantities of a sensitivity study: positive scalars of a law's parameters.

Each quantity is a pure JAX function of the law's own parameter NamedTuple, so it can be
differentiated (:mod:`jaxscale.sensitivities.elasticity`), vmapped over bootstrap or posterior
draws (:func:`evaluate_draws`) and chained with a fit's influence
(:mod:`jaxscale.sensitivities.influence`). For a law of (N, D):

- ``N*(C)``, ``D*(C)``: the compute-optimal allocation under C = 6 N D (Pearce & Song Eq. 11),
  N* = argmin_N L(N, C/(6N)) from the generic implicit-differentiation solver of
  :mod:`jaxscale.optimum.solver`; for Chinchilla it is Eq. 14, N* = G (C/6)^a;
- ``L(N, D)``: the loss the law predicts for a planned run;
- ``a``, ``b``: the law's closed-form allocation exponents where it has them (Chinchilla,
  Hoffmann et al. Eq. 4: a = beta/(alpha+beta), b = alpha/(alpha+beta));
- ``reconciled exponent``: for the Chinchilla law (:attr:`jaxscale.laws.law.Law.chinchilla_undefined`), Pearce & Song's Kaplan-basis exponent under an
  embedding relation N_T = N_E + gamma N_E^delta, as the smooth
  :func:`jaxscale.reconciliation.synthetic_curves.window_exponent` over Kaplan's size window (the Step-4 frontier
  exponent is piecewise constant in the parameters).
"""

from __future__ import annotations

from typing import Callable, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.numerics import as_float64, float64
from jaxscale.core.validation import check_positive
from jaxscale.laws.law import Law
from jaxscale.optimum import solver as optimal
from jaxscale.optimum.allocation import check_nd
from jaxscale.reconciliation.pipeline import EmbeddingFit
from jaxscale.reconciliation.synthetic_curves import window_exponent

Quantity = Callable[[NamedTuple], jnp.ndarray]
RECONCILED = "reconciled exponent"


def _allocation(law: Law, budget: float) -> dict[str, Quantity]:
    def n_star(p: NamedTuple) -> jnp.ndarray:
        return optimal.optimal_n(law, p, budget)

    def d_star(p: NamedTuple) -> jnp.ndarray:
        return budget / (6.0 * optimal.optimal_n(law, p, budget))

    return {f"N*({budget:.3g})": n_star, f"D*({budget:.3g})": d_star}


def _planned(law: Law, n: float, d: float) -> dict[str, Quantity]:
    return {f"L({n:.3g}, {d:.3g})": lambda p: law.loss(n, d, p)}


def _exponents(law: Law) -> dict[str, Quantity]:
    # the names of the closed forms, from one evaluation at an arbitrary valid point
    names = [k for k in ("a", "b") if k in law.derived(law.from_vector(np.ones(law.n_params)))]
    return {k: (lambda p, k=k: law.derived(p)[k]) for k in names}


def _reconciled(law: Law, embedding: EmbeddingFit) -> dict[str, Quantity]:
    law.require_chinchilla("the reconciled exponent")
    check_positive("gamma", embedding.gamma)
    check_positive("delta", embedding.delta)
    return {RECONCILED: lambda p: window_exponent(p, embedding.gamma, embedding.delta)}


def law_quantities(law: Law, budgets: tuple[float, ...] = (), planned: tuple[tuple[float, float], ...] = (),
                   embedding: EmbeddingFit | None = None) -> dict[str, Quantity]:
    """N*(C) and D*(C) at each budget C, the loss of each planned run (N, D), the law's a and b
    (if it has closed forms for them) and, given the ``embedding`` relation (gamma, delta) and the
    Chinchilla law, the reconciled exponent; by name, in that order."""
    check_nd(law)
    check_positive("budgets", np.asarray(budgets, float))
    check_positive("planned runs", np.asarray(planned, float))
    out: dict[str, Quantity] = {}
    for budget in budgets:
        out.update(_allocation(law, float(budget)))
    for n, d in planned:
        out.update(_planned(law, float(n), float(d)))
    out.update(_exponents(law))
    if embedding is not None:
        out.update(_reconciled(law, embedding))
    return out


def stacked(quantities: Mapping[str, Quantity]) -> Callable[[NamedTuple], jnp.ndarray]:
    """The quantities as one function of the parameters returning a [Q] vector."""
    fns = tuple(quantities.values())
    return lambda p: jnp.stack([jnp.asarray(f(p)) for f in fns])


@float64
def evaluate_draws(quantities: Mapping[str, Quantity], draws: NamedTuple) -> np.ndarray:
    """[S, Q] values of the quantities at every draw (fields of ``draws`` are [S] arrays)."""
    return np.asarray(jax.jit(jax.vmap(stacked(quantities)))(as_float64(draws)))
