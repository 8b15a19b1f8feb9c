"""A fit rule for laws of whole curves that generalises across schedules: each choice the fitted
curves leave open is made by holding one fitted schedule out at a time.

The exact optimum of a whole-curve law is not its best predictor of other schedules. The
multi-power law (:mod:`jaxscale.laws.multipower`) enters its loss drop through C eta^-gamma, one
number where the fitted rates span a decade, so its optimum wanders along a ridge (C against
gamma, with beta) that the fitted runs barely determine, and the place it stops there decides
how a schedule unlike theirs is predicted. What the fitted runs *can* tell is how well a fit to
some of them predicts another. The rule, declared here before its first measurement on any run
it predicts:

1. **Candidates.** A short, ordered list of fits, from the least regularised:

   - the multi-power law: the Huber objective of :mod:`jaxscale.curves.multipower_fit` plus the
     penalty lambda sum_i (theta_i - c_i)^2 on the three coordinates that shape the loss drop,
     log C, beta and gamma, centred on C = 1, beta = 0.5, gamma = 0.5 (the centre of the start
     grid, :func:`jaxscale.curves.multipower_fit.starts`: a drop that saturates over about one
     unit of the area eta^-gamma S_k), for lambda in :data:`PENALTIES` (0, the plain optimum,
     first). The penalty's scale is the objective's: a sum of Huber terms of relative residuals of
     about 1e-3 over some hundred checkpoints, ~1e-4;
   - the multi-power law's posterior-predictive mean under weakly informative priors
     (:mod:`jaxscale.inference.multipower_posterior`: NUTS over the law's seven coordinates, 4
     chains of 250 warmup and 250 draws, seed 0; a Student-t AR(1) likelihood of each run's log
     residuals; priors centred on the start grid's and the penalty's centres, 25 to 75 times
     wider than the penalty of 1e-3), last in the list: a :class:`CurvePredictor` passed in by the
     caller (``predictors``), since it lives a layer above this one; ``examples/multipower_25m.py``
     passes it, ``jaxscale curve`` does not (its four posteriors take minutes each on a CPU);
   - Tissue et al.'s annealing law (:mod:`jaxscale.curves.lr_annealing_fit`): its decay factor
     lambda of S2 over :data:`jaxscale.curves.lr_annealing_fit.DECAY_GRID`, every checkpoint fitted
     (the multi-power law's checkpoints), as the choice that law leaves open; then, last, its
     posterior-predictive mean under the law's own weakly informative priors
     (:mod:`jaxscale.inference.annealing_posterior`: NUTS over its four coordinates log L0, log A,
     log C, alpha, with lambda fixed at the paper's 0.999, the same likelihood and sampler as the
     multi-power law's posterior, :mod:`jaxscale.inference.curve_posterior`), passed in by the
     caller (``predictors`` of :func:`fit_annealing_held_out`) as the multi-power law's is;
     ``examples/multipower_25m.py`` passes both (declared, and committed, before this candidate's
     first run on the 25M curves).

2. **Hold one fitted schedule out.** For each run r of the F >= 2 runs fitted, each candidate
   is fitted to the other F - 1 and predicts every checkpoint of r; its score is the mean over
   r of the mean relative error |Lhat / L - 1| over r's checkpoints (the held-out runs' PredE,
   each run weighing the same whatever its number of checkpoints).

3. **Choose and refit.** The candidate of lowest score (the earlier in the list on a tie) is
   fitted to all F runs; that fit predicts.

4. **Predictive intervals.** At every predicted checkpoint, Lhat (1 - q) .. Lhat (1 + q), q the
   :data:`LEVEL` quantile of the chosen candidate's held-out relative errors |Lhat / L - 1|, each
   held-out run's checkpoints weighted 1 / (its number of checkpoints) so that every held-out
   run weighs the same: a split-conformal interval whose exchangeable units are schedules.
   Their coverage of the predicted checkpoints is reported beside the errors; the fits behind
   q saw one run fewer than the fit that predicts, so q tends to be wide, and a predicted
   schedule further from the fitted ones than they are from each other (a run three times as
   long) may still fall outside it.

With fewer than two fitted runs no schedule can be held out: the rule is undefined, and is
refused (the plain optimum is :func:`jaxscale.curves.multipower_fit.fit_multipower`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import pandas as pd

from jaxscale.curves import lr_annealing_fit, multipower_fit
from jaxscale.laws import multipower
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable

#: Penalty weights lambda of the multi-power law's candidates, the plain optimum first.
PENALTIES = (0.0, 1e-6, 1e-5, 1e-4, 1e-3)
#: Coordinates of the multi-power law's vector penalised (log C, beta, gamma) and their centres.
PENALISED, CENTRE = (4, 5, 6), (0.0, 0.5, 0.5)
#: The probability the predictive intervals are built to hold.
LEVEL = 0.9

Candidate = TypeVar("Candidate")
#: ``score(candidate, fitted_runs, held_run)``: relative errors Lhat / L - 1 at the held run's checkpoints.
Scorer = Callable[[Candidate, list[str], str], np.ndarray]


@dataclass(frozen=True)
class HeldOutChoice(Generic[Candidate]):
    """The candidates, each held-out run's mean relative error under each (``scores``,
    [candidates, runs]), the candidate chosen, its held-out relative errors by run, and the
    half-width ``q`` of the :data:`LEVEL` predictive intervals (relative)."""

    candidates: tuple[Candidate, ...]
    runs: tuple[str, ...]
    scores: np.ndarray
    chosen: int
    held_errors: tuple[np.ndarray, ...]
    half_width: float

    @property
    def candidate(self) -> Candidate:
        """The candidate chosen."""
        return self.candidates[self.chosen]

    def to_dict(self) -> dict:
        """Plain numbers: each candidate's score (mean over held-out runs) and per-run errors (None
        where a held-out prediction is undefined)."""
        def number(value: float) -> float | None:
            return float(value) if np.isfinite(value) else None

        return {"held_out_runs": list(self.runs), "chosen": _named(self.candidates[self.chosen]),
                "scores": [{"candidate": _named(c), "score": number(np.mean(s)), "per_run": [number(v) for v in s]}
                           for c, s in zip(self.candidates, self.scores)],
                "interval_level": LEVEL, "interval_half_width": self.half_width}


def _named(candidate: Any) -> Any:
    """A candidate as plain data: a :class:`CurvePredictor` by its label, anything else (a number) as it is."""
    return getattr(candidate, "label", candidate)


def weighted_quantile(values: Sequence[np.ndarray], level: float) -> float:
    """The ``level`` quantile of the pooled ``values``, each array's entries weighted 1 / its
    length (every array weighs the same): the smallest value whose cumulative weight reaches
    ``level`` of the total."""
    pooled = np.concatenate([np.asarray(v, np.float64) for v in values])
    weight = np.concatenate([np.full(len(v), 1.0 / len(v)) for v in values])
    order = np.argsort(pooled, kind="stable")
    cumulative = np.cumsum(weight[order]) / weight.sum()
    return float(pooled[order][np.searchsorted(cumulative, level - 1e-12)])


def choose(candidates: Sequence[Candidate], fitted: Sequence[str], score: Scorer,
           level: float = LEVEL) -> HeldOutChoice[Candidate]:
    """Steps 2 and 4 of the rule: every candidate fitted to all fitted runs but one and judged on
    the one held out, the lowest mean score chosen (the first on a tie), and the ``level``
    quantile of its held-out |relative errors| (runs weighted alike).

    Args:
        candidates: the fits to choose among, least regularised first.
        fitted: the runs fitted (at least two).
        score: ``score(candidate, others, held)``: the relative errors Lhat / L - 1 at every
            checkpoint of ``held`` of the candidate fitted to ``others``.
        level: the probability the intervals are built to hold.

    Returns:
        A :class:`HeldOutChoice`.
    """
    runs = list(fitted)
    if len(runs) < 2:
        raise ValueError(f"holding out one fitted schedule needs at least two fitted runs; got {len(runs)}")
    if not candidates:
        raise ValueError("no candidate fits to choose among")
    errors = [[np.abs(np.asarray(score(c, [r for r in runs if r != held], held), np.float64)) for held in runs]
              for c in candidates]
    scores = np.array([[float(np.mean(e)) if np.isfinite(e).all() else np.inf for e in row] for row in errors])
    means = scores.mean(axis=1)
    if not np.isfinite(means).any():
        raise ValueError("no candidate predicts every held-out run (the law's loss is <= 0 somewhere)")
    chosen = int(np.argmin(means))
    return HeldOutChoice(tuple(candidates), tuple(runs), scores, chosen, tuple(errors[chosen]),
                         weighted_quantile(errors[chosen], level))


def intervals(predicted: np.ndarray, half_width: float) -> tuple[np.ndarray, np.ndarray]:
    """Step 4: the predictive interval Lhat (1 - q) .. Lhat (1 + q) at every prediction."""
    predicted = np.asarray(predicted, np.float64)
    return predicted * (1 - half_width), predicted * (1 + half_width)


def coverage(loss: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """The fraction of observed losses inside their intervals."""
    loss = np.asarray(loss)
    return float(np.mean((lower <= loss) & (loss <= upper)))


def _relative_errors(predictions: pd.DataFrame) -> np.ndarray:
    return (predictions["predicted"] / predictions[rs.LOSS] - 1).to_numpy(np.float64)


def with_intervals(predictions: pd.DataFrame, half_width: float) -> pd.DataFrame:
    """``predictions`` with the columns predicted_lo and predicted_hi of step 4."""
    lower, upper = intervals(predictions["predicted"].to_numpy(np.float64), half_width)
    return predictions.assign(predicted_lo=lower, predicted_hi=upper)


def drop_penalty(weight: float) -> multipower_fit.Penalty:
    """The multi-power law's candidate of penalty ``weight``: lambda on (log C, beta, gamma),
    centred on (0, 0.5, 0.5) (:data:`PENALISED`, :data:`CENTRE`)."""
    size = len(multipower.LOG_SCALE)
    centre, weights = np.zeros(size), np.zeros(size)
    centre[list(PENALISED)], weights[list(PENALISED)] = CENTRE, weight
    return multipower_fit.Penalty(centre, weights)


class CurvePredictor(Protocol):
    """A candidate of the multi-power law's list that is not a penalised fit (step 1): its
    ``label``, and ``fit(table, lrs, fitted, predicted)``, a
    :class:`~jaxscale.curves.multipower_fit.MultiPowerFit` whose predictions column is its
    prediction of every checkpoint."""

    label: str

    def fit(self, table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
            predicted: Sequence[str]) -> multipower_fit.MultiPowerFit: ...


class AnnealingPredictor(Protocol):
    """A candidate of Tissue et al.'s law's list that is not a decay factor (step 1): its
    ``label``, and ``fit(table, lrs, fitted, predicted)``, a
    :class:`~jaxscale.curves.lr_annealing_fit.CurveFit` whose predictions column is its
    prediction of every checkpoint of the runs ``predicted``."""

    label: str

    def fit(self, table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
            predicted: Sequence[str]) -> lr_annealing_fit.CurveFit: ...


def _fit_candidate(candidate: float | CurvePredictor, table: RunsTable, lrs: Mapping[str, np.ndarray],
                   fitted: Sequence[str], predicted: Sequence[str]) -> multipower_fit.MultiPowerFit:
    """The multi-power law's candidate ``candidate`` (a penalty weight or a predictor) fitted to ``fitted``."""
    if isinstance(candidate, (int, float)):
        return multipower_fit.fit_multipower(table, lrs, fitted, predicted, penalty=drop_penalty(candidate))
    return candidate.fit(table, lrs, fitted, predicted)


def fit_multipower_held_out(table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
                            predicted: Sequence[str], *, penalties: Sequence[float] | None = None,
                            predictors: Sequence[CurvePredictor] = ()) -> multipower_fit.MultiPowerFit:
    """The multi-power law under the rule: the candidate (a penalty of :data:`PENALTIES`, then
    each of ``predictors``) whose fits to all fitted runs but one predict the one held out best,
    refitted to every fitted run, with :data:`LEVEL` predictive intervals at every checkpoint
    (columns predicted_lo, predicted_hi).

    Args:
        table: the runs' checkpoints.
        lrs: each run's rates eta_1..eta_T.
        fitted: the runs fitted (at least two).
        predicted: the runs predicted.
        penalties: the candidates' weights lambda, the least regularised first (default
            :data:`PENALTIES`).
        predictors: further candidates, after the penalties (e.g. the posterior-predictive mean,
            :class:`jaxscale.inference.multipower_posterior.PosteriorMean`).

    Returns:
        A :class:`~jaxscale.curves.multipower_fit.MultiPowerFit` whose ``rule`` holds the choice
        (:meth:`HeldOutChoice.to_dict`).
    """
    t0 = time.perf_counter()

    def score(candidate: float | CurvePredictor, others: list[str], held: str) -> np.ndarray:
        fit = _fit_candidate(candidate, table, lrs, others, [held])
        return _relative_errors(fit.predictions[~fit.predictions["fitted"]])

    candidates = (*(PENALTIES if penalties is None else penalties), *predictors)
    choice = choose(candidates, fitted, score)
    fit = _fit_candidate(choice.candidate, table, lrs, fitted, predicted)
    return dataclasses.replace(fit, predictions=with_intervals(fit.predictions, choice.half_width),
                               rule={**(fit.rule or {}), "penalty": "lambda on log C, beta, gamma",
                                     **choice.to_dict()},
                               seconds=time.perf_counter() - t0)


@dataclass(frozen=True)
class AnnealingHeldOut:
    """Tissue et al.'s law under the rule: the fit of the candidate chosen (``fit``, its
    predictions with interval columns) and the choice."""

    fit: lr_annealing_fit.CurveFit
    choice: HeldOutChoice

    def summary(self) -> dict[str, Any]:
        """The fit's summary with the held-out choice and the intervals' coverage of the predicted checkpoints."""
        judged = self.fit.predictions
        return {**self.fit.summary(), "rule": self.choice.to_dict(),
                "interval_coverage": coverage(judged[rs.LOSS], judged["predicted_lo"], judged["predicted_hi"])}


def _fit_annealing_candidate(candidate: float | AnnealingPredictor, table: RunsTable, lrs: Mapping[str, np.ndarray],
                             fitted: Sequence[str], predicted: Sequence[str]) -> lr_annealing_fit.CurveFit:
    """Tissue et al.'s law's candidate ``candidate`` (a decay factor or a predictor) fitted to ``fitted``."""
    if isinstance(candidate, (int, float)):
        return lr_annealing_fit.fit_group(table, lrs, fitted, predicted, decay=candidate, skip_warmups=0)
    return candidate.fit(table, lrs, fitted, predicted)


def fit_annealing_held_out(table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
                           predicted: Sequence[str], *, decays: Sequence[float] = lr_annealing_fit.DECAY_GRID,
                           predictors: Sequence[AnnealingPredictor] = ()) -> AnnealingHeldOut:
    """Tissue et al.'s annealing law under the same rule: the candidate (a decay factor lambda of
    ``decays``, then each of ``predictors``) chosen by holding one fitted run out at a time, every
    checkpoint fitted, with :data:`LEVEL` predictive intervals at every predicted checkpoint.

    Args:
        table: the runs' checkpoints.
        lrs: each run's rates eta_1..eta_T.
        fitted: the runs fitted (at least two).
        predicted: the runs predicted.
        decays: the candidate decay factors.
        predictors: further candidates, after the decay factors (e.g. the posterior-predictive
            mean, :class:`jaxscale.inference.annealing_posterior.AnnealingPosteriorMean`).

    Returns:
        An :class:`AnnealingHeldOut`.
    """
    def score(candidate: float | AnnealingPredictor, others: list[str], held: str) -> np.ndarray:
        return _relative_errors(_fit_annealing_candidate(candidate, table, lrs, others, [held]).predictions)

    choice = choose((*decays, *predictors), fitted, score)
    fit = _fit_annealing_candidate(choice.candidate, table, lrs, fitted, predicted)
    return AnnealingHeldOut(dataclasses.replace(fit, predictions=with_intervals(fit.predictions, choice.half_width)),
                            choice)
