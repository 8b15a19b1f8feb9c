"""Approach 1 of Hoffmann et al. (2022): the frontier of training curves.

The rows of a runs table are grouped into training curves, one per ``run_id`` (one per model
size N when the table has none). On a grid of budgets C, evenly spaced in log C, the
compute-optimal model is the one whose curve reaches the lowest loss with C FLOP (the frontier,
:func:`jaxscale.core.frontier.compute_frontier`); its size is N*(C), and D*(C) = C / (6 N*). Then

    N* = k_N C^a,   D* = k_D C^b,   a + b = 1

are fitted by least squares in log space, with 95% percentile intervals from a bootstrap:
by default over *runs* (each resample draws the table's training curves with replacement, the
frontier is rebuilt from the curves drawn, and a resample whose frontier holds too few sizes
counts as undefined), which carries the uncertainty of which models were trained and how their
curves fell; or over the fitted *budgets* (the transformer sweep's declared procedure,
:mod:`jaxscale.fitting.frontier_laws`), which treats the frontier's points as independent and is
narrower. On Kaplan's basis (Pearce & Song 2024, Eqs. 1-4)
N is N_\\E and C is C_\\E = 6 N_\\E D; on Chinchilla's, N_T and C_T = 6 N_T D.

**Which budgets are fitted.** Two rules, which answer different questions:

- The *budget range* (:func:`budget_range`) is about coverage: which budgets the models have
  been evaluated at, so that the frontier compares the sizes that matter there ("common": every
  size; "largest_first": from the largest size's first point on; "all": any curve).
- The *interior rule* (``interior_only``) is about censoring: where the smallest or the largest
  size trained is the frontier model, the optimum may lie beyond the sizes trained and N* is
  only a bound on it.

Neither makes the other redundant (an edge size can win inside the common range, and the
interior rule cannot see that a larger model had not been evaluated yet at a budget), so they
compose: a budget is fitted when it lies in the range and, with ``interior_only``, its frontier
model is neither the smallest nor the largest size. The defaults, every budget any curve
reaches with the interior rule, are the rule this function had for a table of arbitrary runs
(``jaxscale fit --method approach1``). The transformer sweep passes its configured range
without the interior rule, the procedure its published table was measured with
(:mod:`jaxscale.lm.sweep`). Neither default was chosen by the exponents it gives.

**Too few sizes.** N*(C) takes only the values of the sizes trained, so it is a step function
of log C. A frontier held by one size has no slope at all, and through a frontier of two sizes,
one step, the least-squares slope is set by where the budget grid puts the step and its ends,
not by how N* scales. A frontier that holds fewer than :data:`MIN_FRONTIER_SIZES` distinct sizes
therefore gives no exponent: a and b are None, with a warning.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxscale.core.frontier import curves_on_grid, frontier_on_grid
from jaxscale.core.numerics import float64
from jaxscale.fitting.frontier_laws import (
    FrontierLaws,
    Interval,
    exponent_interval,
    fit_frontier_laws,
    power_laws,
)
from jaxscale.tables.table import RunsTable

#: The fewest distinct model sizes on the fitted frontier that give an exponent.
MIN_FRONTIER_SIZES = 3
FRONTIER_RANGES = ("common", "largest_first", "all")
RESAMPLING = ("runs", "budgets")


def padded_curves(n: np.ndarray, c: np.ndarray, loss: np.ndarray, run_id: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per run, sorted by compute and right-padded with NaN: (N per run, log C, loss)."""
    runs, inverse = np.unique(run_id, return_inverse=True)
    sizes = np.zeros(len(runs))
    length = np.bincount(inverse).max()
    log_c = np.full((len(runs), length), np.nan)
    curves = np.full((len(runs), length), np.nan)
    order = np.lexsort((c, inverse))
    position = np.arange(len(order)) - np.searchsorted(inverse[order], inverse[order])
    log_c[inverse[order], position] = np.log(c[order])
    curves[inverse[order], position] = loss[order]
    sizes[inverse] = n
    if np.any(np.array([len(np.unique(n[inverse == k])) for k in range(len(runs))]) > 1):
        raise ValueError("a run_id has more than one model size N; each training curve is one model")
    return sizes, log_c, curves


def budget_range(log_c: np.ndarray, n: np.ndarray, rule: str) -> tuple[float, float]:
    """Range of log budgets of the frontier grid, from curves ``log_c`` [M, P] of sizes ``n`` [M].

    ``"common"``: the range every model size covers (from the latest first point of any size to
    the earliest last point, the runs of one size pooled), so no size is excluded at a budget
    merely because its runs had not started or had already ended there. ``"largest_first"``: from
    the latest first point to the largest budget. ``"all"``: every budget any curve reaches.
    """
    if rule not in FRONTIER_RANGES:
        raise ValueError(f"frontier range must be one of {FRONTIER_RANGES}; got {rule!r}")
    first = pd.Series(log_c[:, 0]).groupby(n).min()
    last = pd.Series(np.nanmax(log_c, axis=1)).groupby(n).max()
    low, high = {
        "common": (first.max(), last.min()),
        "largest_first": (first.max(), last.max()),
        "all": (first.min(), last.max()),
    }[rule]
    if low >= high:
        raise ValueError("the model sizes' compute ranges do not overlap; train the small models longer")
    return float(low), float(high)


def undefined_exponent(n_sizes: int) -> str:
    """How a report shows the exponent of a frontier with too few sizes."""
    return f"undefined (frontier holds {n_sizes} size{'' if n_sizes == 1 else 's'})"


def frontier_points(on_grid: jnp.ndarray, log_c_grid: jnp.ndarray, sizes: jnp.ndarray, keep: jnp.ndarray,
                    interior_only: bool) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """(N* at each budget, which budgets are fitted, frontier loss) of the frontier over the runs
    in ``keep`` [M]: a budget is fitted where some kept curve reaches it and, with
    ``interior_only``, its frontier model is neither the smallest nor the largest kept size."""
    front = frontier_on_grid(jnp.where(keep[:, None], on_grid, jnp.inf), log_c_grid)
    n_opt = sizes[front.best]
    smallest = jnp.min(jnp.where(keep, sizes, jnp.inf))
    largest = jnp.max(jnp.where(keep, sizes, -jnp.inf))
    on_edge = (n_opt == smallest) | (n_opt == largest)
    return n_opt, front.valid & ~(interior_only & on_edge), front.loss


def _sizes_held(n_opt: jnp.ndarray, fitted: jnp.ndarray, distinct: jnp.ndarray) -> jnp.ndarray:
    """How many of the ``distinct`` sizes are N* at some fitted budget."""
    return jnp.sum(jnp.any(fitted[None, :] & (n_opt[None, :] == distinct[:, None]), axis=1))


@partial(jax.jit, static_argnames="interior_only")
def _resampled_exponents(on_grid: jnp.ndarray, log_c_grid: jnp.ndarray, sizes: jnp.ndarray, counts: jnp.ndarray,
                         interior_only: bool) -> tuple[jnp.ndarray, jnp.ndarray]:
    """a and b of every resample of runs (``counts`` [R, M]; NaN where its frontier holds too
    few sizes), all at once."""
    distinct = jnp.unique(sizes, size=sizes.shape[0], fill_value=jnp.nan)

    def one(count: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        n_opt, fitted, _ = frontier_points(on_grid, log_c_grid, sizes, count > 0, interior_only)
        n_law, d_law = power_laws(jnp.exp(log_c_grid), n_opt, fitted)
        enough = _sizes_held(n_opt, fitted, distinct) >= MIN_FRONTIER_SIZES
        return jnp.where(enough, n_law.exponent, jnp.nan), jnp.where(enough, d_law.exponent, jnp.nan)

    return jax.vmap(one)(counts)


def run_intervals(on_grid: jnp.ndarray, log_c_grid: jnp.ndarray, sizes: np.ndarray, interior_only: bool,
                  resamples: int, seed: int) -> tuple[Interval, Interval, float]:
    """95% percentile intervals of a and b over ``resamples`` resamples of the runs, and the
    fraction of resamples whose exponent is undefined (left out of the percentiles)."""
    m = len(sizes)
    counts = np.random.default_rng(seed).multinomial(m, np.full(m, 1.0 / m), size=resamples)
    a, b = (np.asarray(v) for v in _resampled_exponents(on_grid, log_c_grid, jnp.asarray(sizes),
                                                        jnp.asarray(counts), interior_only))
    undefined = float(np.mean(np.isnan(a)))
    if undefined == 1.0:
        return (None, None), (None, None), undefined
    return exponent_interval(a), exponent_interval(b), undefined


@float64
def fit_approach1(table: RunsTable, *, basis: str = "total", frontier_range: str = "all",
                  interior_only: bool = True, n_budgets: int = 200, bootstrap: int = 1000,
                  resample: str = "runs", seed: int = 0) -> FrontierLaws:
    """Approach 1 on the training curves of ``table`` on ``basis`` ("total" or "nonembedding"):
    the frontier at ``n_budgets`` budgets over ``frontier_range`` (:func:`budget_range`), the
    budgets with an edge size on it dropped if ``interior_only``, power laws fitted with 95%
    percentile intervals over ``bootstrap`` resamples (none if 0) of the ``resample`` unit
    ("runs" or "budgets") drawn with ``seed``.

    Returns a and b as None, with a warning, when the fitted frontier holds fewer than
    :data:`MIN_FRONTIER_SIZES` distinct sizes.
    """
    if resample not in RESAMPLING:
        raise ValueError(f"resample must be one of {RESAMPLING}; got {resample!r}")
    t0 = time.perf_counter()
    n, c = table.on_basis(basis)
    sizes, log_c, curves = padded_curves(n, c, table.loss, n if table.run_id is None else table.run_id)
    grid = jnp.asarray(np.linspace(*budget_range(log_c, sizes, frontier_range), n_budgets))
    on_grid = curves_on_grid(jnp.asarray(log_c), jnp.asarray(curves), grid)
    everything = jnp.ones(len(sizes), bool)
    n_opt, fitted, loss = (np.asarray(v) for v in frontier_points(on_grid, grid, jnp.asarray(sizes), everything,
                                                                  interior_only))
    points = np.exp(np.asarray(grid)[fitted]), n_opt[fitted], loss[fitted]
    held = len(np.unique(points[1]))
    if held < MIN_FRONTIER_SIZES:
        warnings.warn(f"Approach 1 on the {basis} basis: exponent {undefined_exponent(held)}; "
                      f"a power law needs at least {MIN_FRONTIER_SIZES} sizes on the frontier", stacklevel=3)
        return FrontierLaws("approach1", *points, seconds=time.perf_counter() - t0)
    by_budgets = bootstrap if resample == "budgets" else 0
    laws = fit_frontier_laws("approach1", *points, t0, bootstrap=by_budgets, seed=seed)
    if resample == "budgets" or not bootstrap:
        return laws
    a_interval, b_interval, undefined = run_intervals(on_grid, grid, sizes, interior_only, bootstrap, seed)
    return replace(laws, a_interval=a_interval, b_interval=b_interval, undefined_fraction=undefined,
                   seconds=time.perf_counter() - t0)
