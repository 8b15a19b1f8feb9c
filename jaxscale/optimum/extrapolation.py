"""How far a compute-optimal allocation lies outside the runs a law was fitted to, and when it is
too far for the runs to vouch for it.

An optimum N*(C), D*(C) at a budget beyond the runs is an extrapolation of the law's form. Its
bands (bootstrap refits, posterior draws) carry the noise of the fitted runs through that form;
they do not say whether the form still holds out there.

THE RULE (declared 2026-11-29, before any command's output was read against it): an optimum is
**beyond the runs** when N* lies further outside the fitted runs' range of N than that range
spans, in decades, or D* further outside the runs' range of D than that range spans. A planned
run there gets a warning in the text and the JSON (``warnings``) beside its numbers, which are
still printed.

Why one span. It is as far as a held-out check of this package has gone and measured what an
extrapolation costs: on Epoch AI's runs, fitted below 10^9 parameters (1.2 decades of N) and
judged on runs up to 1.3 decades above, the error is 0.022 nats against 0.015 for the law fitted
to those runs themselves (docs/guides/fit.md, "Big runs from small ones"). And a line fitted to
points spread over a span w, read at a distance w beyond its end, has an error about five times
the error at the points' centre (the lever arm 1 + 12 (w/2 + w)^2 / w^2 ~ 28 in variance), so the
slope, which the runs determine least, already dominates there.
"""

from __future__ import annotations

import numpy as np
from jax.typing import ArrayLike


def decades_outside(x: ArrayLike, observed: ArrayLike) -> np.ndarray:
    """How far ``x`` lies outside the range of ``observed``, in decades: 0 inside it, else
    the absolute log10 of the ratio to the nearer end (NaN stays NaN). How far an optimum extrapolates."""
    log_x = np.log10(np.asarray(x, np.float64))
    low, high = np.log10(np.min(observed)), np.log10(np.max(observed))
    return np.maximum(0.0, np.maximum(low - log_x, log_x - high))


def decades_spanned(observed: ArrayLike) -> float:
    """log10(max / min) of ``observed``: how many decades the runs cover."""
    return float(np.log10(np.max(observed)) - np.log10(np.min(observed)))


def beyond_the_runs(allocation: dict[str, np.ndarray], n: ArrayLike, d: ArrayLike) -> dict[str, np.ndarray]:
    """The columns that say how far each budget's optimum extrapolates from runs of sizes ``n``
    and tokens ``d``: ``N_decades_outside_runs``, ``D_decades_outside_runs`` and
    ``beyond_runs`` (the module's rule; False where the optimum is undefined).

    Args:
        allocation: columns ``N`` and ``D`` at each budget
            (:func:`jaxscale.optimum.allocation.allocation_table`).
        n: the fitted runs' model sizes.
        d: their training tokens.

    Returns:
        The three columns, one entry per budget.
    """
    outside_n, outside_d = decades_outside(allocation["N"], n), decades_outside(allocation["D"], d)
    with np.errstate(invalid="ignore"):
        beyond = (outside_n > decades_spanned(n)) | (outside_d > decades_spanned(d))
    return {"N_decades_outside_runs": outside_n, "D_decades_outside_runs": outside_d, "beyond_runs": beyond}


def beyond_the_runs_warnings(allocation: dict[str, np.ndarray], n: ArrayLike, d: ArrayLike) -> list[str]:
    """One sentence for each budget whose optimum is beyond the runs (the module's rule).

    Args:
        allocation: columns ``C``, ``N``, ``D`` and those of :func:`beyond_the_runs`.
        n: the fitted runs' model sizes.
        d: their training tokens.

    Returns:
        The warnings, in the budgets' order; empty when every optimum is within reach.
    """
    spans = {"N": decades_spanned(n), "D": decades_spanned(d)}
    out = []
    for i in np.flatnonzero(allocation["beyond_runs"]):
        far = [f"{key}* lies {allocation[f'{key}_decades_outside_runs'][i]:.2f} decades outside the runs' {key}, "
               f"which span {spans[key]:.2f}" for key in ("N", "D")
               if allocation[f"{key}_decades_outside_runs"][i] > spans[key]]
        out.append(f"at C = {allocation['C'][i]:.3g} FLOP, {'; '.join(far)}: further than the runs reach, so the "
                   "optimum rests on the law's form alone, which no run checks there (bands over draws carry "
                   "only the runs' noise)")
    return out
