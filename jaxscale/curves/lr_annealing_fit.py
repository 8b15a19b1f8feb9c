"""Fit the annealing law to whole learning curves and predict the curves of other schedules.

Tissue et al. (2024) fit L(s) = L0 + A S1^(-alpha) - C S2 (:mod:`jaxscale.laws.lr_annealing`) per
model on the checkpoints of one or two runs, then predict any other schedule of the same model.
The checkpoints fitted start at :data:`TRANSIENT_WARMUPS` times the run's warmup
(:func:`in_domain`; the predictions cover every checkpoint, and are judged on those from the same step on).
Here a *group* is the runs that share one law (one model size; for the (Mis)Fitting table one
size and peak learning rate), split into the runs fitted and the runs predicted:

- :func:`sweep_split` (jaxscale's sweeps): fit the constant-rate run at the cosine runs' peak rate
  and the cosine run of the same length (the 1x budget), predict the other cosine lengths;
- :func:`longest_split` (the (Mis)Fitting table): fit the longest run, predict the shorter ones;
- :func:`explicit_split`: the runs named.

S1 and S2 of every checkpoint are computed from each run's per-step rates
(:func:`with_areas`, one batched call of :func:`jaxscale.laws.schedule_areas.schedule_areas`) and
become columns of the runs table, so the fit is Approach 3's Huber multistart L-BFGS
(:func:`jaxscale.fitting.approach3.fit_approach3`) on the lr-annealing law, unchanged. The decay
factor lambda of S2 is fixed (the paper's 0.999) or profiled: one fit per value of
:data:`DECAY_GRID`, the lowest Huber objective winning.

Judged by the relative error of the predicted final loss of each predicted run,
|L_pred - L| / L, and its mean over the group (also over every checkpoint of the predicted runs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from jaxscale.core.intervals import interval
from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult, fit_approach3
from jaxscale.fitting.bootstrap import bootstrap, moving_block_counts
from jaxscale.laws import lr_annealing
from jaxscale.laws.schedule_areas import PAPER_DECAY, schedule_areas
from jaxscale.optimum.allocation import loss_draws
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable
from jaxscale.support.progress import progress_bar

#: lambda values profiled when the decay factor is fitted (the paper reports 0.99-0.999 working).
DECAY_GRID = (0.9, 0.95, 0.99, 0.995, 0.999, 0.9995)
#: The fitted checkpoints of a run start at this many times its warmup (declared while the seed-1
#: ``cpu`` sweep was training, before any of its curves was read; docs/guides/curves.md,
#: "Which checkpoints are fitted"):
#: warmup and the first fall of the loss from ln V toward the unigram entropy are not the power
#: law in S1 the law describes.
TRANSIENT_WARMUPS = 10
#: Relative size of the smallest fall of the S1 term over a fit's checkpoints that counts as measured
#: (:func:`alpha_determined`): a validation loss on a finite evaluation set is a sample mean, uncertain
#: by ~1e-3 relative for a million tokens; 1e-6 is far below any such noise, so a term that falls by
#: less is not seen in any real curve. Set from that argument alone; it marks none of the (Mis)Fitting
#: table's 32 groups.
RESOLVED_FALL = 1e-6
#: How far outside its fitted losses a predicted final loss may lie (a factor, either way) before
#: the prediction is reported implausible (:func:`implausible_prediction`).
PLAUSIBLE_FACTOR = 2.0
#: How a sweep names the cosine run of a size's 1.0 x budget (``jaxscale.lm.sweep.run_id``).
ONE_BUDGET = "_x1_"

Split = Callable[[pd.DataFrame], tuple[list[str], list[str]]]


@float64
def with_areas(table: RunsTable, lrs: Mapping[str, np.ndarray], decay: float = PAPER_DECAY) -> RunsTable:
    """The table with columns S1 and S2 at every checkpoint, from each run's per-step rates
    ``lrs[run_id]`` (runs padded to one length with their last rate, which adds nothing to S2)."""
    if not 0 <= decay <= 1:
        raise ValueError(f"the decay factor lambda must be in [0, 1]; got {decay}")
    check_curves(table)
    ids = list(lrs)
    missing = sorted(set(map(str, table.run_id)) - set(map(str, ids)))
    if missing:
        raise ValueError(f"no learning rates for run {missing[0]}")
    length = max(len(v) for v in lrs.values())
    batch = np.stack([np.pad(np.asarray(lrs[i], np.float64), (0, length - len(lrs[i])), mode="edge") for i in ids])
    areas = schedule_areas(batch, decay)
    row = pd.Index(map(str, ids)).get_indexer(table.run_id.astype(str))
    step = table.step.astype(np.int64)
    bad = np.flatnonzero((table.step != step) | (step < 1) | (step > np.array([len(lrs[ids[r]]) for r in row])))
    if bad.size:
        raise ValueError(f"row {bad[0]}: step {table.step[bad[0]]} is not a whole step within its run's schedule")
    frame = table.frame.assign(**{rs.FORWARD_AREA: np.asarray(areas.forward)[row, step - 1],
                                  rs.ANNEALING_AREA: np.asarray(areas.annealing)[row, step - 1]})
    return dataclasses.replace(table, frame=frame)


@dataclass(frozen=True)
class CurveFit:
    """The law fitted to one group's ``fitted`` runs at decay ``decay``, and its predictions of
    every checkpoint of the ``predicted`` runs (columns run_id, step, loss, predicted, and
    in_domain: from the declared number of warmups on, where the law is fitted and judged; with a
    bootstrap, predicted_lo and predicted_hi, the 95% interval over ``draws``, the converged
    refits of :func:`bootstrap_curves`)."""

    group: dict[str, Any]
    fit: FitResult
    decay: float
    fitted: tuple[str, ...]
    predicted: tuple[str, ...]
    predictions: pd.DataFrame
    draws: lr_annealing.LRAnnealingParams | None = None

    def final_errors(self) -> pd.DataFrame:
        """The last checkpoint of each predicted run with its relative error (predicted / observed - 1)."""
        last = self.predictions.loc[self.predictions.groupby(rs.RUN_ID, sort=False)[rs.STEP].idxmax()]
        return last.assign(relative_error=last["predicted"] / last[rs.LOSS] - 1).reset_index(drop=True)

    def implausible(self) -> str | None:
        """Why this group's predictions are implausible (:func:`implausible_prediction`), or None."""
        return implausible_prediction(self.final_errors()["predicted"].to_numpy(np.float64), self.fit.runs.loss)

    def summary(self) -> dict[str, Any]:
        """Group, fit (alpha None where the checkpoints do not determine it: :func:`alpha_determined`),
        and the mean absolute relative error of the predicted final losses (None if no run was
        predicted, or a prediction is undefined: the law's loss <= 0 there), and of every predicted
        checkpoint in the law's domain (``in_domain``); ``implausible``, why its predictions are
        not to be believed (:func:`implausible_prediction`), or None."""
        final = self.final_errors()
        judged = self.predictions[self.predictions["in_domain"]]
        curve = (judged["predicted"] / judged[rs.LOSS] - 1).abs()
        defined = bool(len(final)) and bool(np.isfinite(final["relative_error"]).all())
        determined = alpha_determined(self.fit)
        out = {
            **self.group, "decay": self.decay, **self.fit.params._asdict(),
            "alpha": float(self.fit.params.alpha) if determined else None,
            "fitted_runs": list(self.fitted), "fitted_points": self.fit.n_points,
            "predicted_runs": len(self.predicted),
            "final_mare": float(final["relative_error"].abs().mean()) if defined else None,
            "final_max_are": float(final["relative_error"].abs().max()) if defined else None,
            "curve_mare": float(curve.mean()) if defined and np.isfinite(curve).all() else None,
            "implausible": self.implausible(),
        }
        if self.draws is not None:
            inside = (final["predicted_lo"] <= final[rs.LOSS]) & (final[rs.LOSS] <= final["predicted_hi"])
            out["alpha_ci95"] = [float(b) for b in interval(self.draws.alpha)] if determined else None
            out["final_coverage"] = float(inside.mean()) if len(final) else None
            out["bootstrap_refits"] = len(self.draws.alpha)
        return out


def implausible_prediction(predicted: np.ndarray, fitted_losses: np.ndarray) -> str | None:
    """Why predicted final losses are no extrapolation of the fitted curves, or None: a loss more
    than :data:`PLAUSIBLE_FACTOR` times the highest fitted loss, or below the lowest divided by it.
    A curve that falls and flattens predicts a longer run a little below its fitted checkpoints,
    never several times above them (a smoke sweep's group predicted 3,438 nats, a 12,662% error,
    from checkpoints of about 7); declared before it was applied to any table."""
    lo, hi = float(np.min(fitted_losses)), float(np.max(fitted_losses))
    outside = predicted[np.isfinite(predicted) & ((predicted > PLAUSIBLE_FACTOR * hi) | (predicted < lo / PLAUSIBLE_FACTOR))]
    if not len(outside):
        return None
    return (f"a predicted final loss of {outside[0]:.4g} lies far outside the fitted checkpoints' {lo:.4g} .. {hi:.4g}: "
            "the fit does not extrapolate (too few or too flat fitted checkpoints?)")


def alpha_determined(fit: FitResult) -> bool:
    """Whether the fitted checkpoints determine alpha: it must be > 0 (the law's rule,
    :meth:`jaxscale.laws.law.Law.exponents_positive`: at alpha <= 0 the term does not fall with
    S1), and the power law in S1, A S1^(-alpha), must fall by more than :data:`RESOLVED_FALL` of
    the loss between the first and the last fitted checkpoint: a smaller fall (a flat curve, with
    A -> 0 or alpha -> 0) no measured loss resolves, and any alpha fits it alike."""
    p = fit.params
    if not fit.law.exponents_positive(p):
        return False
    s1 = fit.runs.law_inputs(fit.law.inputs)[0]
    fall = p.A * (s1.min() ** -p.alpha - s1.max() ** -p.alpha)
    return bool(fall > RESOLVED_FALL * fit.runs.loss.min())


def check_enough_checkpoints(count: int, fitted: Sequence[str], skip_warmups: float,
                             group: Mapping[str, Any] | None) -> None:
    """Refuse to fit the law's parameters to fewer checkpoints, naming the group and its runs."""
    if count < lr_annealing.LAW.n_params:
        where = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in (group or {}).items()) or "the runs"
        raise ValueError(
            f"{where}: the fitted runs {list(fitted)} have {count} checkpoints from {skip_warmups:g} warmups on, "
            f"fewer than the {lr_annealing.LAW.n_params} parameters of the {lr_annealing.LAW.name} law "
            "(the law is fitted to a run's whole curve: give every checkpoint, or lower --skip-warmups)"
        )


def check_curves(table: RunsTable) -> None:
    """The table tells runs and their checkpoints apart (else ValueError saying what is missing)."""
    if table.run_id is None or table.step is None:
        raise ValueError("learning curves need run identity (a run_id column or --run-by) and a step column")


def check_named(table: RunsTable, names: Sequence[str]) -> None:
    """Every run of ``names`` is in the table (else ValueError naming the first missing)."""
    check_curves(table)
    missing = [r for r in names if r not in set(table.run_id.astype(str))]
    if missing:
        raise ValueError(f"no run {missing[0]!r} in the table")


def warmup_steps(lrs: np.ndarray) -> int:
    """The steps a run's rates ``lrs`` (eta_1, eta_2, ...) take to first reach their peak."""
    return int(np.argmax(lrs >= lrs.max())) + 1


def in_domain(curves: RunsTable, lrs: Mapping[str, np.ndarray], runs: Sequence[str], skip_warmups: float) -> np.ndarray:
    """Which rows of ``curves`` are checkpoints of ``runs`` at or after ``skip_warmups`` times their
    run's warmup (every checkpoint of theirs for 0): the rows fitted, and those a prediction is judged on."""
    ids = curves.run_id.astype(str)
    first = np.array([skip_warmups * warmup_steps(lrs[r]) if r in runs else np.inf for r in ids])
    return np.isin(ids, runs) & (curves.step >= first)


def fit_group(table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str], predicted: Sequence[str],
              *, decay: float | None = PAPER_DECAY, skip_warmups: float = TRANSIENT_WARMUPS,
              group: Mapping[str, Any] | None = None, resamples: int = 0, seed: int = 0) -> CurveFit:
    """Fit the annealing law to the checkpoints of the runs ``fitted`` from ``skip_warmups`` warmups
    on (:func:`in_domain`; at ``decay``, or the best of :data:`DECAY_GRID` when None) and predict
    every checkpoint of the runs ``predicted``, marking those from ``skip_warmups`` warmups on;
    with ``resamples``, 95% intervals of the predictions (:func:`bootstrap_curves`)."""
    runs = [*fitted, *predicted]
    check_named(table, runs)
    ids = table.run_id.astype(str)
    subset = table.select(np.isin(ids, runs))
    fits = []
    for lam in DECAY_GRID if decay is None else (decay,):
        curves = with_areas(subset, {r: lrs[r] for r in runs}, lam)
        rows = in_domain(curves, lrs, fitted, skip_warmups)
        check_enough_checkpoints(int(rows.sum()), fitted, skip_warmups, group)
        fits.append((fit_approach3(curves.select(rows), law=lr_annealing.LAW), lam, curves))
    fit, lam, curves = min(fits, key=lambda f: f[0].objective)
    target = curves.select(np.isin(curves.run_id.astype(str), predicted))
    inputs = target.law_inputs(fit.law.inputs)
    predictions = pd.DataFrame({
        rs.RUN_ID: target.run_id.astype(str), rs.STEP: target.step, rs.LOSS: target.loss,
        "predicted": fit.predict(*inputs),
        "in_domain": in_domain(target, lrs, predicted, skip_warmups),
    })
    draws = None
    if resamples:
        draws = bootstrap_curves(fit, resamples, seed)
        predictions["predicted_lo"], predictions["predicted_hi"] = interval(loss_draws(fit.law, draws, *inputs))
    return CurveFit(dict(group or {}), fit, lam, tuple(fitted), tuple(predicted), predictions, draws)


def bootstrap_curves(fit: FitResult, resamples: int, seed: int) -> lr_annealing.LRAnnealingParams:
    """The law refitted to ``resamples`` moving-block resamples of each fitted run's checkpoints
    (:func:`jaxscale.fitting.bootstrap.moving_block_counts`: neighbouring checkpoints share their
    noise), at the fit's decay factor; the converged refits, [R] fields. The intervals they give
    cover the noise along the fitted curves, not a misfit of the law itself: the coverage of
    the predicted runs' observed losses says how far that goes."""
    counts = moving_block_counts(fit.runs.run_id, fit.runs.step, resamples, seed)
    refits = bootstrap(fit, counts=counts)
    return refits.parameter_draws.used


def _runs(group: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """One row per run: the ``columns`` that describe it (peak rate and length as numbers)."""
    missing = [c for c in columns if c not in group.columns]
    if missing:
        raise ValueError(f"no column {missing[0]!r} to tell the runs apart; columns are {list(group.columns)}")
    runs = group.groupby(rs.RUN_ID, sort=False)[list(columns)].first()
    for column in {rs.PEAK_LR, rs.TOTAL_STEPS} & set(columns):
        values = pd.to_numeric(runs[column], errors="coerce")
        if values.isna().any():
            raise ValueError(f"run {values.index[values.isna()][0]}: column {column!r} is not a number")
        runs[column] = values
    return runs


def sweep_split(group: pd.DataFrame) -> tuple[list[str], list[str]]:
    """jaxscale's sweeps: fit the constant run at the cosine runs' peak rate and the cosine run of
    the 1.0 x budget; predict the other cosine runs."""
    runs = _runs(group, (rs.SCHEDULE, rs.PEAK_LR, rs.TOTAL_STEPS))
    cosine = runs[runs[rs.SCHEDULE] == "cosine"]
    if cosine[rs.PEAK_LR].nunique() != 1:
        raise ValueError(f"the cosine runs {list(cosine.index)} need one peak learning rate")
    constant = runs[(runs[rs.SCHEDULE] == "constant") & np.isclose(runs[rs.PEAK_LR], cosine[rs.PEAK_LR].iloc[0])]
    if len(constant) != 1:
        raise ValueError(f"need one constant run at the cosine runs' peak rate; found {list(constant.index)}")
    budget = cosine[cosine.index.str.contains(ONE_BUDGET, regex=False)]
    if len(budget) != 1:
        raise ValueError(f"need one cosine run of the 1.0 x budget (named *{ONE_BUDGET}*); found {list(budget.index)}")
    fitted = [constant.index[0], budget.index[0]]
    return fitted, [r for r in cosine.index if r not in fitted]


def longest_split(group: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Fit the longest run (most ``total_steps``), predict the others."""
    runs = _runs(group, (rs.TOTAL_STEPS,)).sort_values(rs.TOTAL_STEPS, kind="stable")
    return [runs.index[-1]], list(runs.index[:-1])


def explicit_split(fitted: Sequence[str], predicted: Sequence[str]) -> Split:
    """The runs named (within each group: the named runs it holds)."""
    def split(group: pd.DataFrame) -> tuple[list[str], list[str]]:
        present = set(group[rs.RUN_ID])
        return [r for r in fitted if r in present], [r for r in predicted if r in present]

    return split


def fit_groups(table: RunsTable, lrs: Mapping[str, np.ndarray], split: Split, group_by: Sequence[str],
               *, decay: float | None = PAPER_DECAY, skip_warmups: float = TRANSIENT_WARMUPS,
               progress: bool = True, resamples: int = 0, seed: int = 0) -> list[CurveFit]:
    """:func:`fit_group` on every group of ``group_by`` columns (e.g. ``n_total``, or ``n_total``
    and ``peak_lr``) that ``split`` gives at least one run to fit and one to predict."""
    frame = table.frame.assign(**{rs.RUN_ID: table.run_id.astype(str)})
    missing = [c for c in group_by if c not in frame.columns]
    if missing:
        raise ValueError(f"no column {missing[0]!r} to group runs by; columns are {list(frame.columns)}")
    plans = []
    for key, group in frame.groupby(list(group_by), sort=True):
        fitted, predicted = split(group)
        if fitted and predicted:
            keys = key if isinstance(key, tuple) else (key,)  # each value its own type: numbers stay numbers
            group = {c: v.item() if isinstance(v, np.generic) else v for c, v in zip(group_by, keys)}
            plans.append((group, fitted, predicted))
    if not plans:
        raise ValueError("no group has both a run to fit and a run to predict")
    bar = progress_bar(total=len(plans), desc="curve fits", disable=not progress)
    out = []
    for group, fitted, predicted in plans:
        out.append(fit_group(table, lrs, fitted, predicted, decay=decay, skip_warmups=skip_warmups, group=group,
                             resamples=resamples, seed=seed))
        bar.update(1)
    bar.close()
    return out
