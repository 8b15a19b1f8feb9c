"""The joint law L(N, D, eta, B) fitted to hyperparameter grids, and its optima by implicit differentiation.

The second route to the optimal learning rate and batch size (the first is each group's optimum
and power laws through them, :mod:`jaxscale.hyperparameters.per_group`): one law of all four inputs,
:mod:`jaxscale.laws.hparam_bowl` (Chinchilla's law of tuned runs plus a quadratic bowl in log eta
and log B about eta*(N, D) and B*(D)), fitted to every group's runs at once.

The runs fitted are those of every group's window (the runs within
:data:`~jaxscale.hyperparameters.per_group.WINDOW` of the group's lowest loss, the rule's step 2),
because a bowl quadratic in logs describes the loss near its minimum only (runs that diverged at
the highest rates lie far above any bowl); declared, and committed, before the joint law was
first fitted to Step Law's table.

**Group levels.** Fitted by plain Approach 3 (Huber loss on the log residuals r_i of every run,
:func:`jaxscale.fitting.approach3.fit_approach3`), the law is degenerate on Step Law's table (found
on its first fits, and kept as a finding): Chinchilla's five parameters miss the 17 groups' lowest
losses by up to 1.0% (the groups differ in shape and data order as well as in N and D), as much as
the windows' whole depth, and the fit spends the bowl on those misses: it flattens the bowl
(k_eta -> 1e-5) and moves eta*(N, D) far outside the grids (alpha_eta -> -11 or +40), so that
k_eta u^2 becomes a per-group offset. A statistical model with a level per group stops that:

    r_i = log L_i - log Lhat_i,   l_g = mean of r_i over group g,
    minimise  sum_i Huber(r_i - l_g(i)) + sum_g Huber(l_g),

the within-group shape (the bowl) fitted to the runs, and the group levels l_g (what the law's
Chinchilla part misses of each group) to zero, each group once: Approach 3's Huber loss (delta =
1e-3) with the groups' levels profiled out as in a random-intercept model. The levels are
reported: their spread is the part of the loss no law of (N, D) here describes. The starts are
the law's grid with the optima's power laws set to the per-group route's (where it determined
them); every start is minimised by the batched L-BFGS of :mod:`jaxscale.core.lbfgs`, the lowest
converged objective winning. The optimum of the fitted law at each group's (N, D) comes from
:func:`jaxscale.optimum.hparam_optimum.optimum`, by Newton steps and implicit differentiation,
not from the law's closed form.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxscale.core import lbfgs
from jaxscale.core.numerics import float64
from jaxscale.hyperparameters.per_group import WINDOW, GridRuns, HyperparameterFit
from jaxscale.fitting.objective import huber
from jaxscale.laws import hparam_bowl
from jaxscale.laws.law import Law
from jaxscale.optimum import hparam_optimum as optimum
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable, read_runs_table

#: L-BFGS settings of the joint fit: twelve-odd coordinates of very different scales take
#: thousands of iterations (a start still moving at the limit is not converged).
JOINT_OPTIONS = lbfgs.Options(max_iter=20000, ftol=1e-13, gtol=1e-10)

#: Mis-set factors of the learning rate and the batch whose cost in loss is reported.
MISSET_FACTORS = (0.5, 2.0)
#: The optima's exponents in Step Law's names, and the per-group route's law and parameter each is
#: compared with (:class:`~jaxscale.hyperparameters.per_group.HyperparameterFit`'s ``lr`` and ``batch``).
EXPONENTS = {"alpha": ("lr", "alpha"), "beta": ("lr", "beta"), "beta_batch": ("batch", "beta")}


def median_exponents(lr_exponent_n: np.ndarray, lr_exponent_d: np.ndarray,
                     batch_exponent_d: np.ndarray) -> dict[str, np.ndarray]:
    """The exponents of :data:`EXPONENTS` from the local ones at every group (last axis: [G] for a
    fit, [S, G] for draws): alpha = -d log eta*/d log N, beta = d log eta*/d log D and
    beta_batch = d log B*/d log D, each the median over the groups where defined (a power-law bowl
    has the same at every point)."""
    return {"alpha": -np.nanmedian(lr_exponent_n, axis=-1), "beta": np.nanmedian(lr_exponent_d, axis=-1),
            "beta_batch": np.nanmedian(batch_exponent_d, axis=-1)}


def in_windows(runs: GridRuns) -> np.ndarray:
    """Which runs lie in their group's window: loss within :data:`WINDOW` of the group's lowest."""
    lowest = pd.Series(runs.loss).groupby(runs.group).transform("min").to_numpy()
    return runs.loss <= (1.0 + WINDOW) * lowest


def window_table(runs: GridRuns) -> RunsTable:
    """The runs of every group's window as a runs table of N, D, loss, peak learning rate and batch
    (tokens): the inputs of a law of (N, D, eta, batch)."""
    rows = in_windows(runs)
    frame = pd.DataFrame({rs.N_TOTAL: runs.n, rs.TOKENS: runs.d, rs.LOSS: runs.loss, rs.PEAK_LR: runs.lr,
                          rs.BATCH_TOKENS: runs.batch})[rows]
    return read_runs_table(frame.reset_index(drop=True))


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


class LevelData(NamedTuple):
    """The windows' runs in logs (one array per input of the law), their log loss and ``members``,
    the [n, G] one-hot matrix of each run's group."""

    log_x: tuple[jnp.ndarray, ...]
    log_y: jnp.ndarray
    members: jnp.ndarray


def level_data(law: Law, table: RunsTable, group: np.ndarray) -> LevelData:
    members = (np.asarray(group)[:, None] == np.unique(group)[None, :]).astype(np.float64)
    return LevelData(tuple(np.log(x) for x in table.law_inputs(law.inputs)), np.log(table.loss), members)


def levels(law: Law, theta: jnp.ndarray, data: LevelData) -> tuple[jnp.ndarray, jnp.ndarray]:
    """(r, l): every run's log residual and every group's level, the mean residual of its runs."""
    r = data.log_y - law.log_loss(law.from_vector(theta), *data.log_x)
    return r, (data.members.T @ r) / jnp.sum(data.members, axis=0)


def level_objective(theta: jnp.ndarray, data: LevelData, law: Law) -> jnp.ndarray:
    """sum_i Huber(r_i - l_g(i)) + sum_g Huber(l_g) (module docstring)."""
    r, level = levels(law, theta, data)
    return jnp.sum(huber(r - data.members @ level)) + jnp.sum(huber(level))


@functools.cache
def _objective(law: Law):
    return functools.partial(level_objective, law=law)


@dataclass(frozen=True)
class JointFit:
    """The joint law fitted to the windows' runs (``params``, ``objective``, ``n_points`` runs,
    ``n_converged`` of ``n_starts`` starts; ``levels`` each group's level, the mean log residual of
    its runs) and, per group, its optimum found by implicit differentiation (``optima``: N, D,
    lr_opt, batch_opt, loss_opt, the local exponents, and the relative loss added by a learning
    rate or batch off by each factor of :data:`MISSET_FACTORS`)."""

    law: Law
    params: NamedTuple
    objective: float
    n_points: int
    n_starts: int
    n_converged: int
    levels: np.ndarray
    optima: pd.DataFrame

    @property
    def exponents(self) -> dict[str, float]:
        """The exponents of eta*(N, D) and B*(D) by implicit differentiation (:func:`median_exponents`)."""
        o = self.optima
        return {k: float(v) for k, v in median_exponents(o["lr_exponent_n"].to_numpy(), o["lr_exponent_d"].to_numpy(),
                                                         o["batch_exponent_d"].to_numpy()).items()}

    def to_dict(self) -> dict[str, Any]:
        """The law's parameters, the fit's objective and size, the exponents and each group's optimum
        and level (None where undefined)."""
        rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else float(v)) for k, v in row.items()}
                for row in self.optima.assign(level=self.levels).to_dict("records")]
        return {"law": self.law.name, "formula": self.law.formula, "params": self.params._asdict(),
                "objective": self.objective, "n_points": self.n_points, "n_starts": self.n_starts,
                "n_converged": self.n_converged, "exponents": self.exponents, "groups": rows}


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


class SharedBowl(NamedTuple):
    """One bowl shape for every group, each group its own centre: the shape (``k_eta``,
    ``k_batch``, ``rho``), each group's ``lr_opt``, ``batch_opt`` and tuned loss ``floor`` ([G], in
    the order of :attr:`~jaxscale.hyperparameters.per_group.GridRuns.groups`), and whether L-BFGS
    ``converged``."""

    k_eta: float
    k_batch: float
    rho: float
    lr_opt: np.ndarray
    batch_opt: np.ndarray
    floor: np.ndarray
    converged: bool


def _shared_bowl_objective(theta: jnp.ndarray, data: tuple[jnp.ndarray, ...]) -> jnp.ndarray:
    log_lr, log_batch, log_loss, group = data
    count = (theta.shape[0] - 3) // 3
    centre_lr, centre_batch, floor = theta[3:3 + count], theta[3 + count:3 + 2 * count], theta[3 + 2 * count:]
    added = hparam_bowl.tilted_quadratic(log_lr - centre_lr[group], log_batch - centre_batch[group],
                                         jnp.exp(theta[0]), jnp.exp(theta[1]), jnp.tanh(theta[2]))
    return jnp.sum(huber(log_loss - hparam_bowl.log_loss_above(floor[group], added)))


@float64
def fit_shared_bowl(runs: GridRuns, per_group: HyperparameterFit, options: lbfgs.Options = JOINT_OPTIONS) -> SharedBowl:
    """The joint law with its power laws of the optima relaxed: one tilted quadratic bowl
    (:func:`jaxscale.laws.hparam_bowl.tilted_quadratic`) shared by every group, each group its own
    centre and floor, fitted to the windows' runs by the joint fit's Huber loss of log residuals
    (rho = tanh of a free coordinate, so that the bowl keeps a minimum). Between the two routes: its
    centres differ from the per-group quadratics' optima by what one shared shape moves them, and
    the power laws through them from the joint law's by what placing the centres on a power law
    inside the loss fit does. Started from the per-group optima (a group's lowest run where its
    optimum is undefined), curvatures 0.01 and tilt 0.3."""
    rows = in_windows(runs)
    group = runs.group[rows]
    count = int(runs.group.max()) + 1
    lowest = [np.argmin(np.where(runs.group == g, runs.loss, np.inf)) for g in range(count)]
    o = per_group.optima
    centre_lr = np.where(np.isfinite(o["lr_opt"]), o["lr_opt"], runs.lr[lowest])
    centre_batch = np.where(np.isfinite(o["batch_opt"]), o["batch_opt"], runs.batch[lowest])
    theta0 = np.r_[np.log(0.01), np.log(0.01), np.arctanh(0.3), np.log(centre_lr), np.log(centre_batch),
                   np.log(runs.loss[lowest])]
    data = tuple(jnp.asarray(v) for v in (np.log(runs.lr[rows]), np.log(runs.batch[rows]), np.log(runs.loss[rows]),
                                          group))
    sol = lbfgs.minimize(_shared_bowl_objective, jnp.asarray(theta0), data, options)
    theta = np.asarray(sol.theta)
    return SharedBowl(float(np.exp(theta[0])), float(np.exp(theta[1])), float(np.tanh(theta[2])),
                      np.exp(theta[3:3 + count]), np.exp(theta[3 + count:3 + 2 * count]),
                      np.exp(theta[3 + 2 * count:]), bool(sol.converged))


@float64
def fit_joint(runs: GridRuns, per_group: HyperparameterFit | None = None, law: Law = hparam_bowl.LAW,
              options: lbfgs.Options = JOINT_OPTIONS) -> JointFit:
    """``law`` (default :mod:`jaxscale.laws.hparam_bowl`) fitted to the windows' runs with group
    levels (module docstring), started from ``per_group``'s power laws where given, and its optimum
    at every group's (N, D) by implicit differentiation."""
    optimum.check_joint(law)
    rows = in_windows(runs)
    data = level_data(law, window_table(runs), runs.group[rows])
    grid = starts(law, per_group)
    sol = lbfgs.solver(_objective(law), options)(jnp.asarray(grid), data)
    best = lbfgs.best_converged(sol)
    theta = np.asarray(sol.theta[best])
    params = jax.tree.map(float, law.from_vector(theta))
    level = np.asarray(levels(law, jnp.asarray(theta), data)[1])
    return JointFit(law, params, float(sol.value[best]), int(rows.sum()), len(grid), int(np.sum(sol.converged)),
                    level, group_optima(law, params, runs.groups.reset_index(drop=True)))
