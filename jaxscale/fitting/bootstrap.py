"""Nonparametric bootstrap of an Approach-3 fit (Besiroglu et al. 2024, Section 3).

Resample the runs with replacement R times and refit each resample. A resample is a vector
of counts w (how often each run was drawn), and the refit minimises the count-weighted Huber
sum, so all R refits are the same problem with different weights: they run at once in one
jit-compiled call, each warm-started from the full-data optimum, in coordinates centred on its
own resample (:mod:`jaxscale.fitting.centring`), and with the curvature pairs the full-data fit's
L-BFGS ended with (``FitResult.curvature``; taken as they are, though a resample's centres move
its coordinates slightly: they only shape the steps, not where the refit stops). The refits
are the law's own parameters with a leading axis of R; their spread gives standard errors, the
covariance and 95% intervals of every parameter and of the law's closed-form derived quantities
(for Chinchilla a = beta/(alpha+beta), b = alpha/(alpha+beta), G): normal intervals about the
full-data fit's estimate with the refits' robust scale
(:func:`jaxscale.core.intervals.robust_normal`), on log scale for a positive scale parameter or
closed form, on the natural scale for the exponents and a, b.

**Any number of rows.** The resamples are drawn and refitted :func:`block_size` at a time
(:func:`resample_blocks`: the same counts as drawing them all at once), so the memory they need is
that of one block's counts and drawn rows, O(rows), never O(resamples x rows).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from jaxscale.core import lbfgs
from jaxscale.core.intervals import robust_normal
from jaxscale.core.numerics import float64
from jaxscale.fitting import objective as _objective
from jaxscale.fitting.approach3 import FIT_BYTES_FIXED, FIT_BYTES_PER_ROW, FitResult
from jaxscale.fitting.centring import solve_centred
from jaxscale.fitting.objective import FitData, huber_fn
from jaxscale.laws.draws import Draws, derived_draws
from jaxscale.laws.law import Law
from jaxscale.support.memory import check_memory

N_RESAMPLES = 4000
#: A resample draws ~63% of the runs; the refits see only those, padded to a multiple of this
#: (of :data:`jaxscale.fitting.objective.ROWS_PER_CHUNK` for a table summed in chunks).
ROW_MULTIPLE = 16
#: (resample, row) counts held at once: resamples are drawn and refitted in blocks of
#: BLOCK_TERMS // rows (at least 1), 2^21 counts of 8 bytes, 16 MiB; all 4000 of Epoch's 240 runs at once.
BLOCK_TERMS = 2**21
#: Memory per (resample, row) of a block: its counts, the drawn rows' indices, counts, inputs and
#: log losses, their copies in the compiled program (~80 bytes), rounded up.
BLOCK_BYTES_PER_TERM = 128
#: Warm-started refits stop only on a vanishing gradient or step (no relative-decrease test;
#: failed steps shrink tenfold, so a stalled refit stops within a dozen iterations):
#: from the full-data optimum a loose test stops some refits early, biasing the spread.
#: On Epoch's 240 runs (4000 resamples, seed 0) these refits averaged 38 iterations from an empty
#: memory, and every endpoint of the 95% intervals of A, B, E, alpha, beta lies within 1e-4
#: (absolute) of a reference run to a zero gradient and step; the 20 curvature pairs (for 5
#: coordinates) save 12% of the iterations of 10, the gradient test at 1e-9 rather than 1e-12
#: another 15%. Started from the fit's own pairs (module docstring) they average 18.8, with the
#: same intervals to 3 decimals.
WARM_START = lbfgs.Options(max_iter=1000, ftol=0.0, gtol=1e-9, backtrack=0.1, memory_size=20)
#: Closed forms whose intervals are on the natural scale, as the exponents' are: Chinchilla's
#: allocation exponents a, b, fractions in (0, 1) (every other positive quantity: log scale).
NATURAL_SCALE = ("a", "b")


@dataclass(frozen=True)
class BootstrapResult:
    """Refits of R resamples: ``params`` is the law's NamedTuple with [R] arrays as fields,
    ``vectors`` the fitted unconstrained coordinates, shape (R, p); ``estimates`` the full-data
    fit's value of every quantity, the centres of :meth:`ci95`."""

    law: Law
    params: NamedTuple
    vectors: np.ndarray
    objective: np.ndarray
    converged: np.ndarray
    seed: int
    seconds: float
    estimates: dict[str, float] | None = None

    @property
    def draws(self) -> dict[str, np.ndarray]:
        """Every parameter and closed-form derived quantity, [R] values each."""
        return {**self.params._asdict(), **derived_draws(self.law, self.params)}

    @property
    def parameter_draws(self) -> Draws:
        """The refits as :class:`~jaxscale.laws.draws.Draws`, valid where they converged."""
        return Draws(self.law, self.params, self.converged, "bootstrap")

    @property
    def names(self) -> list[str]:
        return list(self.draws)

    def _ok(self) -> dict[str, np.ndarray]:
        return {k: v[self.converged] for k, v in self.draws.items()}

    def se(self) -> dict[str, float]:
        """Bootstrap standard error of each quantity (sample std, ddof 1) over the resamples
        where it is defined (NaN: undefined in fewer than two; inf if a draw is infinite)."""
        return {k: _std(v[~np.isnan(v)]) for k, v in self._ok().items()}

    def cov(self) -> np.ndarray:
        """Covariance matrix of the quantities, in the order of :attr:`names`."""
        return np.cov(np.stack(list(self._ok().values())))

    def ci95(self) -> dict[str, tuple[float, float]]:
        """95% intervals about the full-data fit's estimates with the scale of the resamples
        where each quantity is defined (:func:`jaxscale.core.intervals.robust_normal`): on log
        scale for a quantity positive at the fit and in every resample, except the law's
        exponents and :data:`NATURAL_SCALE`."""
        if self.estimates is None:
            raise ValueError("the intervals are centred on the fit's estimates: bootstrap(fit) records them")
        natural = {*self.law.exponent_names, *NATURAL_SCALE}
        out = {}
        for k, v in self._ok().items():
            estimate, defined = self.estimates[k], v[~np.isnan(v)]
            log = k not in natural and estimate > 0 and bool(np.all(defined > 0))
            out[k] = robust_normal(estimate, v, log=log)
        return out

    def undefined(self) -> dict[str, float]:
        """The fraction of converged resamples in which a quantity is undefined (NaN: e.g.
        Chinchilla's a, b and G where a refit's exponent is <= 0), for those where any is."""
        fractions = {k: float(np.mean(np.isnan(v))) for k, v in self._ok().items()}
        return {k: f for k, f in fractions.items() if f > 0}

    def table(self) -> dict[str, np.ndarray]:
        """Columns for a CSV of the draws (one row per resample)."""
        return {"resample": np.arange(len(self.objective)), **self.draws,
                "objective": self.objective, "converged": self.converged}


def _std(values: np.ndarray) -> float:
    if values.size < 2:
        return float("nan")
    if np.isinf(values).any():
        return float("inf")
    return float(np.std(values, ddof=1))


def within_group_counts(group: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """[R, n] counts that redraw the rows of each group with replacement, as many as the group
    has, the groups kept (one generator for all: groups in sorted order). Approach 2 resamples
    the points within each isoFLOP budget so; the per-group hyperparameter optima the runs within
    each (N, D) group."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((n_resamples, len(group)))
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        counts[:, rows] = rng.multinomial(len(rows), np.full(len(rows), 1.0 / len(rows)), size=n_resamples)
    return counts


def resample_counts(n_points: int, n_resamples: int, seed: int) -> np.ndarray:
    """(R, n) counts: row r says how often each run appears in resample r (numpy's PCG64
    generator seeded with ``seed``, so identical for a given seed)."""
    return np.concatenate(list(resample_blocks(n_points, n_resamples, seed, n_resamples)))


def resample_blocks(n_points: int, n_resamples: int, seed: int, block: int) -> Iterator[np.ndarray]:
    """:func:`resample_counts` ``block`` resamples at a time (the last block may be smaller): the
    same counts, drawn in the same order from one generator, without holding them all."""
    if n_resamples < 2:
        raise ValueError(f"n_resamples must be >= 2, got {n_resamples}")
    rng = np.random.default_rng(seed)
    for first in range(0, n_resamples, block):
        idx = rng.integers(0, n_points, size=(min(block, n_resamples - first), n_points))
        yield np.stack([np.bincount(row, minlength=n_points) for row in idx]).astype(np.float64)


def block_size(n_points: int) -> int:
    """Resamples drawn and refitted at once for a table of ``n_points`` rows (:data:`BLOCK_TERMS`)."""
    return max(1, BLOCK_TERMS // n_points)


def cluster_counts(clusters: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(R, n) counts that resample whole clusters (e.g. the checkpoints of one run, which are not
    independent draws): each resample draws the distinct values of ``clusters`` with replacement
    (:func:`resample_counts` over them), and every row takes its cluster's count."""
    labels, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    return resample_counts(len(labels), n_resamples, seed)[:, inverse]


def moving_block_counts(series: np.ndarray, order: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(R, n) counts of a moving-block bootstrap (Kunsch 1989) within each series, e.g. the
    checkpoints of each run, whose neighbours share their noise, so that resampling them one by
    one would understate it. The rows of a series, sorted by ``order`` (e.g. the step), are
    rebuilt from blocks of l = ceil(m^(1/3)) consecutive rows (m the series' length; a block
    length of that order is optimal for bootstrap variances: Hall, Horowitz & Jing 1995), drawn
    with replacement among its m - l + 1 blocks until m rows are drawn (the last block cut short)."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((n_resamples, len(series)))
    resample = np.arange(n_resamples)[:, None]
    for label in np.unique(series):
        rows = np.flatnonzero(series == label)
        rows = rows[np.argsort(order[rows], kind="stable")]
        m = len(rows)
        length = math.ceil(round(m ** (1 / 3), 12))
        starts = rng.integers(0, m - length + 1, size=(n_resamples, math.ceil(m / length)))
        drawn = (starts[..., None] + np.arange(length)).reshape(n_resamples, -1)[:, :m]
        np.add.at(counts, (resample, rows[drawn]), 1.0)
    return counts


def drawn_rows(counts: np.ndarray, multiple: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The runs each resample drew, as (R, k) row indices and their (R, k) counts: a run not
    drawn adds nothing to a resample's objective, so the refits skip it. k is the most runs any
    resample drew, rounded up to ``multiple`` (fewer distinct shapes to compile; default
    :data:`ROW_MULTIPLE`, or the objective's chunk of rows for a table summed in chunks) and
    capped at the number of runs; a resample that drew fewer is padded with runs at count 0."""
    n = counts.shape[1]
    if multiple is None:
        multiple = ROW_MULTIPLE if n <= _objective.ROWS_PER_CHUNK else _objective.ROWS_PER_CHUNK
    k = min(n, -(-int(np.max(np.sum(counts > 0, axis=1))) // multiple) * multiple)
    rows = np.argsort(counts == 0, axis=1, kind="stable")[:, :k]  # drawn runs first, in run order
    return rows, np.take_along_axis(counts, rows, axis=1)


@float64
def bootstrap(fit: FitResult, n_resamples: int = N_RESAMPLES, seed: int = 0, *,
              counts: np.ndarray | None = None, options: lbfgs.Options = WARM_START) -> BootstrapResult:
    """Refit ``fit``'s law on ``n_resamples`` resamples of its runs, :func:`block_size` at a time
    (:data:`BLOCK_TERMS` counts at a time: 4000 resamples at once for up to 524 rows).

    ``counts`` (R, n) overrides the resampling (e.g. to share resamples with another
    implementation); by default they come from :func:`resample_counts` with ``seed``. A fit with
    row weights is refitted with each resample's counts times them.
    """
    block = block_size(fit.n_points)
    check_memory(FIT_BYTES_PER_ROW * fit.n_points + FIT_BYTES_FIXED + BLOCK_BYTES_PER_TERM * block * fit.n_points,
                 f"the bootstrap of {fit.n_points:,} rows")
    if counts is None:
        blocks = resample_blocks(fit.n_points, n_resamples, seed, block)
    else:
        counts = np.asarray(counts, np.float64)
        if counts.ndim != 2 or counts.shape[1] != fit.n_points:
            raise ValueError(f"counts must have shape (R, {fit.n_points}); got {counts.shape}")
        blocks = (counts[first:first + block] for first in range(0, len(counts), block))
    if fit.weights is not None:  # a weighted fit: each resample keeps the runs' weights
        blocks = (part * fit.weights for part in blocks)
    t0 = time.perf_counter()
    memory = None if fit.curvature is None else fit.curvature.resized(options.memory_size)
    full = fit.data()
    objective = huber_fn(fit.law, fit.delta, fit.asymmetry)
    refits = [_refits(fit, full, part, objective, options, memory) for part in blocks]
    vectors, value, converged = (np.concatenate(parts) for parts in zip(*refits))
    return BootstrapResult(
        law=fit.law, params=fit.law.from_vector(vectors), vectors=vectors,
        objective=value, converged=converged & np.all(np.isfinite(vectors), axis=1),
        seed=seed, seconds=time.perf_counter() - t0,
        estimates={k: float(v) for k, v in fit.summary().items() if k not in ("objective", "n_points")},
    )


def _refits(fit: FitResult, full: FitData, counts: np.ndarray, objective: Callable, options: lbfgs.Options,
            memory: lbfgs.Memory | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The refits of the resamples ``counts`` (B, n) of the rows ``full``: their law vectors,
    objective values and convergence."""
    starts = np.broadcast_to(fit.vector, (len(counts), fit.law.n_params))
    sol, vectors = solve_centred(objective, fit.law, starts, full.take(*drawn_rows(counts)), options, memory,
                                 batch="both")
    return vectors, sol.value, sol.converged
