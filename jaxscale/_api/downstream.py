"""``downstream``: what a larger model will score on a benchmark, from a ladder's evaluations,
with intervals through every stage, an honest "not predictable from this ladder", and the compute
multiplier between recipes on the task (:mod:`jaxscale.accuracy`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jaxscale._api._results import Figures, Result, bounds, rows
from jaxscale.accuracy.forecast import LEVEL, MULTIPLIER_LEVEL, Forecast
from jaxscale.accuracy.ladder import INTERMEDIATE
from jaxscale.accuracy.weighted_fit import RESAMPLES


def _pair(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [float(pair[0]), float(pair[1])]


@dataclass(frozen=True, repr=False)
class DownstreamReport(Result):
    """A task's forecast at a target on each recipe's ladder, and the recipes' multipliers.

    Attributes:
        forecasts: one :class:`~jaxscale.accuracy.forecast.Forecast` per recipe (the verdict, and
            where the task is predictable the fit, the prediction and its intervals).
        baseline: the recipe the multipliers are against (None with one recipe).
        multipliers: per other recipe, k = C_A / C at the target with its 95% interval (or why
            it is undefined).
        posteriors: per recipe (two-step form with ``bayes``), the 90% highest-density intervals
            of the joint posterior of both stages by NUTS: the law's own and the predictive.
        seconds: the verb's wall time.
    """

    forecasts: tuple[Forecast, ...]
    baseline: str | None
    multipliers: dict[str, dict[str, Any]]
    posteriors: dict[str, dict[str, list[float]]]
    seconds: float

    def _report(self) -> dict[str, Any]:
        first = self.forecasts[0]
        n, d = first.target
        recipes = {}
        for f in self.forecasts:
            recipes[f.ladder.data] = {
                "predictable": f.verdict.predictable, "reason": f.reason,
                "prediction": f.prediction, "interval": _pair(f.interval), "predictive": _pair(f.predictive),
                "ladder": list(f.ladder.models), "chance": f.ladder.chance,
                "n_questions": f.ladder.n_questions, "verdict": f.verdict.to_dict(),
                "posterior": self.posteriors.get(f.ladder.data)}
        return {"task": first.ladder.task, "metric": first.ladder.metric, "form": first.form,
                "target": {"N": n, "D": d, "C": 6.0 * n * d}, "level": LEVEL, "recipes": recipes,
                "baseline": self.baseline, "multiplier_level": MULTIPLIER_LEVEL, "multipliers": self.multipliers,
                "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """Per recipe: the predicted accuracy with its predictive interval (``level`` 0.9; NaN
        where not predictable, ``reason`` saying why); per other recipe, the multiplier k with its
        95% interval."""
        numbers = self.to_dict()
        entries = [{"quantity": f"accuracy ({data})", "estimate": r["prediction"], **bounds(r["predictive"]),
                    "level": numbers["level"], "reason": r["reason"]} for data, r in numbers["recipes"].items()]
        entries += [{"quantity": f"k {data} / {numbers['baseline']}", "estimate": m["k"],
                     **bounds([m["lower"], m["upper"]]), "level": numbers["multiplier_level"], "reason": m["undefined"]}
                    for data, m in numbers["multipliers"].items()]
        return rows(entries)

    def plot(self) -> Figures:
        """``downstream``: accuracy against compute with the ladder, the fit, its band and the
        target; ``downstream_stage2`` (two-step form): accuracy against the intermediate loss."""
        from jaxscale.plots.downstream import accuracy_figure, stage2_figure

        figures = Figures(downstream=accuracy_figure(self.forecasts))
        if self.forecasts[0].form == "two-step":
            figures["downstream_stage2"] = stage2_figure(self.forecasts)
        return figures

    def _title(self) -> str:
        f = self.forecasts[0]
        return f"DownstreamReport: {f.ladder.task} ({f.ladder.metric}), {f.form}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        t = numbers["target"]
        lines = [f"{numbers['task']} ({numbers['metric']}) at N={t['N']:.3g}, D={t['D']:.3g} (C={t['C']:.3g}), "
                 f"{numbers['form']} form"]
        for data, r in numbers["recipes"].items():
            ladder = f"ladder of {len(r['ladder'])} models"
            if not r["predictable"]:
                lines.append(f"  {data}: not predictable from this ladder ({ladder}): {r['reason']}")
                continue
            if r["prediction"] is None:
                lines.append(f"  {data}: {r['reason']} ({ladder})")
                continue
            lo, hi = r["predictive"]
            ilo, ihi = r["interval"]
            lines.append(f"  {data}: {100 * r['prediction']:.1f}% ({100 * numbers['level']:.0f}% predictive "
                         f"{100 * lo:.1f} to {100 * hi:.1f}; the law's own {100 * ilo:.1f} to {100 * ihi:.1f}; {ladder}, "
                         f"chance {100 * r['chance']:.0f}%)")
            if r["posterior"] is not None:
                plo, phi = r["posterior"]["predictive"]
                lines.append(f"    joint posterior of both stages (NUTS): {100 * numbers['level']:.0f}% predictive "
                             f"{100 * plo:.1f} to {100 * phi:.1f}")
        for data, m in numbers["multipliers"].items():
            if m["k"] is None:
                lines.append(f"  k of {data} against {numbers['baseline']}: undefined ({m['undefined']})")
            else:
                bounded = m["lower"] is not None and m["upper"] is not None
                band = f"{m['lower']:.3g} to {m['upper']:.3g}" if bounded else "unbounded"
                lines.append(f"  k of {data} against {numbers['baseline']}: x{m['k']:.3g} "
                             f"({100 * numbers['multiplier_level']:.0f}% {band}): "
                             f"{data} is worth {m['k']:.3g} times its compute in {numbers['baseline']}'s recipe")
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


def downstream(evaluations: str | Path | pd.DataFrame, task: str, *, target: tuple[float, float],
               metric: str = "acc", form: str = "two-step", data: str | Sequence[str] | None = None,
               baseline: str | None = None, chance: float | None = None, intermediate: str = INTERMEDIATE,
               max_n: float | None = None, bootstrap: int = RESAMPLES, seed: int = 0, bayes: bool = False,
               chains: int = 2, samples: int = 500, shots: int = 0) -> DownstreamReport:
    """A task's accuracy at ``target`` = (N, D) from a ladder's evaluations.

    Args:
        evaluations: a CSV path or DataFrame, long (task, metric, value[, stderr] per row, as
            ``pythia_evals.csv``) or wide (one column per task); rows need ``n_params`` and ``tokens``.
        task: the task (e.g. ``"arc_easy"``).
        target: the model to predict, (N, D): N parameters trained on D tokens.
        metric: the accuracy metric (``acc``, ``acc_norm``); a loss is refused.
        form: ``two-step`` (an intermediate loss of N, then accuracy of the loss), ``log-compute``
            (a sigmoid in log compute), ``direct`` (-log accuracy a power law in compute), or
            ``direct-nd`` (across ratios; needs finished runs at several D).
        data: the recipe(s) (column ``data``) to forecast; default every one in the table.
        baseline: the recipe the others' compute multipliers are against (default the first).
        chance: the task's chance accuracy where it is not known (:mod:`jaxscale.accuracy.tasks`).
        intermediate: the intermediate loss of the two-step form, ``TASK:METRIC`` (a perplexity
            is read as its log).
        max_n: fit only the models of at most this many parameters (the ladder).
        bootstrap, seed: the bootstrap's resamples (both stages) and seed.
        bayes: also sample the joint posterior of both stages by NUTS (two-step form only), with
            ``chains`` chains of ``samples`` draws after as many warmup steps.
        shots: of a table with a ``shots`` column, the rows evaluated with this many shots.

    Returns:
        A :class:`DownstreamReport`.
    """
    from jaxscale.accuracy.evaluations import read_evaluations
    from jaxscale.accuracy.forecast import forecast, multiplier

    start = time.perf_counter()
    frame = read_evaluations(evaluations, metric=metric, shots=shots)
    if max_n is not None:
        frame = frame[frame["n_params"] <= max_n]
    recipes = list(dict.fromkeys(frame["data"])) if data is None else ([data] if isinstance(data, str) else list(data))
    base = baseline if baseline is not None else recipes[0]
    if base not in recipes:
        raise ValueError(f"--baseline {base!r} is not one of the recipes {recipes}")
    target = (float(target[0]), float(target[1]))
    # each recipe's evaluations are measured apart: their bootstraps draw independent noise (seed + i)
    forecasts = tuple(forecast(frame, task, target, form=form, data=recipe, resamples=bootstrap, seed=seed + i,
                               metric=metric, chance=chance, intermediate=intermediate) for i, recipe in enumerate(recipes))
    by_recipe = {f.ladder.data: f for f in forecasts}
    multipliers = {r: multiplier(by_recipe[base], by_recipe[r]) for r in recipes if r != base}
    if bayes and form != "two-step":
        raise ValueError(f"--bayes samples the two-step form's joint posterior; --form is {form}")
    posteriors = {f.ladder.data: _posterior(f, chains, samples, seed) for f in forecasts if bayes and f.fit is not None}
    return DownstreamReport(forecasts, base if len(recipes) > 1 else None, multipliers, posteriors,
                            time.perf_counter() - start)


def _posterior(f: Forecast, chains: int, samples: int, seed: int) -> dict[str, list[float]]:
    """The 90% highest-density intervals of ``f``'s target under the joint posterior of both stages."""
    from jaxscale.accuracy.two_step import predictive_draws
    from jaxscale.core.intervals import interval
    from jaxscale.inference.downstream_posterior import sample_two_step
    from jaxscale.inference.sample import NutsConfig

    config = NutsConfig(chains=chains, warmup=samples, samples=samples, seed=seed, progress_bar=False)
    draws = sample_two_step(f.fit, f.ladder, config).draws(np.array([f.target[0]]))[:, 0]
    law = interval(draws, LEVEL, method="hdi")
    measured = interval(predictive_draws(draws, f.ladder.n_questions, seed=seed), LEVEL, method="hdi")
    return {"interval": [float(law[0]), float(law[1])], "predictive": [float(measured[0]), float(measured[1])]}
