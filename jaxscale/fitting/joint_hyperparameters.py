"""The joint law L(N, D, eta, B) fitted to hyperparameter grids, and its optima by implicit differentiation.

The second route to the optimal learning rate and batch size (the first is each group's optimum
and power laws through them, :mod:`jaxscale.fitting.hyperparameters`): one law of all four inputs,
:mod:`jaxscale.laws.hparam_bowl` (Chinchilla's law of tuned runs plus a quadratic bowl in log eta
and log B about eta*(N, D) and B*(D)), fitted by Approach 3 (:func:`jaxscale.fitting.approach3.fit_approach3`:
Huber loss on log residuals, multistart L-BFGS) to every group's runs at once.

Declared, and committed before the joint law was first fitted to Step Law's table: the runs fitted are
those of every group's window (the runs within :data:`~jaxscale.fitting.hyperparameters.WINDOW` of
the group's lowest loss, the rule's step 2), because a bowl quadratic in logs describes the loss
near its minimum only (runs that diverged at the highest rates lie far above any bowl). The
starts are the law's grid with the optima's power laws set to the per-group route's (where it
determined them). The optimum of the fitted law at each group's (N, D) comes from
:func:`jaxscale.optimum.hyperparameters.optimum`, by Newton steps and implicit differentiation, not
from the law's closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from jaxscale.fitting.approach3 import FitResult, fit_approach3
from jaxscale.fitting.hyperparameters import WINDOW, GridRuns, HyperparameterFit
from jaxscale.laws import hparam_bowl
from jaxscale.laws.law import Law
from jaxscale.optimum import hyperparameters as optimum
from jaxscale.runs import schema as rs
from jaxscale.runs.table import RunsTable, load_runs

#: Mis-set factors of the learning rate and the batch whose cost in loss is reported.
MISSET_FACTORS = (0.5, 2.0)


def in_windows(runs: GridRuns) -> np.ndarray:
    """Which runs lie in their group's window: loss within :data:`WINDOW` of the group's lowest."""
    lowest = pd.Series(runs.loss).groupby(runs.group).transform("min").to_numpy()
    return runs.loss <= (1.0 + WINDOW) * lowest


def window_table(runs: GridRuns) -> RunsTable:
    """The runs of every group's window as a runs table of N, D, loss, peak learning rate and batch
    (tokens): the inputs of a law of (N, D, eta, batch)."""
    rows = in_windows(runs)
    frame = pd.DataFrame({rs.N_TOTAL: runs.n, rs.TOKENS: runs.d, rs.LOSS: runs.loss, rs.PEAK_LR: runs.lr,
                          rs.BATCH_TOKENS: runs.batch, "group": runs.group})[rows]
    return load_runs(frame.reset_index(drop=True))


def starts(law: Law, per_group: HyperparameterFit | None) -> np.ndarray:
    """The law's grid, its optima's power laws replaced by the per-group route's where determined."""
    grid = law.init_grid()
    if per_group is None:
        return grid
    names = list(law.vector_names)
    for fit, fields in ((per_group.lr, ("eta0", "alpha_eta", "beta_eta")), (per_group.batch, ("batch0", "beta_batch"))):
        vector = fit.law.to_vector(fit.params)
        if np.all(np.isfinite(vector)):
            for field, value in zip(fields, vector):
                column = names.index(f"log_{field}" if f"log_{field}" in names else field)
                grid[:, column] = value
    return grid


@dataclass(frozen=True)
class JointFit:
    """The joint law fitted (``fit``, Approach 3 on ``fit.runs``, the windows' runs) and, per group,
    its optimum found by implicit differentiation (``optima``: N, D, lr_opt, batch_opt, loss_opt
    and the local exponents; ``loss_lost``: the relative loss added by a learning rate or batch
    off by each factor of :data:`MISSET_FACTORS`)."""

    fit: FitResult
    optima: pd.DataFrame

    @property
    def exponents(self) -> dict[str, float]:
        """The local exponents of eta*(N, D) and B*(D) by implicit differentiation, as Step Law names
        them (alpha = -d log eta*/d log N, beta = d log eta*/d log D, beta_batch = d log B*/d log D),
        their median over the groups (a power-law bowl has the same at every point)."""
        o = self.optima
        return {"alpha": float(-np.median(o["lr_exponent_n"])), "beta": float(np.median(o["lr_exponent_d"])),
                "beta_batch": float(np.median(o["batch_exponent_d"]))}

    def to_dict(self) -> dict[str, Any]:
        """The law's parameters, the fit's objective and size, the exponents and each group's optimum."""
        rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else float(v)) for k, v in row.items()}
                for row in self.optima.to_dict("records")]
        return {"law": self.fit.law.name, "formula": self.fit.law.formula, "params": self.fit.params._asdict(),
                "objective": self.fit.objective, "n_points": self.fit.n_points, "exponents": self.exponents,
                "groups": rows}


def group_optima(law: Law, params: Any, groups: pd.DataFrame) -> pd.DataFrame:
    """Per group (N, D): the law's optimum by implicit differentiation, its local exponents and the
    loss lost by a mis-set learning rate or batch (:data:`MISSET_FACTORS`)."""
    n, d = groups["N"].to_numpy(np.float64), groups["D"].to_numpy(np.float64)
    best = optimum.optimum(law, params, n, d)
    frame = pd.DataFrame({"N": n, "D": d, "lr_opt": best.lr, "batch_opt": best.batch, "loss_opt": best.loss,
                          "lr_exponent_n": best.lr_exponent_n, "lr_exponent_d": best.lr_exponent_d,
                          "batch_exponent_d": best.batch_exponent_d})
    for f in MISSET_FACTORS:
        frame[f"loss_lost_lr_x{f:g}"] = optimum.loss_increase(law, params, n, d, lr_factor=f)
        frame[f"loss_lost_batch_x{f:g}"] = optimum.loss_increase(law, params, n, d, batch_factor=f)
    return frame


def fit_joint(runs: GridRuns, per_group: HyperparameterFit | None = None, law: Law = hparam_bowl.LAW) -> JointFit:
    """Approach 3 of ``law`` (default :mod:`jaxscale.laws.hparam_bowl`) on the windows' runs
    (module docstring), started from ``per_group``'s power laws where given, and its optimum at
    every group's (N, D) by implicit differentiation."""
    optimum.check_joint(law)
    fit = fit_approach3(window_table(runs), law=law, grid=starts(law, per_group))
    return JointFit(fit, group_optima(law, fit.params, runs.groups.reset_index(drop=True)))
