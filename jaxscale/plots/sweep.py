"""Figures of a training sweep: loss curves against compute on each basis, frontier marked."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from jaxscale.tables import schema as rs

BASIS_LABELS = {"total": "total compute $C_T = 6 N_T D$", "nonembedding": r"non-embedding compute $C_{\backslash E} = 6 N_{\backslash E} D$"}


def frontier_mask(curves: pd.DataFrame, c_column: str) -> np.ndarray:
    """Rows on the lower envelope of loss against ``c_column`` (lowest loss so far at increasing C)."""
    order = np.argsort(curves[c_column].to_numpy(), kind="stable")
    loss = curves[rs.LOSS].to_numpy()[order]
    running = np.minimum.accumulate(loss)
    mask = np.zeros(len(curves), bool)
    mask[order] = loss <= running
    return mask


def curves_figure(curves: pd.DataFrame, bases: dict[str, tuple[str, str]], title: str = "") -> Figure:
    """One panel per basis: every run's validation loss against compute (log axis), coloured by
    model size, with the compute-efficient envelope drawn in black (Chinchilla Method 1)."""
    fig = Figure(figsize=(5.5 * len(bases), 4.2), layout="constrained")
    axes = fig.subplots(1, len(bases), squeeze=False)[0]
    sizes = sorted(curves[rs.N_TOTAL].unique())
    colours = dict(zip(sizes, matplotlib.colormaps["viridis"](np.linspace(0, 0.9, len(sizes)))))
    for ax, (basis, (n_column, c_column)) in zip(axes, bases.items()):
        for _, run in curves.groupby(rs.RUN_ID):
            run = run.sort_values(c_column)
            ax.plot(run[c_column], run[rs.LOSS], color=colours[run[rs.N_TOTAL].iloc[0]], lw=1, alpha=0.8)
        on = curves[frontier_mask(curves, c_column)].sort_values(c_column)
        ax.plot(on[c_column], on[rs.LOSS], "k-", lw=2, label="frontier")
        for n in sizes:
            row = curves[curves[rs.N_TOTAL] == n].iloc[0]
            ax.plot([], [], color=colours[n], label=f"$N_T$={int(n):,}, $N_{{\\backslash E}}$={int(row[rs.N_NONEMBEDDING]):,}")
        ax.set_xscale("log")
        ax.set_xlabel(BASIS_LABELS.get(basis, c_column))
        ax.set_ylabel("validation loss (nats per token)")
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    return fig
