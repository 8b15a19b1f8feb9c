"""Figures of experiment design and recipe comparison: the candidates a plan weighed, a replay's
interval widths against compute, and two recipes' frontiers with their compute multiplier."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import colormaps, colors
from matplotlib.figure import Figure

from jaxscale.planning.multiplier import frontier_log_loss
from jaxscale.planning.recipes import RecipeComparison
from jaxscale.planning.replay import Trace
from jaxscale.planning.selection import Plan
from jaxscale.plots.log_ticks import plain_log_ticks
from jaxscale.tables.table import RunsTable


def candidates_figure(plan: Plan, runs_n: np.ndarray | None = None, runs_d: np.ndarray | None = None) -> Figure:
    """The candidates in (N, D), coloured by the variance of the target each removes per FLOP
    (log scale) before any is chosen; the chosen ones numbered in order; the runs so far in grey;
    lines of constant compute C = 6 N D."""
    fig = Figure(figsize=(7.5, 5.5), layout="constrained")
    ax = fig.add_subplot()
    value = np.where(plan.value > 0, plan.value, np.nan)
    finite = value[np.isfinite(value)]
    norm = colors.LogNorm(finite.min(), finite.max()) if finite.size and finite.min() < finite.max() else None
    points = ax.scatter(plan.n, plan.d, c=value, s=22, cmap="viridis", norm=norm, marker="s")
    if runs_n is not None:
        ax.scatter(runs_n, runs_d, s=10, color="0.55", label="runs so far")
    for rank, choice in enumerate(plan.choices, start=1):
        n, d = plan.n[choice.index], plan.d[choice.index]
        ax.scatter(n, d, s=130, facecolors="none", edgecolors="red", linewidths=1.5)
        ax.annotate(str(rank), (n, d), xytext=(5, 5), textcoords="offset points", color="red", fontsize=8)
    n_line = np.geomspace(plan.n.min(), plan.n.max(), 50)
    for c in 10.0 ** np.arange(np.floor(np.log10(plan.cost.min())), np.ceil(np.log10(plan.cost.max())) + 1):
        ax.plot(n_line, c / (6 * n_line), color="0.8", linewidth=0.7, zorder=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(plan.n.min() / 1.5, plan.n.max() * 1.5)
    ax.set_ylim(plan.d.min() / 1.5, plan.d.max() * 1.5)
    plain_log_ticks(ax)
    ax.set_xlabel("N, parameters")
    ax.set_ylabel("D, tokens")
    label = "variance removed per FLOP" if plan.criterion == "variance" else "information gained per FLOP"
    fig.colorbar(points, ax=ax, label=f"{label} (target {plan.target.name})")
    ax.set_title(f"next runs for {plan.target.name}: {len(plan.choices)} chosen (red, in order),\n"
                 f"{plan.spent:.3g} of {plan.budget:.3g} FLOP; grey lines: constant C", fontsize=10)
    if runs_n is not None:
        ax.legend(loc="lower right", fontsize=8)
    return fig


def replay_figure(traces: Mapping[str, Sequence[Trace]], target_width: float, full_width: float,
                  title: str = "") -> Figure:
    """Each strategy's interval width (left) and holdout error (right) against cumulative compute:
    one line per trace (several for random orders, thin), the target width dashed and the whole
    table's dotted."""
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2, sharex=True)
    palette = colormaps["tab10"]
    for j, (name, group) in enumerate(traces.items()):
        for i, trace in enumerate(group):
            style = {"color": palette(j), "linewidth": 1.6 if len(group) == 1 else 0.7,
                     "alpha": 1.0 if len(group) == 1 else 0.6, "label": name if i == 0 else None}
            widths = np.where(np.isfinite(trace.widths), trace.widths, np.nan)
            left.step(trace.compute, widths, where="post", **style)
            right.step(trace.compute, trace.holdout_error, where="post", **style)
    left.axhline(target_width, color="black", linestyle="--", linewidth=1, label="target width")
    left.axhline(full_width, color="black", linestyle=":", linewidth=1, label="whole table")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.grid(alpha=0.4)
        ax.set_xlabel("cumulative compute, FLOP")
    left.set_yscale("log")
    left.set_ylabel("width of the 90% interval, decades")
    right.set_ylabel("holdout error, mean |L̂/L - 1|")
    right.set_yscale("log")
    left.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return fig


def choice_order_figure(runs: RunsTable, start: np.ndarray, trace: Trace) -> Figure:
    """The runs of a replay in (N, C), coloured by when the strategy chose them (the start set in
    black), with the cumulative compute of the choices against their order beside."""
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    rank = np.full(len(runs), np.nan)
    rank[trace.chosen] = np.arange(1, len(trace.chosen) + 1)
    left.scatter(runs.n[start], runs.c[start], s=16, color="black", label="start set")
    points = left.scatter(runs.n[trace.chosen], runs.c[trace.chosen], c=rank[trace.chosen], s=16, cmap="viridis_r")
    fig.colorbar(points, ax=left, label=f"order of choice ({trace.strategy})")
    left.set_xscale("log")
    left.set_yscale("log")
    plain_log_ticks(left)
    left.set_xlabel("N, parameters")
    left.set_ylabel("C, FLOP")
    left.legend(fontsize=8)
    right.plot(np.arange(len(trace.compute)), trace.compute, color="black")
    right.set_yscale("log")
    right.set_xlabel("runs chosen")
    right.set_ylabel("cumulative compute, FLOP")
    for ax in (left, right):
        ax.grid(alpha=0.4)
    return fig


def multiplier_figure(comparison: RecipeComparison) -> Figure:
    """Left: each recipe's compute-optimal frontier L*(C) at the grouped fit, over the range of
    budgets. Right: k(C) of every recipe against the baseline with its 95% bootstrap band (and the
    posterior band when sampled); the target compute marked."""
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    law, c = comparison.law, comparison.budgets
    palette = colormaps["tab10"]
    params = law.from_vector(comparison.fit.vectors)
    for g, label in enumerate(comparison.labels):
        p = type(params)(*(float(v[g]) for v in params))
        left.plot(c, np.exp(np.asarray(frontier_log_loss(law, p, np.log(c)))), color=palette(g), label=label)
    left.set_xscale("log")
    left.set_yscale("log")
    plain_log_ticks(left)
    left.set_xlabel("C, FLOP")
    left.set_ylabel("compute-optimal loss L*(C) (nats per token)")
    left.legend(fontsize=8)
    for g, (label, m) in enumerate(comparison.multipliers.items(), start=1):
        right.plot(c, m.k, color=palette(g), label=f"{label} / {comparison.baseline}")
        for band, alpha, kind in ((m.bootstrap, 0.25, "bootstrap"), (m.posterior, 0.12, "posterior")):
            if band:
                right.fill_between(c, [i.lower for i in band], [i.upper for i in band], color=palette(g),
                                   alpha=alpha, linewidth=0, label=f"95% {kind}")
    right.axvline(comparison.budget, color="black", linestyle="--", linewidth=0.8)
    right.axhline(1.0, color="gray", linewidth=0.8)
    right.set_xscale("log")
    right.set_yscale("log")
    plain_log_ticks(right)
    right.set_xlabel("C, FLOP (the recipe's compute)")
    right.set_ylabel(f"k(C) = C_{comparison.baseline} / C at equal loss")
    right.legend(fontsize=8)
    for ax in (left, right):
        ax.grid(alpha=0.4)
    fig.suptitle(f"{law.name} law, {', '.join(comparison.shared) or 'nothing'} shared")
    return fig
