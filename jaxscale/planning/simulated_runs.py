"""Runs tables simulated from a known law: where the truth is known, intervals can be checked.

At given (N, D) the loss is the law's with multiplicative noise, Gaussian on log loss (the
observation model of :mod:`jaxscale.determinacy.curvature`)::

    log L_i = log Lhat(N_i, D_i; theta_true) + sigma z_i,   z_i ~ N(0, 1) independent,

drawn with NumPy's PCG64 generator from an integer seed, so a table is reproducible.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.core.validation import check_positive
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable, from_arrays


@float64
def simulated_runs(law: Law, params: NamedTuple, n: ArrayLike, d: ArrayLike, sigma: float, seed: int) -> RunsTable:
    """A runs table at (``n``, ``d``) with losses of ``law`` at ``params`` times exp(``sigma`` z)."""
    check_positive("sigma", sigma, zero=True)
    n, d = np.asarray(n, np.float64), np.asarray(d, np.float64)
    clean = np.asarray(law.loss(n, d, params))
    z = np.random.default_rng(seed).standard_normal(n.shape)
    return from_arrays(n, d, clean * np.exp(sigma * z))
