"""Refitting a growing subset of a pool of runs, cheaply: the loop of a sequential study.

A sequential study (and its replay, :mod:`jaxscale.planning.replay`) refits after every run it
adds. Every fit here is of one pool of runs with row weights, 1 for the runs chosen so far and 0
for the rest: a run of weight 0 adds nothing to the Huber sum (Hoffmann et al. 2022 Eq. 3,
:mod:`jaxscale.fitting.objective`) nor to the centring (:mod:`jaxscale.fitting.centring`), so the
data keep one shape and one compiled program serves every refit of every order.

- The first fit is Approach 3 in full (:func:`jaxscale.fitting.approach3.fit_approach3` on the
  chosen runs: the law's grid, the best :data:`~jaxscale.fitting.approach3.SCREEN` minimised).
- Each refit minimises from :data:`REFIT_STARTS` starts in one batched call: the previous optimum,
  warm, with the L-BFGS curvature pairs it ended with (``FitResult.curvature``), and the
  ``REFIT_STARTS - 1`` points of the law's grid of lowest objective on the new weights (the
  screen of :mod:`jaxscale.fitting.approach3`), so that a refit can leave the basin an early fit
  on a few runs settled in. The best converged start wins; the stopping rules are the first
  fit's (:data:`jaxscale.fitting.approach3.MULTISTART`).

Both return a :class:`~jaxscale.fitting.approach3.FitResult` of the chosen runs (with its own
curvature pairs). :func:`pooled_bootstrap` resamples the chosen runs as the bootstrap of such a
fit does (:func:`jaxscale.fitting.bootstrap.bootstrap`), but with counts over the whole pool (0
for the runs not chosen): the bootstrap refits only the runs each resample drew, padded to a
multiple of 16, so on a pool the shapes stay few whatever the number of runs chosen.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import jax
import numpy as np

from jaxscale.core import lbfgs
from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import MULTISTART, FitResult, fit_approach3, screened
from jaxscale.fitting.bootstrap import BootstrapResult, bootstrap, resample_counts
from jaxscale.fitting.centring import solve_centred
from jaxscale.fitting.objective import FitData, fit_data, huber_fn
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Starts of a refit: the previous optimum and the 7 lowest points of the law's grid.
REFIT_STARTS = 8


@dataclass(frozen=True, eq=False)
class Pool:
    """A table of runs whose subsets are fitted with one law: ``data`` holds every run of
    ``runs`` in log space, weighted per fit."""

    law: Law
    runs: RunsTable
    data: FitData

    def weighted(self, chosen: np.ndarray) -> FitData:
        """The pool's data with weight 1 on the ``chosen`` runs ([n] booleans), 0 elsewhere."""
        return self.data._replace(weights=np.asarray(chosen, np.float64))


def pool_of(runs: RunsTable, law: Law = chinchilla.LAW) -> Pool:
    """The pool of ``runs`` for ``law`` (a :class:`Law`)."""
    return Pool(law, runs, fit_data(runs.law_inputs(law.inputs), runs.loss))


def _check_chosen(pool: Pool, chosen: np.ndarray) -> np.ndarray:
    chosen = np.asarray(chosen, bool)
    if chosen.shape != (len(pool.runs),):
        raise ValueError(f"chosen must be {len(pool.runs)} booleans, one per run of the pool; got {chosen.shape}")
    return chosen


def first_fit(pool: Pool, chosen: np.ndarray) -> FitResult:
    """Approach 3 in full on the ``chosen`` runs of the pool."""
    return fit_approach3(pool.runs.select(_check_chosen(pool, chosen)), law=pool.law)


@float64
def refit(pool: Pool, chosen: np.ndarray, previous: FitResult) -> FitResult:
    """The fit of the ``chosen`` runs, warm from ``previous`` (module docstring)."""
    chosen = _check_chosen(pool, chosen)
    law = pool.law
    data = pool.weighted(chosen)
    objective = huber_fn(law)
    grid = screened(objective, np.asarray(law.init_grid(), np.float64), data, REFIT_STARTS - 1)
    starts = np.vstack([previous.vector, grid])
    t0 = time.perf_counter()
    memory = None if previous.curvature is None else previous.curvature.resized(MULTISTART.memory_size)
    sol, vectors = solve_centred(objective, law, starts, data, MULTISTART, memory, slots=REFIT_STARTS,
                                 keep_memory=True)
    best = lbfgs.best_converged(sol)
    vector = vectors[best]
    return FitResult(
        law=law, params=jax.tree.map(float, law.from_vector(vector)), vector=vector, objective=float(sol.value[best]),
        runs=pool.runs.select(chosen), n_starts=len(starts), n_minimised=len(starts),
        n_converged=int(np.sum(sol.converged)), seconds=time.perf_counter() - t0,
        curvature=jax.tree.map(lambda a: a[best], sol.memory),
    )


def pooled_bootstrap(pool: Pool, chosen: np.ndarray, fit: FitResult, resamples: int, seed: int) -> BootstrapResult:
    """The bootstrap of ``fit``, the fit of the ``chosen`` runs of the pool: ``resamples``
    resamples of those runs (:func:`jaxscale.fitting.bootstrap.resample_counts` with ``seed``),
    refitted from ``fit`` with counts over the whole pool (module docstring)."""
    chosen = _check_chosen(pool, chosen)
    counts = np.zeros((resamples, len(pool.runs)))
    counts[:, chosen] = resample_counts(int(chosen.sum()), resamples, seed)
    return bootstrap(dataclasses.replace(fit, runs=pool.runs), counts=counts)
