"""Figures of the word2vec scaling study: the accuracy grid (Mikolov 2013a Table 2) and the
error-versus-compute frontier with the fitted law."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from matplotlib.figure import Figure


def accuracy_grid_figure(rows: list[dict]) -> Figure:
    """Analogy accuracy (%) as a heat map over dimension (rows) x training words (columns)."""
    dims = sorted({r["dim"] for r in rows})
    words = sorted({r["words"] for r in rows})
    table = np.full((len(dims), len(words)), np.nan)
    for r in rows:
        table[dims.index(r["dim"]), words.index(r["words"])] = r["accuracy"]
    fig = Figure(figsize=(1.4 * len(words) + 2.5, 0.8 * len(dims) + 2), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(table, cmap="viridis", aspect="auto", origin="lower")
    for i in range(len(dims)):
        for j in range(len(words)):
            light = table[i, j] > np.nanmean(table)
            ax.text(j, i, f"{table[i, j]:.1f}", ha="center", va="center", color="black" if light else "white", fontsize=9)
    ax.set_xticks(range(len(words)), [f"{w / 1e6:g}M" for w in words])
    ax.set_yticks(range(len(dims)), [str(d) for d in dims])
    ax.set_xlabel("training words")
    ax.set_ylabel("vector dimensionality")
    ax.set_title("Analogy accuracy [%], top-30k questions")
    fig.colorbar(image, ax=ax, label="accuracy [%]")
    return fig


def frontier_figure(
    rows: list[dict], law: Callable[[np.ndarray, np.ndarray], np.ndarray], kappa: float,
    optimal: dict | None = None, title: str = "fitted law",
) -> Figure:
    """Analogy error against training compute (Eq. 1 units), one line per dimension, with the
    fitted ``law(d, T)``'s curves and its compute-optimal frontier min_d err(d, C / (kappa d))."""
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.add_subplot()
    dims = sorted({r["dim"] for r in rows})
    compute = np.array([r["compute"] for r in rows])
    span = np.logspace(np.log10(compute.min() / 2), np.log10(compute.max() * 4), 200)
    for i, dim in enumerate(dims):
        cells = sorted((r for r in rows if r["dim"] == dim), key=lambda r: r["compute"])
        ax.plot([r["compute"] for r in cells], [r["error"] for r in cells], "o", color=f"C{i}", label=f"d = {dim}")
        ax.plot(span, law(dim, span / (kappa * dim)), "-", color=f"C{i}", alpha=0.5)
    d_grid = np.logspace(0, 4, 400)
    frontier = law(d_grid[None, :], span[:, None] / (kappa * d_grid[None, :])).min(axis=1)
    ax.plot(span, frontier, "k--", label="fitted compute-optimal frontier")
    if optimal:
        ax.plot([optimal["budget"]], [optimal["predicted_error"]], "k*", markersize=12,
                label=f"optimum: d = {optimal['dim']:.0f}, T = {optimal['words']:.2g}")
    ax.set_xscale("log")
    ax.set_xlabel("training compute E x T x Q (Mikolov 2013a Eq. 1)")
    ax.set_ylabel("analogy error (1 - accuracy)")
    ax.set_ylim(top=1.0)  # the law's curves extrapolate above error 1 at small compute
    ax.set_title(f"word2vec: error vs compute, {title}", fontsize=9)
    ax.grid(alpha=0.4)
    ax.legend(fontsize=8)
    return fig
