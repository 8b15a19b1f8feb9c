"""Approach 2 of Hoffmann et al. (2022): IsoFLOP profiles.

Runs are grouped by training budget C (isoFLOP slices). In each slice the loss is fitted by
a parabola in log N, L = p0 + p1 x + p2 x^2 (x = log N), whose minimum x* = -p1 / (2 p2) gives
N*(C) = e^{x*} and D*(C) = C / (6 N*). Power laws N* = k_N C^a, D* = k_D C^b are then fitted
to those points. All slices are fitted at once (weighted least squares, vmapped over slices);
a slice counts only if it has >= 3 sizes, opens upwards (p2 > 0) and has its minimum inside
the sizes it trained. On Kaplan's basis (Pearce & Song 2024) N is N_\\E and C is C_\\E = 6 N_\\E D.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.fit.allocation_laws import AllocationLaws, allocation_laws
from jaxscale.numerics import float64
from jaxscale.runs import RunsTable


def isoflop_groups(c: np.ndarray, tol_dex: float = 0.05) -> np.ndarray:
    """Label runs by budget: sorted by C, a new group starts where log10 C jumps by more than
    ``tol_dex`` from the group's first run."""
    order = np.argsort(c)
    log_c = np.log10(c[order])
    labels = np.empty(len(c), dtype=int)
    group, first = 0, log_c[0]
    for i, lc in zip(order, log_c):
        if lc - first > tol_dex:
            group, first = group + 1, lc
        labels[i] = group
    return labels


def _parabola(x: jnp.ndarray, y: jnp.ndarray, w: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Weighted least-squares parabola of y in x (x centred on its weighted mean for
    conditioning): returns (x*, L(x*), curvature p2)."""
    centre = jnp.sum(w * x) / jnp.sum(w)
    u = x - centre
    design = jnp.stack([jnp.ones_like(u), u, u * u], axis=-1)
    gram = design.T @ (w[:, None] * design)
    p0, p1, p2 = jnp.linalg.solve(gram, design.T @ (w * y))
    u_star = -p1 / (2 * p2)
    return centre + u_star, p0 + p1 * u_star + p2 * u_star**2, p2


@float64
def fit_approach2(table: RunsTable, *, basis: str = "total", groups: ArrayLike | None = None,
                  tol_dex: float = 0.05) -> AllocationLaws:
    """Approach 2 on the final losses of the runs in ``table`` on ``basis`` ("total" or
    "nonembedding"), isoFLOP slices from ``groups`` (a label per row) or :func:`isoflop_groups`
    with ``tol_dex``."""
    t0 = time.perf_counter()
    (n, c), loss = table.on_basis(basis), table.loss
    labels = isoflop_groups(c, tol_dex) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    weights = (labels[None, :] == np.arange(labels.max() + 1)[:, None]).astype(np.float64)  # [G, rows]
    x = np.log(n)
    x_star, l_star, curvature = jax.vmap(_parabola, in_axes=(None, None, 0))(
        jnp.asarray(x), jnp.asarray(loss), jnp.asarray(weights))
    x_star, l_star, curvature = map(np.asarray, (x_star, l_star, curvature))
    sizes = np.array([len(np.unique(n[labels == g])) for g in range(len(weights))])
    lo = np.array([x[labels == g].min() for g in range(len(weights))])
    hi = np.array([x[labels == g].max() for g in range(len(weights))])
    ok = (sizes >= 3) & (curvature > 0) & (x_star > lo) & (x_star < hi)
    budgets = np.exp(weights @ np.log(c) / weights.sum(axis=1))
    return allocation_laws("approach2", budgets[ok], np.exp(x_star[ok]), l_star[ok], t0)
