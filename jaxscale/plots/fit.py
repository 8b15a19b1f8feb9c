"""Figures of a scaling-law fit: residuals, the fitted law along isoFLOP budgets, and the
optimal-allocation points of Approaches 1 and 2."""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.frontier_laws import FrontierLaws
from jaxscale.optimum.solver import optimal_log_n


def residual_figure(fit: FitResult) -> Figure:
    """log L - log Lhat of every run against the first input (N) and against the fitted loss;
    colour is the second input (D) on a log scale."""
    x1, x2, *_ = fit.inputs
    predicted = fit.predict(*fit.inputs)
    residual = np.log(fit.runs.loss) - np.log(predicted)
    fig = Figure(figsize=(10, 4), layout="constrained")
    left, right = fig.subplots(1, 2, sharey=True)
    for ax, x, label in ((left, x1, fit.law.inputs[0]), (right, predicted, "fitted loss (nats per token)")):
        points = ax.scatter(x, residual, c=np.log10(x2), s=14, cmap="viridis")
        ax.axhline(0.0, color="gray", linewidth=0.8)
        ax.set_xlabel(label)
        ax.grid(alpha=0.4)
    left.set_xscale("log")
    left.set_ylabel(r"residual $\log L - \log \hat L$")
    fig.colorbar(points, ax=right, label=rf"$\log_{{10}}$ {fit.law.inputs[1]}")
    fig.suptitle(f"{fit.law.name} fit: {fit.n_points} runs, Huber objective {fit.objective:.6g}")
    return fig


@float64
def isoflop_figure(fit: FitResult, n_budgets: int = 6) -> Figure:
    """The fitted law along budgets C = 6 N D (isoFLOP curves of loss against N) over the
    runs, coloured by budget (the runs' colour key: log10 C), each curve drawn whole: over every
    run's N and a factor 3 past its optimum N*(C) (:func:`jaxscale.optimum.solver.optimal_log_n`),
    marked, inside the y-limits (a budget whose loss has no minimum is named so in the key)."""
    if fit.law.inputs != ("N", "D"):
        raise ValueError(f"isoFLOP curves need a law of N and D; {fit.law.name} is of {fit.law.inputs}")
    n, d = fit.inputs
    y = fit.runs.loss
    c = 6.0 * n * d
    budgets = np.geomspace(c.min(), c.max(), n_budgets)
    n_star = np.exp(np.asarray(optimal_log_n(fit.law, fit.params, np.log(budgets))))
    l_star = fit.predict(n_star, budgets / (6.0 * n_star))
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.add_subplot()
    runs = ax.scatter(n, y, c=np.log10(c), s=12, cmap="plasma", alpha=0.7, label="runs")
    fig.colorbar(runs, ax=ax, label=r"runs: $\log_{10} C$, training FLOP")
    for budget, optimum, lowest, colour in zip(budgets, n_star, l_star, colormaps["plasma"](np.linspace(0, 1, n_budgets))):
        ends = [n.min(), n.max()] if np.isnan(optimum) else [min(n.min(), optimum), max(n.max(), optimum)]
        n_grid = np.geomspace(ends[0] / 3, ends[1] * 3, 300)
        ax.plot(n_grid, fit.predict(n_grid, budget / (6.0 * n_grid)), color=colour, linewidth=1.2,
                label=f"C = {budget:.1e}" + (", no minimum" if np.isnan(optimum) else ""))
        if np.isfinite(lowest):
            ax.plot(optimum, lowest, "o", color=colour, markeredgecolor="black")
    defined = l_star[np.isfinite(l_star)]
    ax.set_xscale("log")
    ax.set_ylim(min(y.min(), *defined) * 0.95, max(np.percentile(y, 98), *defined) * 1.05)
    ax.set_xlabel("N, parameters")
    ax.set_ylabel("loss (nats per token)")
    ax.set_title("fitted law along isoFLOP budgets (dots: optima)")
    ax.grid(alpha=0.4)
    ax.legend(fontsize=7, loc="upper right")
    return fig


def frontier_laws_figure(result: FrontierLaws) -> Figure:
    """N*(C) and D*(C) points of Approach 1 or 2 with their fitted power laws (points only
    where no law is defined)."""
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.add_subplot()
    for values, exponent, coefficient, name in (
        (result.n_opt, result.a, result.n_coefficient, "N*"),
        (result.d_opt, result.b, result.d_coefficient, "D*"),
    ):
        points = ax.scatter(result.c, values, s=14, label=f"{name}, no power law" if exponent is None else None)
        if exponent is not None:
            c = np.geomspace(result.c.min(), result.c.max(), 100)
            ax.plot(c, coefficient * c**exponent, color=points.get_facecolor()[0],
                    label=rf"{name} $\propto C^{{{exponent:.3f}}}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("C, training FLOP")
    ax.set_ylabel("compute-optimal N* (parameters), D* (tokens)")
    ax.set_title(f"{result.method}: compute-optimal allocation")
    ax.grid(alpha=0.4)
    ax.legend()
    return fig
