"""The optimal learning rate and batch size of each (N, D) group of runs, and power laws through them.

A hyperparameter grid trains one model size N on one token budget D at many peak learning rates
eta and batch sizes B (a *group*); Step Law's table (Li et al. 2025) has 17 such groups of ~120
runs. The optimum of each group is read off its runs by one rule, and power laws in N and D are
fitted through the optima (:mod:`jaxscale.laws.steplaw`'s forms, or any law linear in its vector).

**The per-group optimum rule** (declared here, and committed, before it was run on Step Law's table):

1. *Loss*: the table's smoothed final loss where it has one (Step Law's ``smooth loss``, the loss
   their own fits read: it averages out the step-to-step noise of the last checkpoints), else its
   loss.
2. *Window*: the group's runs whose loss is within :data:`WINDOW` = 1% of the group's lowest,
   L <= (1 + 0.01) min L.
3. *Surface*: ordinary least squares of log L on a full quadratic in (x, y) = (log eta, log B) over
   the window: log L = c + g.z + z'Hz/2, z = (x, y) less the window's mean; six coefficients.
4. *Optimum*: the stationary point z* = -H^(-1) g. Its eta* is defined when H is positive definite
   and x* lies within the window's range of log eta (no extrapolation past the runs that place
   it); likewise B* with y*. The window must hold at least :data:`MIN_DISTINCT` = 3 distinct
   values of each of eta and B (else that coordinate is undefined) and six distinct (eta, B)
   points (else both are). An undefined optimum is reported as such and left out of the power
   law.

Why this rule: the grid spaces eta and B by factors of about sqrt(2), so the grid's minimum moves
in steps of 0.35 in log eta; with N spanning a factor of 5 (log range 1.6) such steps alone move
an exponent of N by ~0.1, more than the precision asked. A quadratic in logs places the minimum
between grid points. Near its minimum a smooth loss surface is quadratic in any coordinates, and
in logs the bowl is close to symmetric (Step Law's heatmaps); the window keeps the fit near the
minimum and drops the runs that diverged (losses of 11 nats at the highest rates), which no bowl
describes. 1% of a ~2.5-nat loss is 0.025 nats: wide enough for a 3 x 3 neighbourhood of the
minimum on a sqrt(2) grid (six coefficients need more than six points), narrow enough that the
bowl's asymmetry (loss rises faster towards high rates) stays small. Step Law's own selection
(their released ``fit_tool``) keeps every run within 0.25% of the group's minimum and regresses
log eta and log B of all those runs on log N and log D, without a per-group optimum; a 0.25%
window is too small for a quadratic.

**The power laws** are fitted by least squares in logs, one point per group with a defined
optimum (each group weighs the same): log eta* = log A - alpha log N + beta log D and
log B* = log A_B + beta_B log D (Step Law's forms), or any law whose log is linear in its vector
(:func:`fit_log_linear`).

**Intervals** (95%, percentile) come from a bootstrap over runs within groups: each resample draws
every group's runs with replacement (as many as it has), applies the rule to the resampled group
(a run drawn k times weighs k in the window's least squares), and refits the power laws to the
optima defined in that resample; resamples whose power law is undetermined (too few groups
defined) are left out and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxscale.core.numerics import float64
from jaxscale.fitting.bootstrap import within_group_counts
from jaxscale.laws import steplaw
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Relative width of the window of runs a group's quadratic is fitted to (rule, step 2).
WINDOW = 0.01
#: Distinct values of eta (and of B) the window must hold for that coordinate (rule, step 4).
MIN_DISTINCT = 3
#: A quadratic surface has six coefficients: the window needs this many distinct (eta, B) points.
QUADRATIC_TERMS = 6
#: A normal matrix whose condition number exceeds this determines no solution (float64).
MAX_CONDITION = 1e12
#: Columns naming each run's peak learning rate, batch size and smoothed loss, found case-insensitively.
LR_COLUMNS = ("peak_lr", "lr", "learning_rate")
BATCH_COLUMNS = ("batch_tokens", "batch_size", "bs", "batch")
SMOOTHED_COLUMNS = ("smooth loss", "smooth_loss", "smoothed_loss", "smoothed loss")


@dataclass(frozen=True)
class GridRuns:
    """The runs of hyperparameter grids: per run its group's N and D, its peak learning rate,
    batch size in tokens and loss, and ``group`` the index (0..G-1) of its (N, D) group."""

    n: np.ndarray
    d: np.ndarray
    lr: np.ndarray
    batch: np.ndarray
    loss: np.ndarray
    group: np.ndarray
    loss_column: str

    @property
    def groups(self) -> pd.DataFrame:
        """One row per group: N, D and its number of runs."""
        frame = pd.DataFrame({"N": self.n, "D": self.d, "group": self.group})
        return frame.groupby("group").agg(N=("N", "first"), D=("D", "first"), runs=("N", "size"))


def _column(frame: pd.DataFrame, explicit: str | None, candidates: Sequence[str], what: str) -> str:
    folded = {str(c).strip().lower().replace("_", " "): c for c in frame.columns}
    names = [explicit] if explicit else list(candidates)
    for name in names:
        hit = folded.get(name.strip().lower().replace("_", " "))
        if hit is not None:
            return hit
    if explicit:
        raise ValueError(f"no column {explicit!r} for the {what}; columns are {list(map(str, frame.columns))}")
    raise ValueError(f"no column for the {what} (looked for {', '.join(candidates)}); columns are "
                     f"{list(map(str, frame.columns))}")


def _positive_column(frame: pd.DataFrame, column: str) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    if bad.size:
        raise ValueError(f"row {bad[0] + 1}, column {column!r}: must be a number > 0, got {frame[column].iloc[bad[0]]!r}")
    return values


def grid_runs(table: RunsTable, *, lr_col: str | None = None, batch_col: str | None = None,
              smoothed_col: str | None = None, sequence_length: float = 1.0) -> GridRuns:
    """The runs of ``table`` as hyperparameter grids, grouped by (N, D).

    ``lr_col`` and ``batch_col`` name the peak learning rate and batch size (default: the first of
    :data:`LR_COLUMNS`, :data:`BATCH_COLUMNS` present); a batch counted in sequences becomes tokens
    with ``sequence_length`` (Step Law's ``bs`` counts sequences of 2,048 tokens). The loss is the
    smoothed loss of ``smoothed_col`` or of a column of :data:`SMOOTHED_COLUMNS` where the table has
    one (rule, step 1), else the table's loss."""
    if not (math.isfinite(sequence_length) and sequence_length > 0):
        raise ValueError(f"sequence_length must be a number > 0, got {sequence_length}")
    frame = table.frame
    lr = _positive_column(frame, _column(frame, lr_col, LR_COLUMNS, "peak learning rate"))
    batch = _positive_column(frame, _column(frame, batch_col, BATCH_COLUMNS, "batch size")) * sequence_length
    try:
        loss_column = _column(frame, smoothed_col, SMOOTHED_COLUMNS, "smoothed loss")
        loss = _positive_column(frame, loss_column)
    except ValueError:
        if smoothed_col:
            raise
        loss_column, loss = "loss", table.loss
    keys = pd.MultiIndex.from_arrays([table.n, table.d])
    group = pd.factorize(keys, sort=True)[0]
    return GridRuns(table.n, table.d, lr, batch, loss, group, str(loss_column))


class Optima(NamedTuple):
    """Per-group optima in logs, [..., G], and whether each is defined (rule, step 4)."""

    log_lr: np.ndarray
    log_batch: np.ndarray
    lr_defined: np.ndarray
    batch_defined: np.ndarray
    window_runs: np.ndarray


def _distinct(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Number of distinct rows of ``values`` ([n] or [n, k]) selected by each row of ``mask`` [R, n]."""
    labels = np.unique(values, axis=0, return_inverse=True)[1].reshape(-1)
    one_hot = (labels[:, None] == np.arange(labels.max() + 1)).astype(np.float64)
    return ((mask.astype(np.float64) @ one_hot) > 0).sum(axis=1)


def quadratic_optimum(log_lr: np.ndarray, log_batch: np.ndarray, log_loss: np.ndarray,
                      weights: np.ndarray) -> Optima:
    """The rule's optimum (module docstring) of one group's runs, under each row of run ``weights``
    [R, n] (1 for the runs as they are, bootstrap counts for resamples): [R] fields."""
    weights = np.atleast_2d(np.asarray(weights, np.float64))
    drawn = weights > 0
    lowest = np.min(np.where(drawn, log_loss, np.inf), axis=1, keepdims=True)
    window = drawn & (log_loss <= lowest + math.log1p(WINDOW))
    w = weights * window
    total = w.sum(axis=1, keepdims=True)
    x = log_lr - (w * log_lr).sum(axis=1, keepdims=True) / total
    y = log_batch - (w * log_batch).sum(axis=1, keepdims=True) / total
    terms = np.stack([np.ones_like(x), x, y, x * x, x * y, y * y], axis=-1)  # [R, n, 6]
    normal = np.einsum("rn,rni,rnj->rij", w, terms, terms)
    rhs = np.einsum("rn,rni,n->ri", w, terms, log_loss)
    points = _distinct(np.column_stack([log_lr, log_batch]), window)
    solvable = (points >= QUADRATIC_TERMS) & (np.linalg.cond(normal) < MAX_CONDITION)
    safe = np.where(solvable[:, None, None], normal, np.eye(QUADRATIC_TERMS))
    _, gx, gy, hxx, hxy, hyy = np.moveaxis(np.linalg.solve(safe, rhs[..., None])[..., 0], -1, 0)
    det = 4 * hxx * hyy - hxy * hxy
    positive = solvable & (hxx > 0) & (det > 0)
    det = np.where(positive, det, 1.0)
    zx = (hxy * gy - 2 * hyy * gx) / det  # -H^-1 g with H = [[2hxx, hxy], [hxy, 2hyy]]
    zy = (hxy * gx - 2 * hxx * gy) / det
    x_star = zx + (w * log_lr).sum(axis=1) / total[:, 0]
    y_star = zy + (w * log_batch).sum(axis=1) / total[:, 0]

    def inside(star: np.ndarray, values: np.ndarray) -> np.ndarray:
        lo = np.min(np.where(window, values, np.inf), axis=1)
        hi = np.max(np.where(window, values, -np.inf), axis=1)
        return positive & (_distinct(values, window) >= MIN_DISTINCT) & (star >= lo) & (star <= hi)

    lr_ok, batch_ok = inside(x_star, log_lr), inside(y_star, log_batch)
    return Optima(np.where(lr_ok, x_star, np.nan), np.where(batch_ok, y_star, np.nan), lr_ok, batch_ok,
                  window.sum(axis=1))


def group_optima(runs: GridRuns, weights: np.ndarray | None = None) -> Optima:
    """The rule's optimum of every group: [G] fields, or [R, G] under run ``weights`` [R, n]."""
    single = weights is None
    weights = np.ones((1, len(runs.loss))) if single else np.atleast_2d(weights)
    per_group = []
    for g in range(int(runs.group.max()) + 1):
        rows = runs.group == g
        per_group.append(quadratic_optimum(np.log(runs.lr[rows]), np.log(runs.batch[rows]), np.log(runs.loss[rows]),
                                           weights[:, rows]))
    stacked = Optima(*(np.stack(field_, axis=-1) for field_ in zip(*per_group)))
    return Optima(*(v[0] for v in stacked)) if single else stacked


@float64
def _design(law: Law, log_x: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(offset, J) of a law linear in its vector: log y = offset + J theta, [G] and [G, p]; ValueError
    if the law is not linear in its vector (not a power law in logs)."""
    def log_y(theta: jnp.ndarray) -> jnp.ndarray:
        return law.log_loss(law.from_vector(theta), *(jnp.asarray(x) for x in log_x))

    zero = jnp.zeros(law.n_params)
    offset, jac = np.asarray(log_y(zero)), np.asarray(jax.jacfwd(log_y)(zero))
    probe = np.linspace(0.3, 0.9, law.n_params)
    if not np.allclose(np.asarray(log_y(jnp.asarray(probe))), offset + jac @ probe, rtol=1e-9, atol=1e-9):
        raise ValueError(f"the {law.name} law is not linear in its vector {law.vector_names}: not a power law in logs")
    return offset, jac


def fit_log_linear(law: Law, inputs: Sequence[np.ndarray], values: np.ndarray,
                   weights: np.ndarray | None = None) -> np.ndarray:
    """Least squares in logs of a law linear in its vector (a power law: log y = offset + J theta)
    to ``values`` at ``inputs`` (one array per input of the law, [G]), under row ``weights`` [..., G]
    (0 leaves a point out): the law's vector, [..., p]; NaN where the weighted points do not
    determine it (a normal matrix of condition above :data:`MAX_CONDITION`)."""
    offset, jac = _design(law, [np.log(np.asarray(x, np.float64)) for x in inputs])
    log_y = np.log(np.asarray(values, np.float64))
    w = np.ones(log_y.shape) if weights is None else np.asarray(weights, np.float64)
    w = np.where(np.isfinite(log_y), w, 0.0)
    r = np.where(w > 0, log_y - offset, 0.0)
    normal = np.einsum("...g,gi,gj->...ij", w, jac, jac)
    rhs = np.einsum("...g,gi,...g->...i", w, jac, r)
    ok = np.linalg.cond(normal) < MAX_CONDITION
    safe = np.where(ok[..., None, None], normal, np.eye(law.n_params))
    theta = np.linalg.solve(safe, rhs[..., None])[..., 0]
    return np.where(ok[..., None], theta, np.nan)


def interval95(draws: np.ndarray) -> tuple[float, float] | None:
    """The central 95% interval of the finite ``draws`` (None if there are none)."""
    finite = np.asarray(draws)[np.isfinite(draws)]
    return None if not finite.size else tuple(float(q) for q in np.percentile(finite, [2.5, 97.5]))


@dataclass(frozen=True)
class PowerLawFit:
    """A law of an optimal hyperparameter fitted to the groups' optima: ``params`` (NaN where the
    defined optima do not determine them), ``draws`` the bootstrap refits ([R] fields, NaN where
    undetermined) and ``groups`` how many optima entered the fit."""

    law: Law
    params: NamedTuple
    draws: NamedTuple | None
    groups: int

    def interval(self, name: str) -> tuple[float, float] | None:
        """The 95% bootstrap interval of parameter ``name`` (None without a bootstrap or draws)."""
        return None if self.draws is None else interval95(np.asarray(getattr(self.draws, name)))

    @property
    def resamples_used(self) -> int:
        """Bootstrap resamples whose power law was determined."""
        return 0 if self.draws is None else int(np.isfinite(np.asarray(self.draws[0])).sum())

    def rows(self) -> list[dict[str, Any]]:
        """One row per parameter: quantity, estimate, lower, upper (None where undefined)."""
        out = []
        for name in self.law.param_names:
            value = float(getattr(self.params, name))
            ci = self.interval(name)
            out.append({"law": self.law.name, "quantity": name, "estimate": value if math.isfinite(value) else None,
                        "lower": None if ci is None else ci[0], "upper": None if ci is None else ci[1]})
        return out


def _fit(law: Law, inputs: Sequence[np.ndarray], log_values: np.ndarray, defined: np.ndarray) -> NamedTuple:
    theta = fit_log_linear(law, inputs, np.exp(log_values), defined.astype(np.float64))
    return law.from_vector(theta)


@dataclass(frozen=True)
class HyperparameterFit:
    """The groups' optima (``optima``: one row per group, with N, D, runs, window runs, eta*, B*,
    NaN where undefined, and each optimum's 95% bootstrap interval, ``lr_opt_lower`` ... ``batch_opt_upper``,
    NaN without a bootstrap or where no resample defines it) and the power laws fitted through them (``lr``: eta*(N, D); ``batch``:
    B*(D)), with bootstrap intervals from ``resamples`` resamples of runs within groups."""

    optima: pd.DataFrame
    lr: PowerLawFit
    batch: PowerLawFit
    loss_column: str
    resamples: int
    seed: int
    window: float = WINDOW
    published: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """One row per fitted parameter: law, quantity, estimate, lower, upper, and the published
        value where the law has one (Step Law's)."""
        frame = pd.DataFrame(self.lr.rows() + self.batch.rows())
        frame["published"] = [self.published.get(f"{r['law']}.{r['quantity']}") for _, r in frame.iterrows()]
        return frame

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready values: the rule's settings, each group's optimum (None where
        undefined) and each law's parameters with 95% intervals."""
        groups = []
        for row in self.optima.to_dict("records"):
            groups.append({k: (None if isinstance(v, float) and not math.isfinite(v) else
                               v.item() if isinstance(v, np.generic) else v) for k, v in row.items()})
        laws = {}
        for fit in (self.lr, self.batch):
            laws[fit.law.name] = {"formula": fit.law.formula, "groups": fit.groups,
                                  "resamples_used": fit.resamples_used,
                                  "params": {r["quantity"]: {k: r[k] for k in ("estimate", "lower", "upper")}
                                             for r in fit.rows()}}
        return {"loss_column": self.loss_column, "window": self.window, "resamples": self.resamples,
                "seed": self.seed, "groups": groups, "laws": laws, "published": self.published}


def _published() -> dict[str, float]:
    values = {f"{steplaw.LR_LAW.name}.{k}": v for k, v in steplaw.PUBLISHED_LR._asdict().items()}
    values.update({f"{steplaw.BATCH_LAW.name}.{k}": v for k, v in steplaw.PUBLISHED_BATCH._asdict().items()})
    return values


#: Published laws of the optimal learning rate a sweep can centre its grid on (``SweepConfig.lr_centre``).
CENTRES = {"steplaw": (steplaw.LR_LAW, steplaw.PUBLISHED_LR)}


@float64
def centred_rates(rates: Sequence[float], reference: float, centre: str, n: float, d: float) -> tuple[float, ...]:
    """The learning-rate grid ``rates`` scaled so that ``reference`` (one of them) lands on the
    optimal rate eta*(N, D) of the published law ``centre`` (:data:`CENTRES`), its ratios kept: a
    sweep's grid for a model of ``n`` parameters trained on ``d`` tokens, so that each size's optimum
    falls inside its grid rather than on an edge."""
    if centre not in CENTRES:
        raise ValueError(f"unknown learning-rate centre {centre!r}; choose one of {sorted(CENTRES)}")
    law, params = CENTRES[centre]
    optimum = float(law.evaluate(params, np.float64(n), np.float64(d)))
    return tuple(float(r) * optimum / reference for r in rates)


@float64
def fit_hyperparameters(runs: GridRuns, *, resamples: int = 1000, seed: int = 0,
                        lr_law: Law = steplaw.LR_LAW, batch_law: Law = steplaw.BATCH_LAW) -> HyperparameterFit:
    """The rule's optimum of every group (module docstring), ``lr_law`` (default Step Law's
    eta*(N, D)) and ``batch_law`` (B*(D)) fitted through them by least squares in logs, and 95%
    intervals from ``resamples`` bootstrap resamples of runs within groups (0: none)."""
    if resamples < 0:
        raise ValueError(f"resamples must be >= 0, got {resamples}")
    table = runs.groups
    inputs = {"N": table["N"].to_numpy(np.float64), "D": table["D"].to_numpy(np.float64)}
    optima = group_optima(runs)
    fits = {}
    draws = group_optima(runs, within_group_counts(runs.group, resamples, seed)) if resamples else None
    for law, log_values, defined, boot in (
        (lr_law, optima.log_lr, optima.lr_defined, None if draws is None else (draws.log_lr, draws.lr_defined)),
        (batch_law, optima.log_batch, optima.batch_defined,
         None if draws is None else (draws.log_batch, draws.batch_defined)),
    ):
        law_inputs = [inputs[name] for name in law.inputs]
        params = _fit(law, law_inputs, log_values, defined)
        refits = None if boot is None else _fit(law, law_inputs, *boot)
        fits[law] = PowerLawFit(law, jax.tree.map(float, params), refits, int(defined.sum()))
    frame = table.reset_index(drop=True).assign(
        window_runs=optima.window_runs, lr_opt=np.exp(optima.log_lr), batch_opt=np.exp(optima.log_batch))
    for name, values in (("lr_opt", None if draws is None else draws.log_lr),
                         ("batch_opt", None if draws is None else draws.log_batch)):
        bounds = [interval95(values[:, g]) if values is not None else None for g in range(len(frame))]
        frame[f"{name}_lower"] = [math.exp(b[0]) if b else math.nan for b in bounds]
        frame[f"{name}_upper"] = [math.exp(b[1]) if b else math.nan for b in bounds]
    return HyperparameterFit(frame, fits[lr_law], fits[batch_law], runs.loss_column, resamples, seed,
                             published=_published())
