"""Replaying a scaling study: how much compute each way of ordering runs needs to pin a target down.

A pool of runs that were all trained (a real table, or one simulated from a known law,
:mod:`jaxscale.planning.simulated_runs`) is replayed as if the study were being run: it starts from a
set of runs, and a *strategy* picks the next run from those that remain, one at a time. Each
pick pays the run's FLOP (C = 6 N D as the table gives it), the law is refitted on the runs
chosen so far (:mod:`jaxscale.planning.refits`: the first fit in full, then warm refits), and the
step records the cumulative compute (the start set's included), the target's interval
(:func:`jaxscale.planning.target_intervals.bootstrap_interval`) and the prediction error on the
*holdout*: the runs above :data:`HOLDOUT_COMPUTE` FLOP not yet chosen, as the mean absolute
relative error of the fitted law's loss, mean |Lhat / L - 1| (undefined once none is left).

The strategies (:data:`STRATEGIES`):

- ``design``: the remaining run of largest expected variance reduction of the target per FLOP,
  Eq. (1) of :mod:`jaxscale.planning.selection`, under the robust belief at the current fit
  (:mod:`jaxscale.planning.ratio_noise`: the sandwich covariance of the Huber fit of the chosen
  runs with the law's priors, and each remaining run observed with its own noise, larger the
  further its tokens per parameter are from the compute-optimal ratio); where no run's value is
  finite and positive (a fit with a parameter run off to infinity, or so far off every run that the
  per-run scale is undefined), the cheapest remaining run;
- ``ensemble_design`` (the judged design of ``benchmarks/bench_design.py`` since its rule, not
  among :data:`STRATEGIES`): the remaining run of largest variance reduction per FLOP read off
  bootstrap refits of the chosen runs, Eq. (3) of :mod:`jaxscale.planning.ensemble_belief`, each
  run observed with the robust design's noise; the robust design's pick where the refits leave
  no ensemble;
- ``paced_design`` (not among :data:`STRATEGIES`): the ensemble design with each run's value per
  FLOP discounted by the share of the compute it would hold, S / (S + C), S the compute spent,
  Eq. (4) of :mod:`jaxscale.planning.pacing`;
- ``laplace_design`` (the design before the robust belief, kept for comparison and not among
  :data:`STRATEGIES`): the same under the Laplace belief (the Jacobian of every run of the pool at
  the fit's optimum, the robust scale of the chosen runs' residuals, the law's priors), one noise
  scale for every run;
- ``random``: a uniformly random order of the remaining runs (seeded);
- ``cheapest``: the remaining runs by increasing compute;
- ``isoflop``: a Chinchilla-style isoFLOP schedule (Hoffmann et al. 2022, Approach 2, Figure 3):
  each run belongs to the nearest, in log C, of the budgets :data:`ISOFLOP_BUDGETS` of their
  Figure 3; budgets are trained in increasing order, each whole profile (all its model sizes,
  in increasing N) before the next.

With a ``budget`` a strategy picks only among the runs that still fit in it, and the replay stops
when none does.

:func:`compute_to_reach` reads off a trace the compute at which the target's interval reaches a
width and stays there: the cumulative compute of the first step from which every later width
is at most the target width.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult
from jaxscale.determinacy.curvature import prediction_jacobian, robust_sigma
from jaxscale.planning.target_intervals import Interval, bootstrap_interval
from jaxscale.planning.refits import Pool, first_fit, pooled_bootstrap, refit
from jaxscale.planning.ensemble_belief import RESAMPLES, SEED, TRIM, ensemble_value
from jaxscale.planning.pacing import share_discount
from jaxscale.planning.selection import (
    Belief,
    laplace_belief,
    reductions,
    robust_belief,
    target_gradient,
)
from jaxscale.planning.targets import Target

STRATEGIES = ("design", "random", "cheapest", "isoflop")
#: The isoFLOP budgets of Hoffmann et al. (2022), Figure 3, in FLOP.
ISOFLOP_BUDGETS = (6e18, 1e19, 3e19, 6e19, 1e20, 3e20, 6e20, 1e21, 3e21)
#: Runs above this compute that a strategy has not chosen are the holdout of every step.
HOLDOUT_COMPUTE = 1e21

#: A strategy: (pool, chosen so far [n] booleans, the current fit, the runs it may pick [n]
#: booleans) -> the index of the next run.
Strategy = Callable[[Pool, np.ndarray, FitResult, np.ndarray], int]


def _in_order(order: np.ndarray) -> Strategy:
    """The first run of a fixed ``order`` that may be picked."""
    def pick(pool: Pool, chosen: np.ndarray, fit: FitResult, allowed: np.ndarray) -> int:
        return int(order[np.argmax(allowed[order])])
    return pick


def cheapest_order(pool: Pool) -> np.ndarray:
    """The pool's runs by increasing compute (ties by index)."""
    return np.argsort(pool.runs.c, kind="stable")


def isoflop_order(pool: Pool, budgets: tuple[float, ...] = ISOFLOP_BUDGETS) -> np.ndarray:
    """The pool's runs profile by profile (module docstring): by nearest budget, then by N."""
    log_b = np.log(np.asarray(budgets))
    profile = np.argmin(np.abs(np.log(pool.runs.c)[:, None] - log_b[None, :]), axis=1)
    return np.lexsort((np.arange(len(profile)), pool.runs.n, profile))


def random_order(pool: Pool, seed: int) -> np.ndarray:
    """A uniformly random order of the pool's runs (NumPy's PCG64 seeded with ``seed``)."""
    return np.random.default_rng(seed).permutation(len(pool.runs))


class _AtFit(NamedTuple):
    """What every design reads at the current fit: the pool's inputs, their prediction Jacobian,
    log residuals, the chosen runs as weights and the robust design's noise of every run."""

    inputs: tuple[np.ndarray, ...]
    jacobian: np.ndarray
    residuals: np.ndarray
    weights: np.ndarray
    noise: np.ndarray


def _at_fit(pool: Pool, chosen: np.ndarray, fit: FitResult) -> tuple[_AtFit, Belief]:
    """The quantities of :class:`_AtFit` and the robust belief at ``fit``."""
    inputs = pool.runs.law_inputs(pool.law.inputs)
    residuals = np.log(pool.runs.loss) - np.log(fit.predict(*inputs))
    weights = chosen.astype(np.float64)
    belief, noise_of = robust_belief(pool.law, fit.vector, fit.params, inputs, residuals, fit.delta, weights)
    jacobian = prediction_jacobian(pool.law, fit.vector, inputs)
    return _AtFit(inputs, jacobian, residuals, weights, noise_of(*inputs)), belief


def _best_per_flop(pool: Pool, gain: np.ndarray, allowed: np.ndarray) -> int | None:
    """The allowed run of largest ``gain`` per FLOP; None where no such value is finite and
    positive (e.g. every run's noise is undefined)."""
    with np.errstate(invalid="ignore", over="ignore"):
        value = gain / pool.runs.c
    usable = allowed & np.isfinite(value) & (value > 0)
    return int(np.argmax(np.where(usable, value, -np.inf))) if usable.any() else None


def _cheapest(pool: Pool, allowed: np.ndarray) -> int:
    return int(np.argmin(np.where(allowed, pool.runs.c, np.inf)))


def design_strategy(target: Target, robust: bool = True) -> Strategy:
    """The run of largest expected variance reduction of ``target`` per FLOP (module docstring),
    under the robust belief (``design``) or the Laplace one (``laplace_design``)."""
    def pick(pool: Pool, chosen: np.ndarray, fit: FitResult, allowed: np.ndarray) -> int:
        at, belief = _at_fit(pool, chosen, fit)
        noise = at.noise
        if not robust:
            belief = laplace_belief(pool.law, fit.vector, at.jacobian, robust_sigma(at.residuals, chosen), chosen)
            noise = belief.sigma
        _, gradient = target_gradient(target, fit.vector)
        with np.errstate(invalid="ignore", over="ignore"):
            gain = reductions(belief.covariance, gradient, at.jacobian, noise)
        best = _best_per_flop(pool, gain, allowed)
        return _cheapest(pool, allowed) if best is None else best
    return pick


def ensemble_design_strategy(target: Target, resamples: int = RESAMPLES, seed: int = SEED,
                             trim: float = TRIM, paced: bool = False) -> Strategy:
    """The run of largest variance reduction of ``target`` per FLOP under the ensemble belief,
    Eq. (3) of :mod:`jaxscale.planning.ensemble_belief` (module docstring), ``paced``: discounted
    by the share of the compute it would hold, Eq. (4) of :mod:`jaxscale.planning.pacing`; the
    robust design's pick where the refits leave no ensemble."""
    robust = design_strategy(target)

    def pick(pool: Pool, chosen: np.ndarray, fit: FitResult, allowed: np.ndarray) -> int:
        at, _ = _at_fit(pool, chosen, fit)
        refits = pooled_bootstrap(pool, chosen, fit, resamples, seed)
        with np.errstate(invalid="ignore", over="ignore"):
            gain = ensemble_value(pool.law, target, refits, at.inputs, at.noise, trim)
        if gain is not None and paced:
            gain = gain * share_discount(pool.runs.c, chosen)
        best = None if gain is None else _best_per_flop(pool, gain, allowed)
        return robust(pool, chosen, fit, allowed) if best is None else best
    return pick


def strategy(name: str, pool: Pool, target: Target, seed: int = 0) -> Strategy:
    """The strategy called ``name`` (:data:`STRATEGIES`) on ``pool``; ``seed`` orders ``random``."""
    if name in ("design", "laplace_design"):
        return design_strategy(target, robust=name == "design")
    if name in ("ensemble_design", "paced_design"):
        return ensemble_design_strategy(target, paced=name == "paced_design")
    orders = {"random": lambda: random_order(pool, seed), "cheapest": lambda: cheapest_order(pool),
              "isoflop": lambda: isoflop_order(pool)}
    if name not in orders:
        raise ValueError(f"unknown strategy {name!r}; choose one of {STRATEGIES}")
    return _in_order(orders[name]())


@dataclass(frozen=True)
class Trace:
    """One replay: step 0 is the start set, step t > 0 the t-th run chosen.

    Attributes:
        strategy: its name.
        chosen: [T] pool indices of the runs chosen, in order.
        compute: [T + 1] cumulative FLOP, the start set's included.
        intervals: T + 1 intervals of the target (None at steps not recorded).
        holdout_error: [T + 1] mean |Lhat / L - 1| over the holdout (NaN when empty).
        fit: the fit after the last step.
    """

    strategy: str
    chosen: np.ndarray
    compute: np.ndarray
    intervals: tuple[Interval | None, ...]
    holdout_error: np.ndarray
    fit: FitResult

    @property
    def widths(self) -> np.ndarray:
        """[T + 1] interval widths (NaN where not recorded; inf where unbounded)."""
        return np.array([math.nan if i is None else i.width for i in self.intervals])


def holdout_error(pool: Pool, chosen: np.ndarray, fit: FitResult, above: float = HOLDOUT_COMPUTE) -> float:
    """Mean |Lhat / L - 1| over the pool's runs above ``above`` FLOP not ``chosen`` (NaN if none)."""
    held = ~chosen & (pool.runs.c > above)
    if not held.any():
        return math.nan
    runs = pool.runs.select(held)
    return float(np.mean(np.abs(fit.predict(*runs.law_inputs(pool.law.inputs)) / runs.loss - 1.0)))


@float64
def replay(pool: Pool, start: np.ndarray, pick: Strategy, target: Target, *, name: str = "", resamples: int = 400,
           seed: int = 0, level: float = 0.9, budget: float | None = None, record: str = "every") -> Trace:
    """Replay a study on ``pool`` from the ``start`` runs ([n] booleans), choosing by ``pick``.

    Args:
        pool: the runs (:func:`jaxscale.planning.refits.pool_of`).
        start: the runs trained first.
        pick: the strategy (:func:`strategy`).
        target: the quantity whose interval is recorded.
        name: the strategy's name, for the trace.
        resamples, seed, level: the bootstrap of the recorded intervals (the same seed at every
            step).
        budget: FLOP the chosen runs may spend together beyond the start set (default: all of
            the pool).
        record: ``"every"`` step's interval, or only the ``"last"``.

    Returns:
        The :class:`Trace`.
    """
    if record not in ("every", "last"):
        raise ValueError(f"record must be 'every' or 'last', got {record!r}")
    chosen = np.array(start, bool)
    left = math.inf if budget is None else float(budget)
    fit = first_fit(pool, chosen)
    order, compute, errors = [], [float(np.sum(pool.runs.c[chosen]))], [holdout_error(pool, chosen, fit)]

    def interval() -> Interval:
        return bootstrap_interval(pooled_bootstrap(pool, chosen, fit, resamples, seed), target, fit.vector, level)

    intervals: list[Interval | None] = [interval() if record == "every" else None]
    while True:
        allowed = ~chosen & (pool.runs.c <= left)
        if not allowed.any():
            break
        index = pick(pool, chosen, fit, allowed)
        chosen[index], left = True, left - pool.runs.c[index]
        fit = refit(pool, chosen, fit)
        order.append(index)
        compute.append(compute[-1] + float(pool.runs.c[index]))
        errors.append(holdout_error(pool, chosen, fit))
        intervals.append(interval() if record == "every" else None)
    if record == "last":
        intervals[-1] = interval()
    return Trace(name, np.array(order, int), np.array(compute), tuple(intervals), np.array(errors), fit)


def compute_to_reach(trace: Trace, width: float) -> float | None:
    """The cumulative compute of the first step from which every recorded interval is at most
    ``width`` wide (module docstring); None if the last one is wider."""
    widths = trace.widths
    above = np.flatnonzero(~(widths <= width) & ~np.isnan(widths))
    if above.size and above[-1] == len(widths) - 1:
        return None
    first = 0 if not above.size else above[-1] + 1
    return float(trace.compute[first])
