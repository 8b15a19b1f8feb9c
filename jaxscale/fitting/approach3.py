"""Approach 3 of Hoffmann et al. (2022): fit the parametric loss to every run at once.

Hoffmann et al. (2022), Eq. 3, as replicated by Besiroglu et al. (2024, Section 2)::

    min_theta  sum_i Huber_delta( log Lhat(N_i, D_i; theta) - log L_i ),

theta the law's unconstrained vector (:meth:`jaxscale.laws.law.Law.to_vector`: for Chinchilla
(log A, log B, log E, alpha, beta)), delta = 1e-3, minimised with L-BFGS from every point of the
law's grid of initialisations (Epoch's 4500 points for Chinchilla), the best converged result
winning. Any :class:`~jaxscale.laws.law.Law` is fitted the same way, and the fit returns its own
parameters.

**The screen.** Every start of the grid is first ranked by its objective value (one vectorised
evaluation of all 4500), and only the :data:`SCREEN` lowest are minimised, all in one
jit-compiled call (:mod:`jaxscale.core.lbfgs`), in the centred coordinates of
:mod:`jaxscale.fitting.centring`. The rule is empirical, so it was checked against minimising every
start, which ``screen=None`` still does: on Epoch's 240 runs and 40 bootstrap resamples of them,
the lowest-ranked start that reaches the full grid's optimum (to 1e-12 of its value) was at most
26th of 4500 for the Chinchilla law; on 10 resamples at most 7th of 900 for the tied law, 5th of
400 for Kaplan's, 47th of 1024 for Kaplan's law with an irreducible term; each time the start
ranked first reached the optimum to 1e-10 in absolute value or the second did
(``tests/fitting/test_screen.py`` repeats the comparison on Epoch's runs).

**Any number of rows.** The screen evaluates :data:`SCREEN_TERMS` (start, row) pairs at a time
and every objective sums its rows in chunks (:func:`jaxscale.fitting.objective.row_sum`), so the
memory beyond the table is O(starts + rows), not O(starts x rows). Every evaluation still costs
O(rows): on a million rows the 4500-start screen and 128 starts times ~80 iterations take tens of
minutes of CPU (the unchunked path took 127 s for 100,000 rows, ``benchmarks/bench_fit_scale.py``),
so a table of more than :data:`SUBSAMPLE` rows is screened on a subsample: the grid is ranked and the kept starts
minimised on :data:`SUBSAMPLE` rows drawn at random without replacement (seed 0), and the best
distinct optima found there (at most :data:`POLISH`: the best, and those the subsample cannot tell
from it, :func:`contenders`) are minimised again on every row, one after the other
(:data:`POLISHING`: to a vanishing gradient or step), the lowest winning. A table of up to
:data:`SUBSAMPLE` rows is fitted exactly as before. The rule was fixed before it was tried, and is
checked against the full path (the whole grid ranked and minimised on every row) on 2,000 and
10,000 synthetic rows subsampled to 512 and 2048, and on Epoch's runs subsampled to 128
(``tests/fitting/test_scale.py``): the same optimum to 1e-10 of the objective. On 1M synthetic rows
the subsample's best optimum was its only contender (three others, 4.5 times its objective there,
were not polished: each would have cost ~100 iterations on every row to reach the same optimum).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core import lbfgs
from jaxscale.core.numerics import float64
from jaxscale.fitting import objective as _objective
from jaxscale.fitting.centring import solve_centred
from jaxscale.fitting.determinable import check_runs
from jaxscale.fitting.objective import DELTA, FitData, fit_data, huber_fn, huber_terms
from jaxscale.laws import chinchilla
from jaxscale.laws.draws import derived_draws
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable
from jaxscale.support.compiled_programs import persistent_jit
from jaxscale.support.memory import check_memory

#: Multistart tolerances: a start stops when a step lowers the objective by <= 1e-9 of its
#: value or the gradient norm is <= 1e-12. scipy's L-BFGS-B default stops at 2.2e-9 of
#: max(|f|, 1), i.e. 2e-6 of a Huber sum near 1e-3, which leaves visible error; here the
#: best of the starts (hundreds reach it) agrees with a tolerance-free run to ~1e-18. Starts
#: still moving after 300 iterations are on plateaus of the objective (a term switched off)
#: and are reported as not converged.
MULTISTART = lbfgs.Options(max_iter=300, ftol=1e-9, gtol=1e-12)
#: Starts minimised after the screen (module docstring), on a pool of SCREEN_SLOTS workers
#: (fewer workers idle while the last, slowest starts finish).
SCREEN = 128
SCREEN_SLOTS = 32
#: (start, row) pairs the screen evaluates at once: 2^18 terms of 8 bytes, 2 MiB per intermediate.
SCREEN_TERMS = 2**18
#: Tables of more rows are screened on this many rows drawn at random (module docstring).
SUBSAMPLE = 16384
#: At most POLISH distinct optima of the subsample are minimised again on every row, with the
#: tolerances POLISHING: from a nearby optimum it stops only on a vanishing gradient or step (as
#: the bootstrap's refits, :data:`jaxscale.fitting.bootstrap.WARM_START`), so the optimum it
#: reports is as tight as that of the best of the full path's starts. Two optima are distinct when
#: a coordinate of their centred vectors differs by more than DISTINCT. Beyond the best, only those
#: the subsample cannot tell from it are (:func:`contenders`, CONTENDER_Z standard errors).
POLISH = 4
POLISHING = lbfgs.Options(max_iter=300, ftol=0.0, gtol=1e-9, backtrack=0.1)
DISTINCT = 1e-4
CONTENDER_Z = 5.0
#: Memory of a fit beyond the table, as estimated before it starts: per row, its float64 inputs,
#: log loss and weight on the host, the copies handed to the compiled programs and the padded
#: chunks (~160 bytes); fixed, the programs' working sets (the screen's 2^18 terms, 32 starts x
#: 16,384 rows minimised). ``benchmarks/bench_fit_scale.py`` measured less: 2.24 GiB peak for
#: loading and fitting 5.75M rows, of which loading alone takes ~1.8 GiB.
FIT_BYTES_PER_ROW = 256
FIT_BYTES_FIXED = 2**28


@dataclass(frozen=True)
class FitResult:
    """The best fit of a law: its own ``params`` (the law's NamedTuple) and ``vector`` (the
    unconstrained coordinates of the optimum); ``runs`` the table fitted; ``objective``
    the weighted Huber sum at the optimum; of the ``n_starts`` starts, ``n_minimised`` passed
    the screen and ``n_converged`` of those converged (on the screen's subsample, for a table of
    more than :data:`SUBSAMPLE` rows). ``method``: ``approach3``, or ``vpnls`` for a fit by variable
    projection (:mod:`jaxscale.fitting.vpnls`). ``weights``: the row weights of the objective (None: all 1).
    ``curvature``: the L-BFGS curvature pairs
    the best start ended with, in the centred coordinates of these runs
    (:mod:`jaxscale.fitting.centring`); refits of resampled runs start from them."""

    law: Law
    params: NamedTuple
    vector: np.ndarray
    objective: float
    runs: RunsTable
    n_starts: int
    n_minimised: int
    n_converged: int
    seconds: float
    delta: float = DELTA
    asymmetry: float | None = None
    curvature: lbfgs.Memory | None = None
    method: str = "approach3"
    weights: np.ndarray | None = None

    @property
    def n_points(self) -> int:
        return len(self.runs)

    def nonpositive_exponents(self) -> dict[str, float]:
        """The law's exponents that the fit put at or below 0 (outside
        :meth:`~jaxscale.laws.law.Law.exponents_positive`: no compute-optimal allocation), by name."""
        values = {k: float(getattr(self.params, k)) for k in self.law.exponent_names}
        return {k: v for k, v in values.items() if v <= 0}

    def infinite_parameters(self) -> list[str]:
        """The law's parameters that the fit ran off to infinity (a scale whose log passed float64's
        range): the objective still fell there, so the runs settle no optimum, by name."""
        return [k for k, v in zip(self.law.param_names, self.params) if not np.isfinite(v)]

    def check_settled(self, use: str) -> None:
        """Refuse (ValueError) to ``use`` a fit with :meth:`infinite_parameters`, saying why."""
        infinite = self.infinite_parameters()
        if infinite:
            raise ValueError(f"the Approach-3 fit ran {' and '.join(infinite)} off to infinity on {self.n_points} "
                             f"runs: they settle no optimum to {use} (add runs; `jaxscale fit` prints the fit)")

    @property
    def inputs(self) -> tuple[np.ndarray, ...]:
        """The law's inputs of every run fitted, e.g. (N, D)."""
        return self.runs.law_inputs(self.law.inputs)

    def data(self) -> FitData:
        return fit_data(self.inputs, self.runs.loss, self.weights)

    @float64
    def predict(self, *inputs: ArrayLike) -> np.ndarray:
        """The fitted law's loss at its inputs, e.g. ``predict(N, D)``."""
        return np.asarray(self.law.evaluate(self.params, *(jnp.asarray(x, jnp.float64) for x in inputs)))

    @float64
    def summary(self) -> dict[str, Any]:
        """The law's parameters and closed-form derived quantities (a, b, G for Chinchilla),
        the objective and the number of points."""
        one = jax.tree.map(np.atleast_1d, self.params)  # as one draw: one compiled program, not one per operation
        derived = {k: float(v[0]) for k, v in derived_draws(self.law, one).items()}
        return {**self.params._asdict(), **derived, "objective": self.objective, "n_points": self.n_points}


@functools.cache
def _values(objective: Callable, batch: int) -> Callable:
    """``objective`` at every start, ``batch`` starts at a time (jit-compiled)."""
    return persistent_jit(lambda starts, data: jax.lax.map(lambda theta: objective(theta, data), starts,
                                                           batch_size=batch), key=(_values, objective, batch))


def screened(objective: Callable, starts: np.ndarray, data: FitData, keep: int | None) -> np.ndarray:
    """The ``keep`` starts of lowest ``objective`` value (non-finite values last, ties in grid
    order), lowest first; all of them when ``keep`` is None. :data:`SCREEN_TERMS` (start, row)
    pairs are evaluated at a time."""
    if keep is None or keep >= len(starts):
        return starts
    batch = min(len(starts), max(1, SCREEN_TERMS // min(len(data.log_y), _objective.ROWS_PER_CHUNK)))
    values = np.asarray(_values(objective, batch)(starts, data))
    order = np.argsort(np.where(np.isfinite(values), values, np.inf), kind="stable")
    return starts[order[:keep]]


def subsample(data: FitData, rows: int | None = None) -> FitData | None:
    """``rows`` (default :data:`SUBSAMPLE`) rows of ``data`` drawn at random without replacement
    (NumPy's PCG64, seed 0), in table order; None when it has no more rows than that."""
    rows = SUBSAMPLE if rows is None else rows
    n = len(data.log_y)
    if n <= rows:
        return None
    drawn = np.sort(np.random.default_rng(0).choice(n, rows, replace=False))
    return data.take(drawn, np.asarray(data.weights)[drawn])


def distinct(vectors: np.ndarray, order: np.ndarray, count: int, tolerance: float = DISTINCT) -> np.ndarray:
    """Indices of the first ``count`` of ``vectors`` taken in ``order`` whose every predecessor
    taken differs from it by more than ``tolerance`` in some coordinate."""
    taken: list[int] = []
    for i in order:
        if len(taken) == count:
            break
        if all(np.max(np.abs(vectors[i] - vectors[j])) > tolerance for j in taken):
            taken.append(int(i))
    return np.asarray(taken, dtype=int)


def contenders(terms: np.ndarray, n_rows: int) -> np.ndarray:
    """Which of k optima, given their per-row objective terms (k, m) on a subsample of m of
    ``n_rows`` rows (the best optimum first), the subsample cannot tell from the best: the mean
    of their paired differences to the best is below :data:`CONTENDER_Z` standard errors (sample
    standard deviation / sqrt(m), times the finite-population factor sqrt(1 - m / n_rows))."""
    differences = terms - terms[0]
    m = terms.shape[1]
    se = np.std(differences, axis=1, ddof=1) / np.sqrt(m) * np.sqrt(1.0 - m / n_rows)
    return np.mean(differences, axis=1) <= CONTENDER_Z * se


@functools.cache
def _terms(law: Law, delta: float, asymmetry: float | None) -> Callable:
    """The per-row objective terms at each of several vectors (jit-compiled)."""
    return jax.jit(jax.vmap(functools.partial(huber_terms, law=law, delta=delta, asymmetry=asymmetry),
                            in_axes=(0, None)))


def _polished(law: Law, objective: Callable, terms: Callable, sol: lbfgs.Solution, vectors: np.ndarray,
              sample: FitData, data: FitData) -> tuple[lbfgs.Solution, np.ndarray]:
    """Of the optima found on the subsample ``sample`` (``sol``, centred on it, and ``vectors``,
    the law's), the best :data:`POLISH` distinct converged ones that are :func:`contenders`
    (per-row ``terms``), minimised on all of ``data`` one after the other from the best one's
    curvature pairs, their gradient changes scaled to all rows (an objective summed over rows has
    a Hessian proportional to their weight)."""
    value = lbfgs.ranked(sol)
    order = np.argsort(value, kind="stable")
    picked = distinct(sol.theta, order[np.isfinite(value[order])], POLISH)
    theta = vectors[picked]
    theta = theta[contenders(np.asarray(terms(theta, sample)), len(data.log_y))]
    scale = float(np.sum(data.weights) / np.sum(sample.weights))
    pairs = lbfgs.Memory(sol.memory.s[picked[0]], sol.memory.y[picked[0]] * scale).resized(POLISHING.memory_size)
    return solve_centred(objective, law, theta, data, POLISHING, pairs, slots=1, keep_memory=True)


@float64
def fit_approach3(
    runs: RunsTable,
    *,
    law: Law = chinchilla.LAW,
    grid: ArrayLike | None = None,
    asymmetry: float | None = None,
    delta: float = DELTA,
    options: lbfgs.Options = MULTISTART,
    screen: int | None = SCREEN,
    weights: ArrayLike | None = None,
) -> FitResult:
    """Fit ``law`` (a :class:`Law`) to ``runs`` by Huber-loss L-BFGS from every start.

    ``grid`` (k, p) defaults to the law's grid (Epoch's 4500 points for Chinchilla);
    ``asymmetry`` > 1 weighs over-predictions of the loss that many times more (for sweeps
    whose small runs are under-tuned). Drop outliers on the table first
    (:func:`jaxscale.tables.table.drop_highest_loss`; Epoch drops the 5 highest-loss runs).
    Only the ``screen`` starts of lowest objective are minimised (module docstring); ``None``
    minimises every start. ``weights`` (one per run, finite and >= 0; default all 1) weigh each
    run's Huber term.
    """
    if asymmetry is not None and not asymmetry > 0:
        raise ValueError(f"asymmetry must be > 0, got {asymmetry}")
    if not delta > 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    if screen is not None and screen < 1:
        raise ValueError(f"screen must be >= 1 or None, got {screen}")
    check_runs(law, runs)
    if weights is not None:
        weights = np.asarray(weights, np.float64)
        if weights.shape != (len(runs),) or not np.all(np.isfinite(weights) & (weights >= 0)) or not weights.any():
            raise ValueError(f"weights must be {len(runs)} finite values >= 0, not all 0; got shape {weights.shape}")
    starts = np.asarray(law.init_grid() if grid is None else grid, dtype=np.float64)
    if starts.ndim != 2 or starts.shape[1] != law.n_params or not np.isfinite(starts).all():
        raise ValueError(
            f"grid must be a finite (k, {law.n_params}) array of {law.vector_names}; got shape {starts.shape}"
        )
    check_memory(FIT_BYTES_PER_ROW * len(runs) + FIT_BYTES_FIXED, f"the Approach-3 fit of {len(runs):,} rows")
    data = fit_data(runs.law_inputs(law.inputs), runs.loss, weights)
    objective = huber_fn(law, delta, asymmetry)
    t0 = time.perf_counter()
    sample = subsample(data)
    kept = screened(objective, starts, data if sample is None else sample, screen)
    slots = lbfgs.SLOTS if screen is None else SCREEN_SLOTS
    sol, vectors = solve_centred(objective, law, kept, data if sample is None else sample, options,
                                 slots=slots, keep_memory=True)
    n_converged = int(np.sum(sol.converged))
    if sample is not None:
        sol, vectors = _polished(law, objective, _terms(law, delta, asymmetry), sol, vectors, sample, data)
    seconds = time.perf_counter() - t0
    best = lbfgs.best_converged(sol)
    vector = vectors[best]
    return FitResult(
        law=law, params=jax.tree.map(float, law.from_vector(vector)), vector=vector, objective=float(sol.value[best]),
        runs=runs, n_starts=len(starts), n_minimised=len(kept), n_converged=n_converged,
        seconds=seconds, delta=delta, asymmetry=asymmetry,
        curvature=jax.tree.map(lambda a: a[best], sol.memory), weights=weights,
    )
