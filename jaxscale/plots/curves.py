"""Figure of learning-curve fits: per group, the checkpoints of the runs fitted and predicted, and
the annealing law's curve through each (:mod:`jaxscale.fitting.learning_curves`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from jaxscale.fitting.learning_curves import CurveFit
from jaxscale.runs import schema as rs


def curves_figure(fits: Sequence[CurveFit], max_panels: int = 16) -> Figure:
    """One panel per group (the first ``max_panels``): observed loss against step (black: runs
    fitted; colours: runs predicted) and the fitted law at every checkpoint (lines)."""
    shown = list(fits)[:max_panels]
    cols = math.ceil(math.sqrt(len(shown)))
    rows = math.ceil(len(shown) / cols)
    fig = Figure(figsize=(4 * cols, 3.2 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, curve in zip(axes, shown):
        fitted = curve.fit.runs.select(np.argsort(curve.fit.runs.step, kind="stable"))
        ids = fitted.run_id.astype(str)
        for run in curve.fitted:
            mine = ids == run
            ax.plot(fitted.step[mine], fitted.loss[mine], "k.", markersize=3)
            ax.plot(fitted.step[mine], curve.fit.predict(*fitted.select(mine).law_inputs(curve.fit.law.inputs)),
                    "k-", linewidth=0.8)
        colours = colormaps["viridis"](np.linspace(0.0, 0.9, max(len(curve.predicted), 1)))
        for run, colour in zip(curve.predicted, colours):
            points = curve.predictions[curve.predictions[rs.RUN_ID] == run].sort_values(rs.STEP, kind="stable")
            ax.plot(points[rs.STEP], points[rs.LOSS], ".", color=colour, markersize=3)
            ax.plot(points[rs.STEP], points["predicted"], "-", color=colour, linewidth=0.8)
        ax.set_xscale("log")
        ax.set_title(", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in curve.group.items()),
                     fontsize=9)
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.grid(alpha=0.4)
    for ax in axes[len(shown):]:
        ax.set_visible(False)
    fig.suptitle("lr-annealing law: runs fitted (black) and predicted (colour); dots observed, lines the law")
    return fig
