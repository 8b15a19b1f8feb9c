"""Figures of the optimal learning rate and batch size (:mod:`jaxscale.hyperparameters.per_group`):
each group's loss landscape over (log eta, log B) with its optimum, and the fitted eta*(N, D)
against the groups' optima with its bootstrap band; and, with the joint law's posterior, both
routes' eta* group by group."""

from __future__ import annotations

import math

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from jaxscale.hyperparameters.per_group import WINDOW, GridRuns, HyperparameterFit
from jaxscale.hyperparameters.joint import JointFit
from jaxscale.inference.joint_hyperparameters import JointPosterior
from jaxscale.laws.law import Law


def landscape_figure(runs: GridRuns, fit: HyperparameterFit, joint: JointFit | None = None,
                     max_panels: int = 20) -> Figure:
    """One panel per group: every run at (eta, B), coloured by its loss above the group's lowest
    (capped at 5%), the window's runs ringed, the rule's optimum (x) and the joint law's (+)."""
    groups = fit.optima.head(max_panels)
    cols = min(5, len(groups))
    rows = math.ceil(len(groups) / cols)
    fig = Figure(figsize=(3.2 * cols, 2.9 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    image = None
    for g, (ax, row) in enumerate(zip(axes, groups.itertuples())):
        mine = runs.group == g
        excess = runs.loss[mine] / runs.loss[mine].min() - 1
        image = ax.scatter(runs.lr[mine], runs.batch[mine], c=np.minimum(excess, 0.05), cmap="viridis_r", s=14,
                           vmin=0, vmax=0.05)
        window = excess <= WINDOW
        ax.scatter(runs.lr[mine][window], runs.batch[mine][window], s=40, facecolors="none", edgecolors="k",
                   linewidths=0.5)
        if np.isfinite(row.lr_opt) and np.isfinite(row.batch_opt):
            ax.plot(row.lr_opt, row.batch_opt, "rx", markersize=9, mew=2)
        if joint is not None:
            ax.plot(joint.optima["lr_opt"].iloc[g], joint.optima["batch_opt"].iloc[g], "w+", markersize=10, mew=2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"N {row.N:.3g}, D {row.D:.3g}", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[len(groups):]:
        ax.set_visible(False)
    if image is not None:
        fig.colorbar(image, ax=axes.tolist(), label="loss above the group's lowest (capped at 5%)", shrink=0.6)
    fig.supxlabel("peak learning rate")
    fig.supylabel("batch size (tokens)")
    fig.suptitle(f"loss landscapes: window of {WINDOW:.0%} ringed, the rule's optimum x"
                 + (", the joint law's +" if joint is not None else ""))
    return fig


def _law_line(law: Law, params, n: np.ndarray, d: float) -> np.ndarray:
    return np.exp(np.asarray(law.log_loss(params, np.log(n), np.log(np.full_like(n, d)))))


def lr_law_figure(fit: HyperparameterFit, published=None) -> Figure:
    """The groups' optimal learning rates against N, one colour per D, with the fitted eta*(N, D) at
    each D (line) and its 95% bootstrap band; ``published`` parameters of the same law dashed."""
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    optima = fit.optima
    tokens = np.sort(optima["D"].unique())
    colours = colormaps["plasma"](np.linspace(0.0, 0.85, len(tokens)))
    n = np.geomspace(optima["N"].min() / 1.3, optima["N"].max() * 1.3, 50)
    law, params, draws = fit.lr.law, fit.lr.params, fit.lr.draws
    for d, colour in zip(tokens, colours):
        mine = optima["D"] == d
        ax.plot(optima["N"][mine], optima["lr_opt"][mine], "o", color=colour, label=f"D = {d:.3g}")
        ax.plot(n, _law_line(law, params, n, d), "-", color=colour, linewidth=1)
        if draws is not None:
            ok = np.all(np.isfinite(np.stack([np.asarray(v) for v in draws])), axis=0)
            lines = np.exp(np.asarray(law.log_loss(type(draws)(*(np.asarray(v)[ok][:, None] for v in draws)),
                                                   np.log(n)[None], np.log(d))))
            lo, hi = np.percentile(lines, [2.5, 97.5], axis=0)
            ax.fill_between(n, lo, hi, color=colour, alpha=0.15, linewidth=0)
        if published is not None:
            ax.plot(n, _law_line(law, published, n, d), "--", color=colour, linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("model size N (parameters)")
    ax.set_ylabel("optimal peak learning rate")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"{law.formula}: fitted (lines, 95% band)" + (", published (dashed)" if published is not None else ""),
                 fontsize=9)
    ax.grid(alpha=0.3, which="both")
    return fig


def agreement_figure(fit: HyperparameterFit, posterior: JointPosterior) -> Figure:
    """Per group: its own optimal learning rate with the 95% bootstrap interval (per-group route)
    beside the joint law's eta*(N, D), posterior median and 95% interval, the groups ordered by N
    then D; an interval that is undefined (no bootstrap) is drawn as the point alone."""
    fig = Figure(figsize=(6.4, 0.3 * len(fit.optima) + 1.4), layout="constrained")
    ax = fig.subplots()
    o = fit.optima.reset_index(drop=True)
    rows = np.arange(len(o))
    own = o["lr_opt"].to_numpy()
    below, above = np.nan_to_num(own - o["lr_opt_lower"].to_numpy()), np.nan_to_num(o["lr_opt_upper"].to_numpy() - own)
    ax.errorbar(own, rows - 0.12, xerr=[below, above],
                fmt="o", color="tab:blue", markersize=4, capsize=2, label="each group's optimum (95% bootstrap)")
    lo, mid, hi = np.nanpercentile(posterior.optima.lr, [2.5, 50, 97.5], axis=0)
    ax.errorbar(mid, rows + 0.12, xerr=[mid - lo, hi - mid], fmt="s", color="tab:orange", markersize=4, capsize=2,
                label="joint law's eta*(N, D) (95% posterior)")
    ax.set_yticks(rows, [f"N {n:.3g}, D {d:.3g}" for n, d in zip(o["N"], o["D"])], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("optimal peak learning rate")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("the two routes to eta*, group by group", fontsize=9)
    ax.grid(alpha=0.3, which="both", axis="x")
    return fig
