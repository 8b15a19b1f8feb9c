"""Approach 2 of Hoffmann et al. (2022): IsoFLOP profiles.

Runs are grouped by training budget C (isoFLOP slices). In each slice the loss is fitted by
a parabola in log N, L = p0 + p1 x + p2 x^2 (x = log N), whose minimum x* = -p1 / (2 p2) gives
N*(C) = e^{x*} and D*(C) = C / (6 N*). Power laws N* = k_N C^a, D* = k_D C^b are then fitted
to those points. All slices are fitted at once (weighted least squares, vmapped over slices).
On Kaplan's basis (Pearce & Song 2024) N is N_\\E and C is C_\\E = 6 N_\\E D.

**Which slices count.** Each slice is reported (:class:`Slice`) with a status: ``fitted``;
``edge`` (fitted, but its minimum lies beyond the second-smallest or second-largest size
sampled, i.e. between the two outermost sizes: the parabola's vertex there is set mostly by the
one-sided points, the known off-centre bias of isoFLOP fits, so it is flagged); or left out as
``too few sizes`` (< 3), ``opens downward`` (p2 <= 0) or ``outside`` (minimum outside the sizes
sampled, where N* is extrapolated).

**Intervals.** 95% percentile intervals of a and b from a stratified bootstrap: every resample
redraws the points *within each budget* with replacement, refits every parabola (slices whose
resample fails the rules above drop out of that resample) and the power law; all resamples run
in one ``vmap``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.fitting.bootstrap import within_group_counts
from jaxscale.fitting.frontier_laws import (
    FrontierLaws,
    Interval,
    exponent_interval,
    fit_frontier_laws,
    power_laws,
)
from jaxscale.tables.table import RunsTable

MIN_SLICE_SIZES = 3
#: Resamples refitted at once: each holds a [slices, rows] weight matrix, so a checkpoint table of
#: thousands of rows would otherwise materialise gigabytes (1000 resamples of the 4,852-row
#: (Mis)Fitting table: 68 s all at once, 13 s in batches of 32, same intervals).
RESAMPLE_BATCH = 32


class Slice(NamedTuple):
    """One isoFLOP slice: its budget, how many points and sizes it has, the parabola's minimum
    (N*, L*) and curvature, and its status (see the module docstring)."""

    budget: float
    points: int
    sizes: int
    n_star: float
    loss_star: float
    curvature: float
    status: str


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


def parabola_minimum(x: jnp.ndarray, y: jnp.ndarray, w: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Weighted least-squares parabola of y in x (x centred on its weighted mean for
    conditioning): returns (x*, L(x*), curvature p2)."""
    centre = jnp.sum(w * x) / jnp.sum(w)
    u = x - centre
    design = jnp.stack([jnp.ones_like(u), u, u * u], axis=-1)
    gram = design.T @ (w[:, None] * design)
    p0, p1, p2 = jnp.linalg.solve(gram, design.T @ (w * y))
    u_star = -p1 / (2 * p2)
    return centre + u_star, p0 + p1 * u_star + p2 * u_star**2, p2


def _slice_fits(x: jnp.ndarray, y: jnp.ndarray, weights: jnp.ndarray, size_of: jnp.ndarray):
    """Every slice's parabola (``weights`` [G, rows]) and the facts its status needs: the number
    of distinct sizes with weight (``size_of`` [rows, K], one-hot size index) and the range of
    sampled log N."""
    x_star, l_star, p2 = jax.vmap(parabola_minimum, in_axes=(None, None, 0))(x, y, weights)
    used = weights > 0
    sizes = jnp.sum((used.astype(x.dtype) @ size_of) > 0, axis=1)
    lo = jnp.min(jnp.where(used, x, jnp.inf), axis=1)
    hi = jnp.max(jnp.where(used, x, -jnp.inf), axis=1)
    return x_star, l_star, p2, sizes, lo, hi


def _usable(x_star, p2, sizes, lo, hi) -> jnp.ndarray:
    return (sizes >= MIN_SLICE_SIZES) & (p2 > 0) & (x_star > lo) & (x_star < hi)


def _status(x: np.ndarray, used: np.ndarray, x_star: float, p2: float, sizes: int) -> str:
    if sizes < MIN_SLICE_SIZES:
        return "too few sizes"
    if not p2 > 0:
        return "opens downward"
    sampled = np.unique(x[used])
    if not sampled[0] < x_star < sampled[-1]:
        return "outside"
    return "edge" if not sampled[1] <= x_star <= sampled[-2] else "fitted"


@jax.jit
def _bootstrap_exponents(x, y, budgets, weights, size_of, counts):
    """a and b of every resample (``counts`` [R, rows]); NaN where fewer than two slices fit."""
    def one(count):
        x_star, _, p2, sizes, lo, hi = _slice_fits(x, y, weights * count[None, :], size_of)
        ok = _usable(x_star, p2, sizes, lo, hi)
        n_law, d_law = power_laws(budgets, jnp.exp(x_star), ok)
        enough = jnp.sum(ok) >= 2
        return jnp.where(enough, n_law.exponent, jnp.nan), jnp.where(enough, d_law.exponent, jnp.nan)

    return jax.lax.map(one, counts, batch_size=RESAMPLE_BATCH)


@float64
def fit_approach2(table: RunsTable, *, basis: str = "total", groups: ArrayLike | None = None,
                  tol_dex: float = 0.05, bootstrap: int = 0, seed: int = 0) -> FrontierLaws:
    """Approach 2 on the final losses of the runs in ``table`` on ``basis`` ("total" or
    "nonembedding"), isoFLOP slices from ``groups`` (a label per row) or :func:`isoflop_groups`
    with ``tol_dex``; 95% intervals over ``bootstrap`` stratified resamples (none if 0). The
    result's ``slices`` report every slice with its status."""
    t0 = time.perf_counter()
    (n, c), loss = table.on_basis(basis), table.loss
    labels = isoflop_groups(c, tol_dex) if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    weights = (labels[None, :] == np.arange(labels.max() + 1)[:, None]).astype(np.float64)  # [G, rows]
    x = np.log(n)
    size_of = (np.unique(x, return_inverse=True)[1][:, None] == np.arange(len(np.unique(x)))[None, :]).astype(float)
    x_star, l_star, p2, sizes, _, _ = map(np.asarray, _slice_fits(jnp.asarray(x), jnp.asarray(loss),
                                                                   jnp.asarray(weights), jnp.asarray(size_of)))
    budgets = np.exp(weights @ np.log(c) / weights.sum(axis=1))
    slices = [Slice(float(budgets[g]), int(weights[g].sum()), int(sizes[g]), float(np.exp(x_star[g])),
                    float(l_star[g]), float(p2[g]), _status(x, weights[g] > 0, x_star[g], p2[g], sizes[g]))
              for g in range(len(weights))]
    ok = np.array([s.status in ("fitted", "edge") for s in slices])
    laws = fit_frontier_laws("approach2", budgets[ok], np.exp(x_star[ok]), l_star[ok], t0)
    intervals: dict[str, Interval] = {}
    if bootstrap:
        exponents = _bootstrap_exponents(*(jnp.asarray(v) for v in (x, loss, budgets, weights, size_of)),
                                         jnp.asarray(within_group_counts(labels, bootstrap, seed)))
        intervals = dict(zip(("a_interval", "b_interval"), map(exponent_interval, exponents)))
    return replace(laws, slices=tuple(slices), seconds=time.perf_counter() - t0, **intervals)
