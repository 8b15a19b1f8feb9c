"""Chinchilla's exponents from every checkpoint, against Approach 3 on last checkpoints only.

The law is :mod:`jaxscale.laws.chinchilla_annealing` (Eq. 2 of Hoffmann et al. 2022 with the
data term read through the annealing law of Tissue et al. 2024). It is fitted as Approach 3 is
(:mod:`jaxscale.fit.approach3`): the sum of Huber_1e-3 of the log residuals over every
checkpoint, L-BFGS from every point of a grid (:data:`~jaxscale.laws.chinchilla_annealing.INIT_GRID`),
the best converged start winning. :func:`compare_with_final` fits it to every checkpoint of the
tuned runs (at each size and length, the peak rate of lowest final loss: the runs of
``jaxscale fit --final-only --tuned-only``) and Chinchilla's law to their last checkpoints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxscale import runs_schema as rs
from jaxscale.fit import lbfgs
from jaxscale.fit.approach3 import MULTISTART, best_converged, fit_approach3, floats
from jaxscale.fit.objective import DELTA, huber
from jaxscale.laws import chinchilla_annealing as law
from jaxscale.numerics import float64
from jaxscale.runs import RunsTable, best_per_size_and_tokens, final_checkpoints


class CheckpointData(NamedTuple):
    """Logs of N, Dt, St2 and the loss at every checkpoint."""

    log_n: jnp.ndarray
    log_d: jnp.ndarray
    log_s2: jnp.ndarray
    log_y: jnp.ndarray


def checkpoint_data(table: RunsTable) -> CheckpointData:
    """N, Dt = (tokens per step) S1 / eta_peak and St2 = S2 / eta_peak of a table with S1, S2 columns."""
    frame = table.frame
    for column in (rs.FORWARD_AREA, rs.ANNEALING_AREA, rs.PEAK_LR):
        if column not in frame.columns:
            raise ValueError(f"the every-checkpoint law needs a {column!r} column")
    peak = pd.to_numeric(frame[rs.PEAK_LR]).to_numpy(np.float64)
    tokens_per_step = table.d / table.step
    d_tilde = tokens_per_step * frame[rs.FORWARD_AREA].to_numpy(np.float64) / peak
    s2_tilde = frame[rs.ANNEALING_AREA].to_numpy(np.float64) / peak
    return CheckpointData(*(jnp.log(jnp.asarray(v, jnp.float64)) for v in (table.n, d_tilde, s2_tilde, table.loss)))


def objective(theta: jnp.ndarray, data: CheckpointData) -> jnp.ndarray:
    """sum over checkpoints of Huber_1e-3(log L - log Lhat)."""
    r = data.log_y - law.log_loss(law.from_vector(theta), data.log_n, data.log_d, data.log_s2)
    return jnp.sum(huber(r, DELTA))


@dataclass(frozen=True)
class EveryCheckpointFit:
    params: law.ChinchillaAnnealingParams
    objective: float
    n_points: int
    n_converged: int
    seconds: float

    def summary(self) -> dict[str, Any]:
        p = self.params
        return {**p._asdict(), "a": p.beta / (p.alpha + p.beta), "objective": self.objective,
                "n_points": self.n_points, "n_converged": self.n_converged}


@float64
def fit_every_checkpoint(table: RunsTable, options: lbfgs.Options = MULTISTART) -> EveryCheckpointFit:
    """Fit the every-checkpoint law to every row of ``table`` (with S1, S2 and peak_lr columns)."""
    data = checkpoint_data(table)
    t0 = time.perf_counter()
    sol = jax.block_until_ready(lbfgs.solver(objective, options)(jnp.asarray(law.INIT_GRID()), data))
    best = best_converged(sol)
    return EveryCheckpointFit(floats(law.from_vector(np.asarray(sol.theta[best]))), float(sol.value[best]),
                              len(table), int(np.sum(sol.converged)), time.perf_counter() - t0)


def tuned_runs(table: RunsTable) -> RunsTable:
    """Every checkpoint of the runs whose last checkpoint is the lowest loss at its (N, D)."""
    keep = set(best_per_size_and_tokens(final_checkpoints(table)).run_id)
    return table.select(np.isin(table.run_id, list(keep)))


def compare_with_final(table: RunsTable) -> dict[str, dict[str, Any]]:
    """The every-checkpoint fit and Approach 3 (Chinchilla's law, last checkpoints) on the tuned
    runs of ``table`` (which has S1, S2 columns): parameters and a = beta / (alpha + beta)."""
    tuned = tuned_runs(table)
    final = fit_approach3(final_checkpoints(tuned), law="chinchilla")
    every = fit_every_checkpoint(tuned)
    return {"every_checkpoint": {**every.summary(), "seconds": every.seconds},
            "final_checkpoints": {**final.summary(), "n_converged": final.n_converged, "seconds": final.seconds}}
