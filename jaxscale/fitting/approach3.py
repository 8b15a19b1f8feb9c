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
from jaxscale.fitting.centring import solve_centred
from jaxscale.fitting.design import check_runs
from jaxscale.fitting.objective import DELTA, FitData, fit_data, huber_fn
from jaxscale.laws.law import Law
from jaxscale.laws.registry import law_by_name
from jaxscale.runs.table import RunsTable

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


@dataclass(frozen=True)
class FitResult:
    """The best fit of a law: its own ``params`` (the law's NamedTuple) and ``vector`` (the
    unconstrained coordinates of the optimum); ``runs`` the table fitted; ``objective``
    the weighted Huber sum at the optimum; of the ``n_starts`` starts, ``n_minimised`` passed
    the screen and ``n_converged`` of those converged. ``curvature``: the L-BFGS curvature pairs
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
        return fit_data(self.inputs, self.runs.loss)

    @float64
    def predict(self, *inputs: ArrayLike) -> np.ndarray:
        """The fitted law's loss at its inputs, e.g. ``predict(N, D)``."""
        return np.asarray(self.law.evaluate(self.params, *(jnp.asarray(x, jnp.float64) for x in inputs)))

    @float64
    def summary(self) -> dict[str, Any]:
        """The law's parameters and closed-form derived quantities (a, b, G for Chinchilla),
        the objective and the number of points."""
        derived = {k: float(v) for k, v in self.law.derived(self.params).items()}
        return {**self.params._asdict(), **derived, "objective": self.objective, "n_points": self.n_points}


@functools.cache
def _values(objective: Callable) -> Callable:
    return jax.jit(jax.vmap(objective, in_axes=(0, None)))


def screened(objective: Callable, starts: np.ndarray, data: FitData, keep: int | None) -> np.ndarray:
    """The ``keep`` starts of lowest ``objective`` value (non-finite values last, ties in grid
    order), lowest first; all of them when ``keep`` is None."""
    if keep is None or keep >= len(starts):
        return starts
    values = np.asarray(_values(objective)(jnp.asarray(starts), data))
    order = np.argsort(np.where(np.isfinite(values), values, np.inf), kind="stable")
    return starts[order[:keep]]


@float64
def fit_approach3(
    runs: RunsTable,
    *,
    law: str | Law = "chinchilla",
    grid: ArrayLike | None = None,
    asymmetry: float | None = None,
    delta: float = DELTA,
    options: lbfgs.Options = MULTISTART,
    screen: int | None = SCREEN,
) -> FitResult:
    """Fit ``law`` (a :class:`Law` or its name) to ``runs`` by Huber-loss L-BFGS from every start.

    ``grid`` (k, p) defaults to the law's grid (Epoch's 4500 points for Chinchilla);
    ``asymmetry`` > 1 weighs over-predictions of the loss that many times more (for sweeps
    whose small runs are under-tuned). Drop outliers on the table first
    (:func:`jaxscale.runs.table.drop_highest_loss`; Epoch drops the 5 highest-loss runs).
    Only the ``screen`` starts of lowest objective are minimised (module docstring); ``None``
    minimises every start.
    """
    law = law_by_name(law)
    if asymmetry is not None and not asymmetry > 0:
        raise ValueError(f"asymmetry must be > 0, got {asymmetry}")
    if not delta > 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    if screen is not None and screen < 1:
        raise ValueError(f"screen must be >= 1 or None, got {screen}")
    check_runs(law, runs)
    starts = np.asarray(law.init_grid() if grid is None else grid, dtype=np.float64)
    if starts.ndim != 2 or starts.shape[1] != law.n_params or not np.isfinite(starts).all():
        raise ValueError(
            f"grid must be a finite (k, {law.n_params}) array of {law.vector_names}; got shape {starts.shape}"
        )
    data = fit_data(runs.law_inputs(law.inputs), runs.loss)
    objective = huber_fn(law, delta, asymmetry)
    t0 = time.perf_counter()
    kept = screened(objective, starts, data, screen)
    sol, vectors = solve_centred(objective, law, kept, data, options,
                                 slots=lbfgs.SLOTS if screen is None else SCREEN_SLOTS, keep_memory=True)
    seconds = time.perf_counter() - t0
    best = lbfgs.best_converged(sol)
    vector = vectors[best]
    return FitResult(
        law=law, params=jax.tree.map(float, law.from_vector(vector)), vector=vector, objective=float(sol.value[best]),
        runs=runs, n_starts=len(starts), n_minimised=len(kept), n_converged=int(np.sum(sol.converged)),
        seconds=seconds, delta=delta, asymmetry=asymmetry,
        curvature=jax.tree.map(lambda a: a[best], sol.memory),
    )
