"""Held-out extrapolation check: does a fit on small runs predict the large ones?

Fit the law (Approach 3) on the runs below a threshold of model size N or compute C, predict
the loss of the runs at or above it, and report the errors of those predictions::

    relative error_i = (Lhat_i - L_i) / L_i,

the question every user of a scaling-law fit asks before trusting its extrapolation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxscale.fit.approach3 import FitResult, fit_approach3
from jaxscale.runs import RunsTable


@dataclass(frozen=True)
class HoldoutResult:
    """The fit on the small runs and its predictions for the held-out large ones."""

    fit: FitResult
    by: str
    threshold: float
    heldout: RunsTable
    predicted: np.ndarray

    @property
    def relative_error(self) -> np.ndarray:
        return (self.predicted - self.heldout.loss) / self.heldout.loss

    def summary(self) -> dict[str, float]:
        err = self.relative_error
        return {
            "by": self.by, "threshold": self.threshold, "n_fit": self.fit.n_points,
            "n_heldout": len(err), "mean_abs_rel_error": float(np.mean(np.abs(err))),
            "max_abs_rel_error": float(np.max(np.abs(err))), "mean_rel_error": float(np.mean(err)),
            "rmse_log": float(np.sqrt(np.mean(np.log1p(err) ** 2))),
        }


def holdout_check(runs: RunsTable, threshold: float, *, by: str = "n", **fit_kwargs) -> HoldoutResult:
    """Fit on runs with N (``by="n"``) or C (``by="c"``) below ``threshold``, predict the rest.
    ``fit_kwargs`` go to :func:`~jaxscale.fit.approach3.fit_approach3`."""
    if by not in ("n", "c"):
        raise ValueError(f"holdout by must be 'n' or 'c', got {by!r}")
    size = runs.n if by == "n" else runs.c
    small = size < threshold
    if small.all() or not small.any():
        raise ValueError(
            f"holdout threshold {threshold:g} on {by.upper()} leaves {int(small.sum())} runs to fit and "
            f"{int((~small).sum())} to predict; choose a value between {size.min():g} and {size.max():g}"
        )
    fit = fit_approach3(runs.select(small), **fit_kwargs)
    heldout = runs.select(~small)
    return HoldoutResult(fit=fit, by=by, threshold=float(threshold), heldout=heldout,
                         predicted=fit.predict(*heldout.law_inputs(fit.law.inputs)))
