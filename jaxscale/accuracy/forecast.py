"""A task's accuracy at a target model, by one form, on one recipe's ladder: the verdict first,
then (only where the task is predictable) the fit, the prediction and its intervals; and the
compute multiplier between two recipes' forecasts.

Forms (:data:`FORMS`): ``two-step`` (:mod:`jaxscale.accuracy.two_step`), ``log-compute`` (a
sigmoid in log compute) and ``direct`` (-log accuracy a power law in compute at the ladder's
ratio), both one-stage laws of :mod:`jaxscale.laws.downstream_accuracy` fitted to the final
checkpoints (:mod:`jaxscale.accuracy.counted_checkpoints`); ``direct-nd`` (across ratios) needs
finished runs at several D, which a ladder of one D cannot give: it is refused there with that
reason. Intervals: :data:`LEVEL` of the bootstrap draws through every stage (``interval``) and
of the same plus the target evaluation's binomial noise (``predictive``: where a measurement of
the target should fall).

**A prediction the ladder does not determine is undefined**, not a number: where the law's own
interval spans more than :data:`MAX_SHARE` of the way from the task's chance level to a perfect
score, the draws cannot say whether the target scores nearer chance or nearer perfect, and the
point between them is the fit's accident (a sigmoid whose onset the ladder has not reached, run
to its ceiling). The forecast then carries the reason (``undefined``), its fit and its draws, and
no prediction. Found on Pythia's five-shot ARC-Challenge (``benchmarks/bench_downstream.py --shots
5``), where the two-step form "predicted" 94-100% with an interval of 23-100% for models that score
28-33%.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from jaxscale.accuracy import recipe_multiplier, weighted_fit
from jaxscale.accuracy.ladder import TaskLadder, task_ladder
from jaxscale.accuracy.two_step import TwoStepFit, fit_two_step, predictive_draws
from jaxscale.accuracy.verdict import Verdict, judge
from jaxscale.core.intervals import interval
from jaxscale.laws import downstream_accuracy as laws

FORMS = ("two-step", "log-compute", "direct", "direct-nd")
_ONE_STAGE = {"log-compute": laws.LOG_COMPUTE_SIGMOID, "direct": laws.DIRECT, "direct-nd": laws.DIRECT_ND}
#: Level of the prediction's intervals; the multiplier's is :data:`MULTIPLIER_LEVEL`.
LEVEL = 0.90
#: Two token counts within 1% are one D (a target's "3e11" is Pythia's 2.9988e11).
SAME_D = 0.01
MULTIPLIER_LEVEL = 0.95
#: Share of paired draws that must define the multiplier for its interval to be bounded (as
#: :mod:`jaxscale.planning.target_intervals` rules for a target's interval).
MIN_DEFINED = 0.95
#: The largest share of the range from chance to a perfect score that the law's own interval may
#: span for its prediction to be determined (module docstring).
MAX_SHARE = 0.5


@dataclass(frozen=True)
class Forecast:
    """One task on one recipe's ladder at ``target`` = (N, D). ``prediction`` is None where the
    verdict says the task is not predictable (``verdict.reason``) or where the ladder does not
    determine it (``undefined`` says why; the fit, ``interval`` and ``draws`` are kept); ``draws``
    the accuracy per bootstrap draw through every stage ([S], NaN where a refit failed)."""

    ladder: TaskLadder
    verdict: Verdict
    form: str
    target: tuple[float, float]
    fit: TwoStepFit | weighted_fit.WeightedFit | None
    prediction: float | None
    interval: tuple[float, float] | None
    predictive: tuple[float, float] | None
    draws: np.ndarray | None
    undefined: str | None = None

    @property
    def reason(self) -> str | None:
        """Why there is no prediction (the verdict's, or why the ladder does not determine it); None if there is one."""
        return (self.verdict.reason or None) if not self.verdict.predictable else self.undefined

    def curve(self, n: np.ndarray, draws: bool = False) -> np.ndarray:
        """The fitted accuracy at sizes ``n`` at the target's D (draws: [S, len(n)])."""
        if isinstance(self.fit, TwoStepFit):
            return self.fit.draws(n) if draws else self.fit.predict(n)
        c = 6.0 * np.asarray(n, np.float64) * self.target[1]
        return self.fit.predict(c, draws=draws)


def _check_target(ladder: TaskLadder, target: tuple[float, float]) -> None:
    n, d = target
    if not (np.isfinite(n) and np.isfinite(d) and n > 0 and d > 0):
        raise ValueError(f"--target must be N,D with both positive; got {n:g},{d:g}")
    if n <= ladder.final_n.max():
        raise ValueError(f"--target N={n:.3g} is inside the ladder (its largest model has N={ladder.final_n.max():.3g}); "
                         f"a prediction is for a model beyond it")


def undetermined(lower: float, upper: float, chance: float) -> str | None:
    """Why a prediction whose law's own interval is ``lower``..``upper`` is undefined (it spans more
    than :data:`MAX_SHARE` of the range from ``chance`` to 1, or is not finite), else None."""
    share = (upper - lower) / (1.0 - chance)
    if np.isfinite(share) and share <= MAX_SHARE:
        return None
    shown = f"{100 * lower:.1f}% to {100 * upper:.1f}%" if np.isfinite(share) else "not finite"
    return (f"undefined: the ladder does not determine it (the law's {LEVEL:.0%} interval, {shown}, spans more than "
            f"{MAX_SHARE:.0%} of the way from chance, {100 * chance:.0f}%, to a perfect score)")


def forecast(frame: pd.DataFrame, task: str, target: tuple[float, float], *, form: str = "two-step",
             data: str | None = None, resamples: int = weighted_fit.RESAMPLES, seed: int = 0, **ladder_options) -> Forecast:
    """The :class:`Forecast` of ``task`` at ``target`` (module docstring); ``ladder_options`` go to
    :func:`jaxscale.accuracy.ladder.task_ladder` (metric, chance, intermediate, models).

    Raises:
        ValueError: for an unknown form, a target inside the ladder, or a form the ladder cannot fit.
    """
    if form not in FORMS:
        raise ValueError(f"--form {form!r} is not a form; choose one of {', '.join(FORMS)}")
    if resamples < 2:
        raise ValueError(f"--bootstrap must be >= 2 resamples, got {resamples}")
    ladder = task_ladder(frame, task, data=data, **ladder_options)
    _check_target(ladder, target)
    verdict = judge(ladder)
    if not verdict.predictable:
        return Forecast(ladder, verdict, form, target, None, None, None, None, None)
    n, d = target
    if form == "two-step":
        if abs(np.log(d / ladder.final_d[0])) > SAME_D or np.ptp(np.log(ladder.final_d)) > SAME_D:
            raise ValueError(f"--target D={d:.4g}: the ladder's finished runs all have D={ladder.final_d[0]:.4g}, so "
                             f"stage 1 is a law of N at that D; a target at another D needs a ladder that varies D")
        fit = fit_two_step(ladder, resamples=resamples, seed=seed)
        point, draws = float(fit.predict(np.array([n]))[0]), fit.draws(np.array([n]))[:, 0]
    elif form == "direct-nd":
        if np.ptp(np.log(ladder.final_d)) < np.log(2.0):
            raise ValueError("--form direct-nd (across ratios) needs finished runs at several D; every final checkpoint "
                             f"of this ladder has D={ladder.final_d[0]:.3g} (use direct, at the ladder's ratio)")
        fit = weighted_fit.fit(_ONE_STAGE[form], (ladder.final_n, ladder.final_d), ladder.final_acc, ladder.final_se,
                               chance=ladder.chance, resamples=resamples, seed=seed)
        point = float(fit.predict(np.array([n]), np.array([d]))[0])
        draws = fit.predict(np.array([n]), np.array([d]), draws=True)[:, 0]
    else:
        fit = weighted_fit.fit(_ONE_STAGE[form], (ladder.compute,), ladder.final_acc, ladder.final_se,
                               chance=ladder.chance, resamples=resamples, seed=seed)
        c = np.array([6.0 * n * d])
        point, draws = float(fit.predict(c)[0]), fit.predict(c, draws=True)[:, 0]
    lower, upper = (float(v) for v in interval(draws, LEVEL))
    why = undetermined(lower, upper, ladder.chance)
    if why is not None:
        return Forecast(ladder, verdict, form, target, fit, None, (lower, upper), None, draws, why)
    p_lower, p_upper = interval(predictive_draws(draws, ladder.n_questions, seed=seed), LEVEL)
    return Forecast(ladder, verdict, form, target, fit, point, (lower, upper), (float(p_lower), float(p_upper)), draws)


def _params(fit: weighted_fit.WeightedFit, size: int | None) -> tuple[np.ndarray, ...]:
    """The fit's parameters (``size`` None) or its first ``size`` refits, as arrays."""
    if size is None:
        return tuple(np.asarray(v) for v in fit.params)
    return tuple(np.asarray(v)[:size] for v in fit.draws)


def _size_reaching(f: Forecast, acc: np.ndarray, size: int | None) -> np.ndarray:
    """The model size at which ``f``'s fit (``size`` None) or its refit i (``acc[i]``, i < size)
    scores ``acc``, at f's D."""
    if isinstance(f.fit, TwoStepFit):
        return recipe_multiplier.two_step_size(_params(f.fit.stage1, size), _params(f.fit.stage2, size), acc,
                                               f.ladder.chance)
    return recipe_multiplier.compute_at(f.fit.law.name, _params(f.fit, size), acc, f.ladder.chance) / (6.0 * f.target[1])


def _refits(f: Forecast) -> int:
    return len(f.fit.stage1.valid) if isinstance(f.fit, TwoStepFit) else len(f.fit.valid)


def multiplier(baseline: Forecast, other: Forecast) -> dict:
    """k = C_A / C of ``other`` against ``baseline`` (A) at the target (both one task, one form,
    one target): the estimate, its :data:`MULTIPLIER_LEVEL` interval over paired draws (unbounded,
    None, where fewer than :data:`MIN_DEFINED` of the draws define k: an interval over the draws
    that happen to would say more than the fits know), the share of draws where it is defined,
    and why the estimate is undefined where it is (else None)."""
    for f in (baseline, other):
        if f.prediction is None:
            return {"k": None, "lower": None, "upper": None, "defined_fraction": 0.0,
                    "undefined": f"{f.ladder.data}: " + ("not predictable from this ladder" if not f.verdict.predictable
                                                         else "the ladder does not determine its accuracy")}
    if baseline.form == "direct-nd":
        return {"k": None, "lower": None, "upper": None, "defined_fraction": 0.0,
                "undefined": "no inverse in compute across ratios"}
    n = other.target[0]
    k = float(_size_reaching(baseline, np.array(other.prediction), None) / n)
    size = min(len(other.draws), _refits(baseline))
    k_draws = _size_reaching(baseline, other.draws[:size], size) / n
    defined = float(np.mean(np.isfinite(k_draws))) if k_draws.size else 0.0
    lower, upper = interval(k_draws, MULTIPLIER_LEVEL) if defined >= MIN_DEFINED else (None, None)
    return {"k": k if np.isfinite(k) else None, "lower": None if lower is None else float(lower),
            "upper": None if upper is None else float(upper), "defined_fraction": defined,
            "undefined": None if np.isfinite(k) else "the other recipe's accuracy is outside what the baseline's law reaches"}
