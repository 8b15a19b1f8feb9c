"""Posterior-draw quantities beyond the law's own: one value per draw (jit + vmap).

Every function takes the draws as one parameter NamedTuple whose fields are arrays of shape [S]
(see :func:`jaxscale.inference.law_model.params_of`). The law's closed-form quantities (a, b, G),
the compute-optimal allocation N*(C), D*(C) and the loss of a planned run under every draw are in
:mod:`jaxscale.optimum.allocation`, shared with fits and bootstraps. Here:

- the reconciled coefficient (Pearce & Song Section 2, Step 4): for each draw, Kaplan-range
  synthetic curves from Eq. 15, Chinchilla's Method-1 frontier and the power law fitted to it,
  on the non-embedding basis (N*_\\E ∝ C_\\E^g, the paper's 0.74-0.78) and on the total basis
  (≈ beta/(alpha+beta)). This is :func:`jaxscale.reconciliation.synthetic_curves.frontier_exponents`, the computation
  behind ``jaxscale reconcile``, vmapped over draws and over gamma (fixed at the paper's value or
  drawn with delta from the bootstrap uncertainty of its Table A9 fit, :func:`embedding_draws`).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.numerics import float64
from jaxscale.core.validation import check_positive
from jaxscale.laws import pearce_song, table_a9
from jaxscale.laws.chinchilla import ChinchillaParams
from jaxscale.reconciliation.pipeline import EmbeddingFit, fit_gamma_delta
from jaxscale.reconciliation.synthetic_curves import (
    DEFAULT_CONFIG,
    SimulationConfig,
    frontier_exponents,
)

#: Draws of the Step-4 simulation evaluated at once (bounds memory: ~2 MB per draw).
RECONCILE_BATCH = 64


class ReconciledExponents(NamedTuple):
    """[S] Step-4 frontier exponents: the Kaplan-basis (non-embedding) one and the total one."""

    nonembedding: np.ndarray
    total: np.ndarray


def _numpy(tree):
    return jax.tree.map(np.asarray, tree)


@float64
def reconciled_exponents(draws: ChinchillaParams, embedding: EmbeddingFit | None = None,
                         config: SimulationConfig = DEFAULT_CONFIG) -> ReconciledExponents:
    """Pearce & Song Step 4 for every draw: the exponent of the Method-1 frontier fitted on
    Kaplan's model range, on the non-embedding basis (N*_\\E ∝ C_\\E^g) and the total basis.

    ``embedding`` gives N_T = N_\\E + gamma N_\\E^delta: ``None`` for the paper's Eq. 15
    (gamma = 47491, delta = 1/3), scalars shared by all draws, or [S] arrays paired with the
    draws (e.g. :func:`embedding_draws`, which carries the Step-1 fit uncertainty)."""
    embedding = embedding or EmbeddingFit(pearce_song.GAMMA_PAPER, pearce_song.DELTA_KAPLAN)
    check_positive("gamma", embedding.gamma)
    check_positive("delta", embedding.delta)
    size = jnp.shape(draws.alpha)[0]
    gamma, delta = (jnp.broadcast_to(jnp.asarray(v, jnp.float64), (size,)) for v in embedding)
    return _numpy(_reconciled_map(draws, gamma, delta, config))


@partial(jax.jit, static_argnames="config")
def _reconciled_map(draws: ChinchillaParams, gamma: jnp.ndarray, delta: jnp.ndarray,
                    config: SimulationConfig) -> ReconciledExponents:
    """Step 4 over draws in batches of RECONCILE_BATCH (compiled once per config and shape)."""
    def one(args: tuple[ChinchillaParams, jnp.ndarray, jnp.ndarray]) -> ReconciledExponents:
        e = frontier_exponents(*args, config)
        return ReconciledExponents(nonembedding=e.nonembedding, total=e.total)

    return jax.lax.map(one, (draws, gamma, delta), batch_size=RECONCILE_BATCH)


@float64
def embedding_draws(size: int, seed: int = 0) -> EmbeddingFit:
    """Bootstrap draws of (gamma, delta): Pearce & Song's Step-1 fit of
    N_T = N_\\E + gamma N_\\E^delta (:func:`jaxscale.reconciliation.pipeline.fit_gamma_delta`) to Table
    A9's 50 configurations resampled with replacement, ``size`` times (vmapped). gamma and delta
    are strongly correlated, so they are drawn (and must be used) as pairs."""
    n_total = jnp.asarray(table_a9.total_params(), jnp.float64)
    n_ne = jnp.asarray(table_a9.nonembedding_params(), jnp.float64)
    rows = n_total.shape[0]
    idx = jax.random.randint(jax.random.PRNGKey(seed), (size, rows), 0, rows)
    return _numpy(jax.jit(jax.vmap(lambda i: fit_gamma_delta(n_total[i], n_ne[i])))(idx))
