"""Candidate runs of a design: a grid of (N, D) up to a maximum cost per run.

Model sizes N lie on a log grid of :data:`PER_DECADE` points per decade, tokens per parameter
D/N on another (from :data:`RATIOS`: 1 to 1000, which holds the ratios of published studies, 20
for Chinchilla's compute-optimal runs, up to hundreds for models trained past it); a candidate is
kept if its compute C = 6 N D lies in [``min_cost``, ``max_cost``]. The sizes run from
``min_n`` (default: the largest size that still costs no more than ``min_cost`` at the smallest
ratio, or 1e7 parameters) up to the largest size whose run at the smallest ratio fits in
``max_cost``.

A plan made from runs (:func:`grid_beside_runs`) starts its grid at the runs' smallest model
size: it proposes runs where the law was measured or beyond it, never below the runs' range,
where the fitted law is an extrapolation downwards that no target above needs (Epoch's runs of
4.4e7 to 1.6e10 parameters were offered 383 runs from N = 1e7 at one token per parameter).
"""

from __future__ import annotations

import numpy as np

from jaxscale.core.validation import check_positive

#: Grid points per decade of N and of D/N.
PER_DECADE = 8
#: Tokens per parameter, smallest and largest.
RATIOS = (1.0, 1000.0)
#: The smallest model size of a grid without ``min_n`` or ``min_cost``.
MIN_N = 1e7


def _log_grid(lo: float, hi: float, per_decade: int) -> np.ndarray:
    """Points k/per_decade decades apart, from lo up to hi (both included up to rounding)."""
    start, stop = np.log10(lo), np.log10(hi)
    return 10.0 ** (start + np.arange(0, np.floor((stop - start) * per_decade + 1e-9) + 1) / per_decade)


def candidate_grid(max_cost: float, *, min_cost: float | None = None, min_n: float | None = None,
                   ratios: tuple[float, float] = RATIOS, per_decade: int = PER_DECADE) -> tuple[np.ndarray, np.ndarray]:
    """The candidates (N, D), [k] each, of the module docstring's grid."""
    check_positive("max_cost", max_cost)
    check_positive("ratios", np.asarray(ratios, float))
    if per_decade < 1:
        raise ValueError(f"per_decade must be >= 1, got {per_decade}")
    if not ratios[0] < ratios[1]:
        raise ValueError(f"ratios must be (smallest, largest) tokens per parameter; got {ratios}")
    if min_cost is not None:
        check_positive("min_cost", min_cost)
        if min_cost >= max_cost:
            raise ValueError(f"min_cost {min_cost:.3g} must be below max_cost {max_cost:.3g}")
    top = np.sqrt(max_cost / (6.0 * ratios[0]))
    low = min_n if min_n is not None else (np.sqrt(min_cost / (6.0 * ratios[1])) if min_cost else MIN_N)
    check_positive("min_n", low)
    if low > top:
        raise ValueError(f"no model of at least {low:.3g} parameters fits in {max_cost:.3g} FLOP "
                         f"at {ratios[0]:g} tokens per parameter")
    n, r = np.meshgrid(_log_grid(low, top, per_decade), _log_grid(*ratios, per_decade), indexing="ij")
    n, d = n.ravel(), (n * r).ravel()
    c = 6.0 * n * d
    keep = (c <= max_cost * (1 + 1e-12)) & (c >= (min_cost or 0.0) * (1 - 1e-12))
    return n[keep], d[keep]


def grid_beside_runs(max_cost: float, runs_n: np.ndarray | None, *, min_cost: float | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The candidates of a plan from runs of sizes ``runs_n`` (module docstring): the grid of
    :func:`candidate_grid` from the smallest of them, unless ``min_cost`` sets the start, or
    there are no runs."""
    from_runs = runs_n is not None and len(runs_n) and min_cost is None
    return candidate_grid(max_cost, min_cost=min_cost, min_n=float(np.min(runs_n)) if from_runs else None)
