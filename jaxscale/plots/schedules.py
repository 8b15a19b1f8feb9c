"""Figures of learning-rate schedules under the multi-power law: the optimised schedule against
cosine and WSD (:mod:`jaxscale.optimum.best_schedule`), and fitted and predicted loss curves
(:mod:`jaxscale.curves.multipower_fit`)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from jaxscale.core.numerics import float64
from jaxscale.curves.multipower_fit import MultiPowerFit
from jaxscale.laws import multipower
from jaxscale.optimum.best_schedule import ScheduleOptimum
from jaxscale.tables import schema as rs

#: Points along each predicted loss curve of :func:`schedule_figure`.
CURVE_POINTS = 200


@float64
def schedule_figure(best: ScheduleOptimum) -> Figure:
    """Left: the rates of the optimised, cosine and WSD schedules; right: the loss the law predicts
    along each, with its final value in the legend."""
    fig = Figure(figsize=(10, 3.8), layout="constrained")
    rates_ax, loss_ax = fig.subplots(1, 2)
    steps = np.unique(np.linspace(1, best.steps, CURVE_POINTS).astype(int))
    schedules = {"optimised": (best.lrs, best.loss), **best.baselines}
    for (name, (lrs, final)), colour in zip(schedules.items(), ("C3", "C0", "C2")):
        rates_ax.plot(np.arange(1, best.steps + 1), lrs, color=colour, label=name)
        curve = jax.tree.map(jnp.asarray, multipower.curve_of(lrs, steps))
        loss_ax.plot(steps, np.asarray(multipower.loss(best.params, curve)), color=colour,
                     label=f"{name}: {final:.4f}")
    rates_ax.set_xlabel("step")
    rates_ax.set_ylabel("learning rate")
    rates_ax.legend(fontsize=8)
    loss_ax.set_xlabel("step")
    loss_ax.set_ylabel("predicted loss (nats per token)")
    lowest = min(final for _, final in schedules.values())
    loss_ax.set_ylim(lowest - 0.05, lowest + 0.6)
    loss_ax.legend(fontsize=8, title="final loss")
    for ax in (rates_ax, loss_ax):
        ax.grid(alpha=0.3)
    fig.suptitle(f"the schedule the multi-power law predicts to end lowest ({best.steps} steps, peak {best.peak_lr:g})",
                 fontsize=10)
    return fig


def multipower_figure(fit: MultiPowerFit) -> Figure:
    """One panel per run: observed loss (dots) and the law (line), fitted runs black, predicted in
    colour (with their predictive intervals, shaded, where the fit has them), with each run's mean
    relative error."""
    errors = fit.errors().set_index(rs.RUN_ID)
    runs = [*fit.fitted, *fit.predicted]
    cols = min(3, len(runs))
    rows = math.ceil(len(runs) / cols)
    fig = Figure(figsize=(4 * cols, 3 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    colours = colormaps["viridis"](np.linspace(0.0, 0.9, max(len(fit.predicted), 1)))
    for ax, run in zip(axes, runs):
        points = fit.predictions[fit.predictions[rs.RUN_ID] == run]
        colour = "k" if run in fit.fitted else colours[list(fit.predicted).index(run)]
        ax.plot(points[rs.STEP], points[rs.LOSS], ".", color=colour, markersize=2)
        ax.plot(points[rs.STEP], points["predicted"], "-", color=colour, linewidth=0.9)
        if "predicted_lo" in points and run in fit.predicted:
            ax.fill_between(points[rs.STEP], points["predicted_lo"], points["predicted_hi"], color=colour, alpha=0.2,
                            linewidth=0)
        kind = "fitted" if run in fit.fitted else "predicted"
        ax.set_title(f"{run} ({kind}): mean |error| {errors.loc[run, 'mare']:.3%}", fontsize=8)
        ax.set_xlabel("step", fontsize=8)
        ax.set_ylabel("loss (nats per token)", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes[len(runs):]:
        ax.set_visible(False)
    fig.suptitle("multi-power law: runs fitted (black) and predicted (colour); dots observed, lines the law", fontsize=10)
    return fig
