"""Laws of word2vec analogy error in vector dimension d and training words T.

Mikolov et al. (2013a, Table 2) trained CBOW over a grid of d x T and observed that "we have to
increase both vector dimensionality and the amount of the training data together" (§4.2). Two
laws of the error err = 1 - accuracy, each the same formula as a language-model law with
(N, D) -> (d, T):

- :data:`KAPLAN` (Kaplan et al. 2020, Eq. 1.5), err(d, T) = [(d_c/d)^(alpha_d/alpha_T) + T_c/T]^alpha_T:
  its two terms share one power, so the gain from more dimensions fades unless the data grows too;
- :data:`CHINCHILLA` (Hoffmann et al. 2022, Eq. 2), err(d, T) = E + A d^-alpha + B T^-beta,
  whose additive terms cannot express that interaction.

Both are :meth:`~jaxscale.laws.law.Law.renamed` copies of :data:`jaxscale.laws.kaplan.LAW_ND`
and :data:`jaxscale.laws.chinchilla.LAW`: the formula is written once, in those modules. Their
starts cover errors between 0.3 and 1 and d, T of word2vec grids (d ~ 10-1000, T ~ 1e6-1e9);
their priors are the language-model laws' (by position), not tuned to this domain.
"""

from __future__ import annotations

from typing import NamedTuple

from jax.typing import ArrayLike

from jaxscale.laws import chinchilla, kaplan
from jaxscale.laws.law import grid


class KaplanErrorParams(NamedTuple):
    """Parameters of err(d, T) = [(d_c/d)^(alpha_d/alpha_T) + T_c/T]^alpha_T."""

    d_c: ArrayLike
    T_c: ArrayLike
    alpha_d: ArrayLike
    alpha_T: ArrayLike


KAPLAN = kaplan.LAW_ND.renamed(
    "word2vec-error-kaplan", KaplanErrorParams,
    inputs=("dim", "words"),
    init_grid=grid(log_dc=(-4.0, -1.0, 2.0, 5.0, 8.0), log_tc=(8.0, 12.0, 16.0, 20.0, 24.0),
                   alpha_d=(0.05, 0.15, 0.4, 1.0), alpha_t=(0.05, 0.15, 0.4, 1.0)),
    formula="err(d, T) = [(d_c/d)^(alpha_d/alpha_T) + T_c/T]^alpha_T",
    citation="Kaplan et al. (2020), Eq. 1.5, with (N, D) -> (d, T); Mikolov et al. (2013a), Table 2",
)

CHINCHILLA = chinchilla.LAW.renamed(
    "word2vec-error-chinchilla", chinchilla.ChinchillaParams,
    inputs=("dim", "words"),
    init_grid=grid(a=(-2.0, 0.0, 2.0), b=(0.0, 4.0, 8.0), e=(-2.0, -0.7, -0.2, -0.05),
                   alpha=(0.2, 0.5, 1.0), beta=(0.1, 0.3, 0.6)),
    formula="err(d, T) = E + A d^-alpha + B T^-beta",
    citation="Hoffmann et al. (2022), Eq. 2, with (N, D) -> (d, T); Mikolov et al. (2013a), Table 2",
    closed_forms=None,
)
