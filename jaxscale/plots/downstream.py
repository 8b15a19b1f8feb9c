"""Figures of downstream forecasts (:mod:`jaxscale.accuracy.forecast`): accuracy against compute
with the ladder, the fit, its band and the target; and stage 2, accuracy against the
intermediate loss with every checkpoint it counts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib import ticker
from matplotlib.figure import Figure

from jaxscale.accuracy.forecast import LEVEL, Forecast
from jaxscale.accuracy.two_step import TwoStepFit
from jaxscale.core.intervals import interval
from jaxscale.plots.log_ticks import power_of_ten_label


def accuracy_figure(forecasts: Sequence[Forecast]) -> Figure:
    """Accuracy against compute C = 6 N D, one colour per recipe: the ladder's final checkpoints
    (dots, with their standard errors), the fitted law from the smallest rung to the target (line),
    its :data:`~jaxscale.accuracy.forecast.LEVEL` band over the bootstrap draws, the prediction and
    its predictive interval at the target (a diamond), and chance (dotted). A recipe whose task is
    not predictable from its ladder shows its ladder alone, the verdict in the legend."""
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    for i, f in enumerate(forecasts):
        colour = f"C{i}"
        ladder = f.ladder
        se = ladder.final_se if ladder.final_se is not None else np.zeros_like(ladder.final_acc)
        label = (ladder.data if f.prediction is not None else f"{ladder.data}: not predictable"
                 if not f.verdict.predictable else f"{ladder.data}: undefined at the target")
        ax.errorbar(ladder.compute, ladder.final_acc, yerr=se, fmt="o", color=colour, label=label, markersize=4)
        if f.prediction is None:
            continue
        n = np.geomspace(ladder.final_n.min(), f.target[0], 60)
        c = 6.0 * n * f.target[1]
        ax.plot(c, f.curve(n), color=colour, lw=1.5)
        lower, upper = interval(f.curve(n, draws=True), LEVEL)
        ax.fill_between(c, lower, upper, color=colour, alpha=0.2, lw=0)
        c_target = 6.0 * f.target[0] * f.target[1]
        lo, hi = f.predictive
        spans = [[max(f.prediction - lo, 0.0)], [max(hi - f.prediction, 0.0)]]  # a small bootstrap's interval may miss the point
        ax.errorbar([c_target], [f.prediction], yerr=spans, fmt="D",
                    color=colour, markersize=6, capsize=3)
    if forecasts:
        ax.axhline(forecasts[0].ladder.chance, color="grey", ls=":", lw=1, label="chance")
        ax.set_title(f"{forecasts[0].ladder.task} ({forecasts[0].ladder.metric}), {forecasts[0].form}: "
                     f"{LEVEL:.0%} bands")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(power_of_ten_label))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("training compute C = 6 N D (FLOP)")
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=8)
    return fig


def stage2_figure(forecasts: Sequence[Forecast]) -> Figure:
    """Stage 2 of the two-step form: accuracy against the intermediate loss at every checkpoint it
    counts (dots, one colour per recipe), the fitted map (line) and the target's predicted loss
    (a vertical line)."""
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    for i, f in enumerate(forecasts):
        colour = f"C{i}"
        ladder = f.ladder
        ax.plot(ladder.map_loss, ladder.map_acc, ".", color=colour, alpha=0.6, label=f"{ladder.data}: checkpoints")
        if not isinstance(f.fit, TwoStepFit):
            continue
        target_loss = float(f.fit.stage1.predict(np.array([f.target[0]]))[0])
        grid = np.linspace(min(ladder.map_loss.min(), target_loss), ladder.map_loss.max(), 100)
        ax.plot(grid, f.fit.stage2.predict(grid), color=colour, lw=1.5)
        ax.axvline(target_loss, color=colour, ls="--", lw=1)
    if forecasts:
        ax.axhline(forecasts[0].ladder.chance, color="grey", ls=":", lw=1, label="chance")
        ax.set_title(f"{forecasts[0].ladder.task}: stage 2, accuracy of the intermediate loss")
    # a task's perplexity counts its targets (LAMBADA: the passage's last word), not tokens
    ax.set_xlabel(f"intermediate loss: ln {forecasts[0].ladder.intermediate if forecasts else 'perplexity'} "
                  "(nats per target)")
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=8)
    return fig
