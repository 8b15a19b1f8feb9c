"""Chinchilla's exponents from every checkpoint, against Approach 3 on last checkpoints only.

The law is :mod:`jaxscale.laws.chinchilla_annealing` (Eq. 2 of Hoffmann et al. 2022 with the
data term read through the annealing law of Tissue et al. 2024), a :class:`~jaxscale.laws.law.Law`
of three per-checkpoint inputs that :func:`checkpoint_table` adds to a runs table with schedule
areas. It is fitted as any law is (:func:`jaxscale.fitting.approach3.fit_approach3`: the sum of
Huber_1e-3 of the log residuals over every checkpoint, L-BFGS from the best starts of the law's
grid). :func:`compare_with_final` fits it to every checkpoint of the tuned runs (at each size and
length, the peak rate of lowest final loss: the runs of ``jaxscale fit --final-only
--tuned-only``) and Chinchilla's law to their last checkpoints.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from jaxscale.fitting.approach3 import FitResult, fit_approach3
from jaxscale.fitting.bootstrap import bootstrap, cluster_counts
from jaxscale.fitting.determinable import check_runs
from jaxscale.laws import chinchilla, chinchilla_annealing
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable, best_per_size_and_tokens, final_checkpoints


def checkpoint_table(table: RunsTable) -> RunsTable:
    """``table`` (with S1, S2 and peak_lr columns) with the law's inputs added:
    Dt = (tokens per step) S1 / eta_peak and St2 = S2 / eta_peak."""
    frame = table.frame
    for column in (rs.FORWARD_AREA, rs.ANNEALING_AREA, rs.PEAK_LR):
        if column not in frame.columns:
            raise ValueError(f"the every-checkpoint law needs a {column!r} column")
    if table.step is None:
        raise ValueError("the every-checkpoint law needs a step column")
    peak = pd.to_numeric(frame[rs.PEAK_LR]).to_numpy(np.float64)
    tokens_per_step = table.d / table.step
    return replace(table, frame=frame.assign(**{
        rs.FORWARD_TOKENS: tokens_per_step * frame[rs.FORWARD_AREA].to_numpy(np.float64) / peak,
        rs.ANNEALING_STEPS: frame[rs.ANNEALING_AREA].to_numpy(np.float64) / peak,
    }))


def fit_every_checkpoint(table: RunsTable) -> FitResult:
    """The every-checkpoint law fitted to every row of ``table`` (with S1, S2 and peak_lr columns)."""
    return fit_approach3(checkpoint_table(table), law=chinchilla_annealing.LAW)


def tuned_runs(table: RunsTable) -> RunsTable:
    """Every checkpoint of the runs whose last checkpoint is the lowest loss at its (N, D)."""
    keep = set(best_per_size_and_tokens(final_checkpoints(table)).run_id)
    return table.select(np.isin(table.run_id, list(keep)))


#: Resamples of the runs behind the intervals of :func:`compare_with_final`.
RUN_RESAMPLES = 200


def compare_with_final(table: RunsTable, resamples: int = RUN_RESAMPLES, seed: int = 0) -> dict[str, dict[str, Any]]:
    """The every-checkpoint fit and Approach 3 (Chinchilla's law, last checkpoints) on the tuned
    runs of ``table`` (which has S1, S2 columns): parameters, a = beta / (alpha + beta), and 95%
    intervals of alpha, beta and a from a bootstrap over runs (the same resamples of runs for
    both fits; a run's checkpoints are drawn together, since they are not independent). A fit
    that the runs cannot determine (:func:`jaxscale.fitting.determinable.check_runs`: the last
    checkpoints of a few runs are often too few, or at two token counts) is reported as
    ``{"n_points": ..., "undefined": reason}``, never as numbers."""
    tuned = tuned_runs(table)
    tables = {"every_checkpoint": (checkpoint_table(tuned), chinchilla_annealing.LAW),
              "final_checkpoints": (final_checkpoints(tuned), chinchilla.LAW)}
    out = {}
    for name, (runs, law) in tables.items():
        try:
            check_runs(law, runs)
        except ValueError as undetermined:
            out[name] = {"n_points": len(runs), "undefined": str(undetermined)}
            continue
        fit = fit_approach3(runs, law=law)
        counts = cluster_counts(fit.runs.run_id, resamples, seed)
        ci = bootstrap(fit, counts=counts).ci95()
        out[name] = {**fit.summary(), "n_converged": fit.n_converged, "seconds": fit.seconds,
                     "ci95": {k: ci[k] for k in ("alpha", "beta", "a")}}
    return out
