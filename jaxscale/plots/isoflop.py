"""Figures of an isoFLOP analysis: each budget's curve with its minimum by each rule and the
budgets refused, and the optima against compute with each rule's power law."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from jaxscale.fitting.isoflop_grid import GridDiagnostics
from jaxscale.fitting.isoflop_optima import Profiles, RuleFit

#: One marker per rule.
MARKERS = {"parabola": "s", "akima": "o", "law": "^"}


def rules_figure(data: Profiles, fits: Mapping[str, RuleFit], diagnostics: GridDiagnostics) -> Figure:
    """Left: loss against N at each budget (colour: log10 C), each rule's minimum marked, a budget
    refused by every rule drawn hollow and labelled; the law's optimum as a dashed line. Right:
    each rule's N* against C and its power law, with a and any warning in the title."""
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    colours = colormaps["viridis"](np.linspace(0, 0.9, len(data.budgets)))
    refused_all = np.all([~f.accepted for f in fits.values()], axis=0)
    for j, (c, colour) in enumerate(zip(data.budgets, colours)):
        rows = data.labels == j
        order = np.argsort(data.log_n[rows])
        n, loss = np.exp(data.log_n[rows][order]), data.loss[rows][order]
        face = "none" if refused_all[j] else colour
        left.plot(n, loss, "-", color=colour, linewidth=0.8, alpha=0.6)
        left.scatter(n, loss, s=12, facecolors=face, edgecolors=colour, label=f"{c:.2g}")
        if refused_all[j]:
            left.annotate("refused: edge" if "edge" in _reason(fits, j) else "refused", (n[0], loss[0]),
                          fontsize=7, color=colour, xytext=(0, 6), textcoords="offset points")
        for rule, fit in fits.items():
            if fit.accepted[j]:
                left.scatter(fit.n_star[j], fit.loss_star[j], marker=MARKERS.get(rule, "x"), s=40,
                             facecolors="none", edgecolors="black", linewidths=0.9)
    for rule in fits:
        left.scatter([], [], marker=MARKERS.get(rule, "x"), facecolors="none", edgecolors="black", label=rule)
    left.set_xscale("log")
    left.set_xlabel("N (parameters)")
    left.set_ylabel("loss (nats per token)")
    left.legend(fontsize=7, ncol=2, title="C (FLOP) / rule", title_fontsize=7)
    left.grid(alpha=0.3)
    c_line = np.geomspace(data.budgets.min(), data.budgets.max(), 50)
    right.plot(data.budgets, diagnostics.n_law, "k--", linewidth=1, label="law's N*(C)")
    for rule, fit in fits.items():
        ok = fit.accepted
        line = right.plot(data.budgets[ok], fit.n_star[ok], MARKERS.get(rule, "x"), mfc="none")[0]
        if fit.a is not None:
            right.plot(c_line, np.exp(fit.log_n_pivot) * (c_line / fit.pivot)**fit.a, color=line.get_color(), linewidth=1,
                       label=f"{rule}: a = {fit.a:.3f}")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("C (FLOP)")
    right.set_ylabel("N*")
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    warned = [w.split(":")[0] for w in diagnostics.warnings]
    right.set_title("warnings: " + ", ".join(sorted(set(warned))) if warned else "no grid warnings", fontsize=9,
                    color="firebrick" if warned else "black")
    return fig


def _reason(fits: Mapping[str, RuleFit], j: int) -> str:
    for fit in fits.values():
        for r in fit.refusals:
            if np.isclose(r.budget, fit.budgets[j]):
                return r.reason
    return ""
