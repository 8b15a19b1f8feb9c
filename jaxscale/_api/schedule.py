"""``jaxscale.schedule``: the learning-rate schedule a multi-power law predicts to end lowest.

The law is a parameter set (a fit's: :func:`jaxscale.curve` with ``law="multipower"`` fits by the
rule of :mod:`jaxscale.curves.held_out_schedules`, ``fit_rule="optimum"`` by
:func:`jaxscale.curves.multipower_fit.fit_multipower`) or a published set (``luo-25m``: Luo et al. 2025's 25M model); the schedule is optimised through it by
:func:`jaxscale.optimum.best_schedule.optimal_schedule` and compared with cosine and WSD.
"""

from __future__ import annotations

import warnings

from dataclasses import dataclass
from typing import Any

import pandas as pd

from jaxscale._api._results import Figures, Result, rows
from jaxscale.laws import multipower
from jaxscale.optimum import best_schedule
from jaxscale.support.plausibility import PlausibilityWarning

#: Published parameter sets of the multi-power law, by name.
PUBLISHED = {"luo-25m": multipower.PUBLISHED_25M}


@dataclass(frozen=True, repr=False)
class ScheduleReport(Result):
    """The optimised schedule (``optimum``: its rates, predicted final loss, the baselines') under
    the law named by ``source``."""

    optimum: best_schedule.ScheduleOptimum
    source: str

    def _report(self) -> dict[str, Any]:
        numbers = {"law": self.source, **self.optimum.to_dict()}
        better = [name for name, gain in numbers["gain"].items() if gain < 0]
        if better:
            numbers["note"] = (f"{' and '.join(better)} ends below the optimised schedule: the descent did not "
                               f"reach the optimum in {numbers['descent']['iterations']} iterations (raise "
                               "--iterations)")
        return numbers

    def summary(self) -> pd.DataFrame:
        """The predicted final loss of each schedule and how far each baseline ends above the
        optimum (predictions of a fitted law: no intervals)."""
        entries = [{"quantity": "final_loss_optimised", "estimate": self.optimum.loss}]
        entries += [{"quantity": f"final_loss_{name}", "estimate": loss}
                    for name, (_, loss) in self.optimum.baselines.items()]
        entries += [{"quantity": f"gain_over_{name}", "estimate": gain} for name, gain in self.optimum.gains().items()]
        return rows(entries)

    def plot(self) -> Figures:
        """``schedule``: the rates and the predicted loss curves of the optimised schedule, cosine and WSD."""
        from jaxscale.plots.schedules import schedule_figure

        return Figures(schedule=schedule_figure(self.optimum))

    def _title(self) -> str:
        return f"ScheduleReport ({self.source})"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        params = ", ".join(f"{k} {v:.4g}" for k, v in numbers["params"].items())
        lines = [f"jaxscale schedule: law {numbers['law']} ({params})",
                 f"  {numbers['steps']} steps, warmup {numbers['warmup_steps']}, peak {numbers['peak_lr']:g}",
                 f"  optimised schedule: final loss {numbers['optimised_loss']:.4f} (ends at rate "
                 f"{numbers['final_lr']:.3g})"]
        lines += [f"  {name:<8} final loss {loss:.4f}: {_gain_text(numbers['gain'][name])}"
                  for name, loss in numbers["baseline_loss"].items()]
        lines += [f"  note: {numbers['note']}"] if "note" in numbers else []
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


def _gain_text(gain: float) -> str:
    """How far a baseline ends from the optimised schedule, above or below it, in nats."""
    return f"{gain:.4f} nats above the optimised" if gain >= 0 else f"{-gain:.4f} nats below the optimised"


def schedule(params: multipower.MultiPowerParams | None = None, *, published: str | None = None,
             steps: int, peak_lr: float, warmup_steps: int = 0, iterations: int = best_schedule.ITERATIONS,
             knots: int = best_schedule.KNOTS) -> ScheduleReport:
    """The learning-rate schedule a multi-power law predicts to end lowest.

    Luo et al. (2025, Section 5): with a linear warmup of ``warmup_steps`` to ``peak_lr`` fixed, the
    rates of the steps after it solve min L(T; eta) over eta_max >= eta_(W+1) >= ... >= eta_T > 0,
    L the multi-power law L(t) = L0 + A (S1(t) + S_W)^-alpha - LD(t)
    (:mod:`jaxscale.laws.multipower`), by gradient descent through the whole curve
    (:func:`jaxscale.optimum.best_schedule.optimal_schedule`); cosine and WSD of the same length and
    peak are evaluated under the same law.

    Args:
        params: the multi-power law's parameters, e.g. a fit's
            (``jaxscale.curve(runs, law="multipower", fit_runs=...).multipower.params``, by the
            held-out rule); or None with ``published``.
        published: a published parameter set instead: ``"luo-25m"`` (Luo et al.'s 25M model).
        steps: the schedule's length in steps, warmup included.
        peak_lr: the peak learning rate eta_max.
        warmup_steps: linear warmup steps W.
        iterations: gradient-descent steps of the optimisation.
        knots: knots of the schedule's piecewise-linear log after the warmup.

    Returns:
        A :class:`ScheduleReport`.
    """
    if (params is None) == (published is None):
        raise ValueError("give a multi-power law's parameters or --published NAME (one of them)")
    if published is not None:
        if published not in PUBLISHED:
            raise ValueError(f"unknown published multi-power law {published!r}; choose one of {sorted(PUBLISHED)}")
        params, source = PUBLISHED[published], published
    elif not isinstance(params, multipower.MultiPowerParams):
        raise ValueError(f"params must be a multi-power law's MultiPowerParams (a fit's .params), got "
                         f"{type(params).__name__}")
    else:
        source = "fitted"
    if (why := multipower.undetermined_drop(params)) is not None:
        warnings.warn(f"{why}: the schedule is optimised under that product alone", PlausibilityWarning, stacklevel=2)
    return ScheduleReport(best_schedule.optimal_schedule(params, steps, peak_lr, warmup_steps, iterations=iterations,
                                                     knots=knots), source)
