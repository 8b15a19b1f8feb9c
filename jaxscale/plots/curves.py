"""Figure of learning-curve fits: per group, the checkpoints of the runs fitted and predicted, and
the annealing law's curve through each (:mod:`jaxscale.curves.lr_annealing_fit`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure

from jaxscale.curves.lr_annealing_fit import CurveFit
from jaxscale.tables import schema as rs


#: Panels on one page of :func:`curves_figures`.
PANELS_PER_PAGE = 16


def curves_figures(fits: Sequence[CurveFit], per_page: int = PANELS_PER_PAGE) -> dict[str, Figure]:
    """Every group's panel (:func:`curves_figure`), ``per_page`` to a figure: ``curves`` when
    one page holds them, else ``curves_1``, ``curves_2``, ... (none left out)."""
    fits = list(fits)
    pages = [fits[i:i + per_page] for i in range(0, len(fits), per_page)]
    if len(pages) == 1:
        return {"curves": curves_figure(pages[0])}
    return {f"curves_{i}": curves_figure(page, f" (groups {(i - 1) * per_page + 1}-{(i - 1) * per_page + len(page)} "
                                                  f"of {len(fits)})") for i, page in enumerate(pages, 1)}


def curves_figure(fits: Sequence[CurveFit], part: str = "") -> Figure:
    """One panel per group: observed loss against step (black: runs fitted; colours: runs
    predicted, named in the panel's key) and the fitted law (lines), at the checkpoints fitted and
    judged only: those before the fit's start (``--skip-warmups``), a warmup the law does not
    describe, are left out (:func:`_judged`), so the law never stretches the y-axis there;
    ``part`` is added to the title."""
    shown = list(fits)
    cols = math.ceil(math.sqrt(len(shown)))
    rows = math.ceil(len(shown) / cols)
    fig = Figure(figsize=(4 * cols, 3.2 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, curve in zip(axes, shown):
        fitted = curve.fit.runs.select(np.argsort(curve.fit.runs.step, kind="stable"))
        ids = fitted.run_id.astype(str)
        for i, run in enumerate(curve.fitted):
            mine = ids == run
            ax.plot(fitted.step[mine], fitted.loss[mine], "k.", markersize=3, label="fitted" if i == 0 else None)
            ax.plot(fitted.step[mine], curve.fit.predict(*fitted.select(mine).law_inputs(curve.fit.law.inputs)),
                    "k-", linewidth=0.8)
        colours = colormaps["viridis"](np.linspace(0.0, 0.9, max(len(curve.predicted), 1)))
        for run, colour in zip(curve.predicted, colours):
            points = _judged(curve.predictions[curve.predictions[rs.RUN_ID] == run].sort_values(rs.STEP, kind="stable"))
            ax.plot(points[rs.STEP], points[rs.LOSS], ".", color=colour, markersize=3, label=f"predicted {run}")
            ax.plot(points[rs.STEP], points["predicted"], "-", color=colour, linewidth=0.8)
        ax.set_xscale("log")
        ax.set_title(", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in curve.group.items()),
                     fontsize=9)
        ax.set_xlabel("step")
        ax.set_ylabel("loss (nats per token)")
        ax.grid(alpha=0.4)
        ax.legend(fontsize=6)
    for ax in axes[len(shown):]:
        ax.set_visible(False)
    fig.suptitle(f"lr-annealing law{part}: runs fitted (black) and predicted (colour); dots observed, lines the law\n"
                 "(checkpoints from the fit's start on: the first warmups, not fitted, are left out)")
    return fig


def _judged(points: pd.DataFrame) -> pd.DataFrame:
    """The checkpoints of a predicted run that its errors judge: those in the law's domain
    (column ``in_domain``) and its last one, judged whatever the run's length."""
    return points[points["in_domain"] | (points[rs.STEP] == points[rs.STEP].max())]
