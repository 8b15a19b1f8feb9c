"""``jaxscale.schedule``: the learning-rate schedule a multi-power law predicts to end lowest.

The law is a fit (:func:`jaxscale.fitting.multipower_curves.fit_multipower`), its parameters, or a
published set (``luo-25m``: Luo et al. 2025's 25M model); the schedule is optimised through it by
:func:`jaxscale.optimum.schedules.optimal_schedule` and compared with cosine and WSD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from jaxscale.fitting.multipower_curves import MultiPowerFit
from jaxscale.laws import multipower
from jaxscale.optimum import schedules

#: Published parameter sets of the multi-power law, by name.
PUBLISHED = {"luo-25m": multipower.PUBLISHED_25M}


@dataclass(frozen=True)
class ScheduleReport:
    """The optimised schedule (``optimum``: its rates, predicted final loss, the baselines') under
    the law named by ``source``."""

    optimum: schedules.ScheduleOptimum
    source: str

    def summary(self) -> pd.DataFrame:
        """The predicted final loss of each schedule and how far each baseline ends above the optimum."""
        rows = [{"quantity": "final_loss_optimised", "estimate": self.optimum.loss}]
        rows += [{"quantity": f"final_loss_{name}", "estimate": loss} for name, (_, loss) in self.optimum.baselines.items()]
        rows += [{"quantity": f"gain_over_{name}", "estimate": gain} for name, gain in self.optimum.gains().items()]
        return pd.DataFrame(rows).assign(lower=math.nan, upper=math.nan)

    def to_dict(self) -> dict[str, Any]:
        return {"law": self.source, **self.optimum.to_dict()}

    def plot(self) -> dict[str, Figure]:
        """``schedule``: the rates and the predicted loss curves of the optimised schedule, cosine and WSD."""
        from jaxscale.plots.schedules import schedule_figure

        return {"schedule": schedule_figure(self.optimum)}

    def __repr__(self) -> str:
        return f"ScheduleReport ({self.source})\n{self.summary().to_string(index=False)}"


def schedule(law: MultiPowerFit | multipower.MultiPowerParams | None = None, *, published: str | None = None,
             steps: int, peak_lr: float, warmup_steps: int = 0, iterations: int = schedules.ITERATIONS,
             knots: int = schedules.KNOTS) -> ScheduleReport:
    """The non-increasing schedule of ``steps`` steps after a linear warmup of ``warmup_steps`` to
    ``peak_lr`` that the multi-power ``law`` (a fit or its parameters), or the ``published`` set,
    predicts to end lowest, against cosine and WSD of the same length and peak."""
    if (law is None) == (published is None):
        raise ValueError("give a fitted multi-power law or --published NAME (one of them)")
    if published is not None:
        if published not in PUBLISHED:
            raise ValueError(f"unknown published multi-power law {published!r}; choose one of {sorted(PUBLISHED)}")
        params, source = PUBLISHED[published], published
    else:
        params = law.params if isinstance(law, MultiPowerFit) else law
        source = "fitted"
    return ScheduleReport(schedules.optimal_schedule(params, steps, peak_lr, warmup_steps, iterations=iterations,
                                                     knots=knots), source)
