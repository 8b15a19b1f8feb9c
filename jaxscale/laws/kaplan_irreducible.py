"""Kaplan's L(N, D) with an irreducible loss: Eq. 1.5 plus the entropy floor E.

Kaplan et al. (2020, Eq. 1.5) write L(N, D) = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D, which
falls to zero as N, D grow. Henighan et al. (2020, "Scaling Laws for Autoregressive Generative
Modeling", Eq. 1.1) add the irreducible loss, L(x) = L_inf + (x_0/x)^alpha, the entropy of the
data that no model removes (Hoffmann et al.'s E). Both at once::

    L(N, D) = E + [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D,
    log L = LSE(log E, alpha_D LSE((alpha_N/alpha_D)(log N_c - log N), log D_c - log D)).

It keeps Eq. 1.5's shared power (more parameters stop helping unless the data grows too) and
Chinchilla's floor. Under C = 6ND its optimum has no closed form: the generic solver of
:mod:`jaxscale.optimum.solver` finds it, and N* ∝ C^a only asymptotically, with a local exponent that
drifts with C.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws import kaplan
from jaxscale.laws.law import Law, NoisePriors, Normal, grid, lse, steps


class KaplanIrreducibleParams(NamedTuple):
    """Parameters of L(N, D) = E + [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D."""

    E: ArrayLike
    N_c: ArrayLike
    D_c: ArrayLike
    alpha_N: ArrayLike
    alpha_D: ArrayLike


def log_loss(p: KaplanIrreducibleParams, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """log L = LSE(log E, log of Kaplan's Eq. 1.5), elementwise."""
    E, *eq_1_5 = p
    return lse(jnp.log(E), kaplan.log_loss_nd(kaplan.KaplanNDParams(*eq_1_5), log_n, log_d))


@dataclass(frozen=True)
class KaplanIrreduciblePriors(NoisePriors):
    """``log_E`` ~ Normal(0.5, 1) (as Chinchilla's E); ``log_N_c``, ``log_D_c`` ~ Normal(20, 8):
    with a floor the reducible part is smaller than Kaplan's whole loss, so the scales sit far
    below Table 2's (log N_c = 31.8) and are given a wide prior; ``alpha_N``, ``alpha_D`` ~
    Normal(0.3, 0.3) truncated to > 0 (with a floor the exponents grow to Chinchilla's ~0.3)."""

    log_E: Normal = (0.5, 1.0)
    log_N_c: Normal = (20.0, 8.0)
    log_D_c: Normal = (20.0, 8.0)
    alpha_N: Normal = (0.3, 0.3)
    alpha_D: Normal = (0.3, 0.3)


LAW: Law[KaplanIrreducibleParams] = Law(
    name="kaplan-irreducible",
    params_type=KaplanIrreducibleParams,
    log_loss=log_loss,
    log_scale=(True, True, True, False, False),
    init_grid=grid(log_e=(-1.0, 0.0, 0.5, 1.0), log_nc=steps(5, 35, 10), log_dc=steps(5, 35, 10),
                   alpha_n=(0.05, 0.15, 0.3, 0.6), alpha_d=(0.05, 0.15, 0.3, 0.6)),
    priors=KaplanIrreduciblePriors(),
    formula="L(N, D) = E + [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D",
    citation="Kaplan et al. (2020), Eq. 1.5, with the irreducible loss of Henighan et al. (2020), Eq. 1.1",
)
