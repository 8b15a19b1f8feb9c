"""Approach 1 of Hoffmann et al. (2022): the frontier of training curves.

The rows of a runs table are grouped into training curves, one per ``run_id`` (one per model
size N when the table has none). On a grid of budgets C, evenly spaced in log C, the
compute-optimal model is the one whose curve reaches the lowest loss with C FLOP (the frontier,
:func:`jaxscale.frontier.compute_frontier`); its size is N*(C), and D*(C) = C / (6 N*). Then

    N* = k_N C^a,   D* = k_D C^b,   a + b = 1

are fitted by least squares in log space, with percentile intervals from resampling the fitted
budgets (:mod:`jaxscale.fit.allocation_laws`). On Kaplan's basis (Pearce & Song 2024, Eqs. 1-4)
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
(:mod:`jaxscale.experiments.sweep`). Neither default was chosen by the exponents it gives.

**Too few sizes.** N*(C) takes only the values of the sizes trained, so it is a step function
of log C. A frontier held by one size has no slope at all, and through a frontier of two sizes,
one step, the least-squares slope is set by where the budget grid puts the step and its ends,
not by how N* scales. A frontier that holds fewer than :data:`MIN_FRONTIER_SIZES` distinct sizes
therefore gives no exponent: a and b are None, with a warning.
"""

from __future__ import annotations

import time
import warnings

import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxscale.fit.allocation_laws import AllocationLaws, allocation_laws
from jaxscale.frontier import compute_frontier
from jaxscale.numerics import float64
from jaxscale.runs import RunsTable

#: The fewest distinct model sizes on the fitted frontier that give an exponent.
MIN_FRONTIER_SIZES = 3
FRONTIER_RANGES = ("common", "largest_first", "all")


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


@float64
def fit_approach1(table: RunsTable, *, basis: str = "total", frontier_range: str = "all",
                  interior_only: bool = True, n_budgets: int = 200, bootstrap: int = 1000,
                  seed: int = 0) -> AllocationLaws:
    """Approach 1 on the training curves of ``table`` on ``basis`` ("total" or "nonembedding"):
    the frontier at ``n_budgets`` budgets over ``frontier_range`` (:func:`budget_range`), the
    budgets with an edge size on it dropped if ``interior_only``, power laws fitted with 95%
    percentile intervals over ``bootstrap`` resamples (none if 0) drawn with ``seed``.

    Returns a and b as None, with a warning, when the fitted frontier holds fewer than
    :data:`MIN_FRONTIER_SIZES` distinct sizes.
    """
    t0 = time.perf_counter()
    n, c = table.on_basis(basis)
    sizes, log_c, curves = padded_curves(n, c, table.loss, n if table.run_id is None else table.run_id)
    grid = np.linspace(*budget_range(log_c, sizes, frontier_range), n_budgets)
    front = compute_frontier(jnp.asarray(log_c), jnp.asarray(curves), jnp.asarray(grid))
    n_opt = sizes[np.asarray(front.best)]
    on_edge = (n_opt == sizes.min()) | (n_opt == sizes.max())
    fitted = np.asarray(front.valid) & ~(interior_only & on_edge)
    points = np.exp(grid[fitted]), n_opt[fitted], np.asarray(front.loss)[fitted]
    held = len(np.unique(points[1]))
    if held < MIN_FRONTIER_SIZES:
        warnings.warn(f"Approach 1 on the {basis} basis: exponent {undefined_exponent(held)}; "
                      f"a power law needs at least {MIN_FRONTIER_SIZES} sizes on the frontier", stacklevel=3)
        return AllocationLaws("approach1", *points, seconds=time.perf_counter() - t0)
    return allocation_laws("approach1", *points, t0, bootstrap=bootstrap, seed=seed)
