"""Fit the multi-power law to whole loss curves and predict the curves of other schedules.

Luo et al. (2025) fit their law (:mod:`jaxscale.laws.multipower`) to every checkpoint of a few runs
of one model (constant, cosine and a two-stage schedule) and predict the curves of the others.
The fit here is theirs in form and Approach 3's in method: the Huber loss (delta = 1e-3) of the
log residuals of every fitted checkpoint,

    min_theta  sum_runs sum_checkpoints Huber(log L - log Lhat(t; theta)),

theta = (log L0, log A, alpha, log B, log C, beta, gamma), minimised by the batched L-BFGS of
:mod:`jaxscale.core.lbfgs` from the :data:`SCREEN` best of a grid of starts (:func:`starts`, set
from the curves' own loss and peak rate), the lowest converged objective winning. Each run's
rates eta_1..eta_T come from its schedule (:func:`jaxscale.tables.learning_rates.run_learning_rates`, the
warmup's included), so its curve is judged from its first checkpoint on.

Judged, as the paper does, by the relative error |Lhat / L - 1| of every checkpoint of the runs
predicted: its mean over all of them (``curve_mare``), per run, and its largest.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxscale.core import lbfgs
from jaxscale.core.numerics import float64
from jaxscale.curves.lr_annealing_fit import check_named
from jaxscale.fitting.objective import DELTA, huber
from jaxscale.laws import multipower
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable

#: L-BFGS settings: seven coordinates of very different scales (B ~ 1/peak rate).
OPTIONS = lbfgs.Options(max_iter=5000, ftol=1e-13, gtol=1e-10)
#: Starts minimised, the lowest objective values of the grid's (:func:`starts`).
SCREEN = 4
#: The fit reads each run's drops merged in blocks of this many steps
#: (:func:`jaxscale.laws.multipower.curve_of`); predictions are exact. On the 25M model's curves at
#: the authors' parameters, merging by 32 moves no loss of the fitted runs by more than 1.1e-5 of
#: itself (cosine_24000; 2.6e-5 on the WSD run), against prediction errors of ~1e-3, and makes a
#: cosine run's 23,918 rate changes 749.
FIT_BLOCK = 32


class RunCurve(NamedTuple):
    """One run's checkpoints as the law reads them (:class:`~jaxscale.laws.multipower.Curve`) and their losses."""

    curve: multipower.Curve
    loss: jnp.ndarray


#: Runs fitted or predicted together: one :class:`RunCurve` each, of its own length.
CurveData = tuple[RunCurve, ...]


def curve_data(table: RunsTable, lrs: Mapping[str, np.ndarray], runs: Sequence[str], block: int = 1) -> CurveData:
    """The checkpoints of ``runs`` in ``table``, in step order, with their rates ``lrs[run]`` (eta_1..eta_T),
    drops merged in blocks of ``block`` steps (:func:`jaxscale.laws.multipower.curve_of`)."""
    check_named(table, runs)
    ids = table.run_id.astype(str)
    out = []
    for run in runs:
        rows = np.flatnonzero(ids == run)
        rows = rows[np.argsort(table.step[rows], kind="stable")]
        if np.any(table.step[rows] != np.round(table.step[rows])):
            raise ValueError(f"run {run}: checkpoint steps must be whole numbers")
        out.append(RunCurve(multipower.curve_of(lrs[run], table.step[rows], block), table.loss[rows]))
    return tuple(out)


def predict(params: multipower.MultiPowerParams, data: CurveData) -> list[jnp.ndarray]:
    """The law's loss at every checkpoint of every run."""
    return [multipower.loss(params, run.curve) for run in data]


def objective(theta: jnp.ndarray, data: CurveData, delta: float = DELTA) -> jnp.ndarray:
    """sum Huber_delta(log L - log Lhat) over every checkpoint: NaN where the law's loss is <= 0
    (L-BFGS rejects the step)."""
    params = multipower.from_vector(theta)
    return sum(jnp.sum(huber(jnp.log(run.loss) - jnp.log(multipower.loss(params, run.curve)), delta)) for run in data)


def starts(data: CurveData) -> np.ndarray:
    """The grid of starts, in vector coordinates, from the curves: L0 at 0.8 and 0.95 of the lowest
    loss, A at 0.3 and 1, alpha at 0.3 and 0.6, B at 0.2 and 1 over the highest rate that drops (a
    drop of the whole of it then takes 0.2 or 1 nat), C at 1 and 4, beta and gamma at 0.5."""
    low = min(float(np.min(run.loss)) for run in data)
    rates = [np.asarray(run.curve.rate)[np.asarray(run.curve.drop) != 0] for run in data]
    peak = max((float(r.max()) for r in rates if r.size), default=1.0)
    axes = (np.log([0.8 * low, 0.95 * low]), np.log([0.3, 1.0]), (0.3, 0.6), np.log([0.2 / peak, 1.0 / peak]),
            np.log([1.0, 4.0]), (0.5,), (0.5,))
    return np.array(np.meshgrid(*axes, indexing="ij")).reshape(len(axes), -1).T


class Fixed(NamedTuple):
    """Coordinates held at given values: their ``indices`` in the vector (sorted) and ``values`` (in
    vector coordinates: the log of a scale)."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


def fixed_coordinates(fixed: Mapping[str, float] | None) -> Fixed:
    """``fixed`` (parameter name -> value, e.g. {"beta": 0.5}) in vector coordinates; ValueError
    naming an unknown parameter or a scale <= 0."""
    names = multipower.MultiPowerParams._fields
    out = []
    for name, value in (fixed or {}).items():
        if name not in names:
            raise ValueError(f"the multi-power law has no parameter {name!r}; its parameters are {', '.join(names)}")
        index = names.index(name)
        if multipower.LOG_SCALE[index] and not value > 0:
            raise ValueError(f"{name} is a scale: it must be > 0, got {value}")
        out.append((index, float(np.log(value)) if multipower.LOG_SCALE[index] else float(value)))
    if len(out) == len(names):
        raise ValueError("every parameter is fixed: nothing is left to fit")
    out.sort()
    return Fixed(tuple(i for i, _ in out), tuple(v for _, v in out))


def embed(free: jnp.ndarray, indices: tuple[int, ...], values: jnp.ndarray) -> jnp.ndarray:
    """The whole vector: the coordinates ``indices`` at ``values``, the others ``free``'s, in order."""
    columns = iter(jnp.moveaxis(free, -1, 0))
    return jnp.stack([jnp.broadcast_to(values[indices.index(i)], free.shape[:-1]).astype(free.dtype)
                      if i in indices else next(columns) for i in range(len(multipower.LOG_SCALE))], -1)


class Penalty(NamedTuple):
    """A quadratic penalty sum_i weight_i (theta_i - centre_i)^2 added to the objective, over the
    whole vector (:func:`jaxscale.laws.multipower.to_vector` coordinates; a weight of 0 leaves a
    coordinate free): a Gaussian prior's negative log density, up to a constant."""

    centre: jnp.ndarray
    weight: jnp.ndarray


#: No penalty: the objective alone.
NO_PENALTY = Penalty(np.zeros(len(multipower.LOG_SCALE)), np.zeros(len(multipower.LOG_SCALE)))


def penalised(theta: jnp.ndarray, data: CurveData, penalty: Penalty) -> jnp.ndarray:
    """:func:`objective` plus ``penalty`` at ``theta``."""
    return objective(theta, data) + jnp.sum(penalty.weight * (theta - penalty.centre) ** 2)


def _free_objective(free: jnp.ndarray, data: tuple[CurveData, jnp.ndarray, Penalty],
                    indices: tuple[int, ...]) -> jnp.ndarray:
    curves, values, penalty = data
    return penalised(embed(free, indices, values), curves, penalty)


@functools.cache
def _objective_of_free(indices: tuple[int, ...]) -> Any:
    """The objective in the coordinates not in ``indices``, whose values come with the data: one
    object per set of indices, so that the compiled screen and solver (cached on the function) serve
    every fit that holds the same parameters, at any values (a profile compiles once)."""
    return functools.partial(_free_objective, indices=indices)


@functools.cache
def _values(indices: tuple[int, ...]) -> Any:
    return jax.jit(jax.vmap(_objective_of_free(indices), in_axes=(0, None)))


@dataclass(frozen=True)
class MultiPowerFit:
    """The law fitted to the ``fitted`` runs (``params``, ``objective``, ``n_converged`` of the
    ``n_minimised`` starts minimised; ``fixed`` the parameters held at given values) and its prediction of every checkpoint of the fitted and the
    ``predicted`` runs (``predictions``: run_id, step, loss, predicted, fitted; under the rule of
    :mod:`jaxscale.curves.held_out_schedules`, predicted_lo and predicted_hi, and ``rule`` its choice)."""

    params: multipower.MultiPowerParams
    objective: float
    fixed: dict[str, float]
    n_starts: int
    n_minimised: int
    n_converged: int
    fitted: tuple[str, ...]
    predicted: tuple[str, ...]
    predictions: pd.DataFrame
    seconds: float
    rule: dict[str, Any] | None = None

    def _inside(self) -> pd.Series | None:
        """Whether each observed loss lies in its predictive interval, or None without intervals."""
        if "predicted_lo" not in self.predictions:
            return None
        p = self.predictions
        return (p["predicted_lo"] <= p[rs.LOSS]) & (p[rs.LOSS] <= p["predicted_hi"])

    def errors(self) -> pd.DataFrame:
        """Per run: its checkpoints, whether it was fitted, and the mean and largest relative error
        |Lhat / L - 1| over them (None where a prediction is undefined: the law's loss <= 0); with
        predictive intervals (``rule``), the fraction of its checkpoints inside them."""
        frame = self.predictions.assign(error=(self.predictions["predicted"] / self.predictions[rs.LOSS] - 1).abs())
        inside = self._inside()
        frame = frame.assign(inside=inside.astype(float)) if inside is not None else frame
        columns = {"points": ("error", "size"), "fitted": ("fitted", "first"), "mare": ("error", "mean"),
                   "max_are": ("error", "max"), **({"coverage": ("inside", "mean")} if inside is not None else {})}
        return frame.groupby(rs.RUN_ID, sort=False).agg(**columns).reset_index()

    def summary(self) -> dict[str, Any]:
        """The parameters, the fit, and the mean relative error over every predicted checkpoint
        (``curve_mare``; also the mean of the per-run means, and the largest), None if undefined."""
        errors = self.errors()
        judged = self.predictions[~self.predictions["fitted"]]
        error = (judged["predicted"] / judged[rs.LOSS] - 1).abs()
        defined = bool(len(judged)) and bool(np.isfinite(error).all())
        predicted = errors[~errors["fitted"]]
        return {**self.params._asdict(), "objective": self.objective, "fixed": dict(self.fixed),
                "fitted_runs": list(self.fitted),
                "fitted_points": int(self.predictions["fitted"].sum()), "predicted_runs": len(self.predicted),
                "predicted_points": len(judged),
                "curve_mare": float(error.mean()) if defined else None,
                "run_mare": float(predicted["mare"].mean()) if defined else None,
                "curve_max_are": float(error.max()) if defined else None,
                "n_converged": self.n_converged, "undetermined": multipower.undetermined_drop(self.params),
                **self._rule_summary(), "seconds": self.seconds}

    def _rule_summary(self) -> dict[str, Any]:
        """The held-out rule's choice and its intervals' coverage of the predicted checkpoints (empty without a rule)."""
        if self.rule is None:
            return {}
        inside = self._inside()[~self.predictions["fitted"]]
        return {"rule": self.rule, "interval_coverage": float(inside.mean()) if len(inside) else None}


def _frame(data: CurveData, runs: Sequence[str], predicted: Sequence[jnp.ndarray], fitted: bool) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({rs.RUN_ID: run, rs.STEP: np.asarray(d.curve.step), rs.LOSS: np.asarray(d.loss),
                                    "predicted": np.asarray(p), "fitted": fitted})
                      for run, d, p in zip(runs, data, predicted)], ignore_index=True)


@float64
def fit_multipower(table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str], predicted: Sequence[str],
                   *, options: lbfgs.Options = OPTIONS, screen: int = SCREEN,
                   fixed: Mapping[str, float] | None = None, penalty: Penalty = NO_PENALTY,
                   start: np.ndarray | None = None) -> MultiPowerFit:
    """Fit the multi-power law to every checkpoint of the runs ``fitted`` and predict every
    checkpoint of the runs ``predicted``, each run's rates ``lrs[run]`` (eta_1..eta_T) from step 1;
    the parameters named in ``fixed`` are held at their values (a profile of the objective in them,
    or a law with a parameter known); ``penalty`` is added to the objective (reported without
    it); ``start``, vectors ([S, 7]) minimised instead of the grid's best (e.g. a nearby fit's)."""
    if not fitted:
        raise ValueError("name at least one run to fit")
    t0 = time.perf_counter()
    held = fixed_coordinates(fixed)
    free = [i for i in range(len(multipower.LOG_SCALE)) if i not in held.indices]
    data = jax.tree.map(jnp.asarray, curve_data(table, lrs, list(fitted), FIT_BLOCK))
    curves = data
    penalty = Penalty(*(jnp.asarray(a, jnp.float64) for a in penalty))
    data = (curves, jnp.asarray(held.values, jnp.float64), penalty)
    if start is None:
        grid = starts(curves)[:, free]
        grid = np.unique(grid, axis=0) if held.indices else grid  # starts that differ in a fixed coordinate alone are one
        values = np.asarray(_values(held.indices)(jnp.asarray(grid), data))
        kept = grid[np.argsort(np.where(np.isfinite(values), values, np.inf), kind="stable")[:screen]]
    else:
        grid = kept = np.atleast_2d(np.asarray(start, np.float64))[:, free]
    solve = lbfgs.solver(_objective_of_free(held.indices), options)
    sol = jax.tree.map(np.asarray, solve(jnp.asarray(kept), data))
    best = lbfgs.best_converged(sol)
    theta = embed(jnp.asarray(sol.theta[best]), *held)
    params = jax.tree.map(float, multipower.from_vector(theta))
    value = float(objective(theta, curves))
    data = jax.tree.map(jnp.asarray, curve_data(table, lrs, list(fitted)))
    frames = [_frame(data, fitted, predict(params, data), True)]
    if predicted:
        target = jax.tree.map(jnp.asarray, curve_data(table, lrs, list(predicted)))
        frames.append(_frame(target, predicted, predict(params, target), False))
    return MultiPowerFit(params, value, dict(fixed or {}), len(grid), len(kept),
                         int(np.sum(sol.converged)),
                         tuple(fitted), tuple(predicted), pd.concat(frames, ignore_index=True),
                         time.perf_counter() - t0)
