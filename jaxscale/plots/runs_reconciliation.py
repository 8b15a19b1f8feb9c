"""Figures of Pearce & Song's reconciliation on a user's runs table (Figures 1 and 4 for that data)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from jaxscale.plots.reconcile import embedding_panel, log_axes
from jaxscale.reconciliation.on_runs import RunsReconciliation


def embedding_fit_figure(result: RunsReconciliation) -> Figure:
    """Figure 1 for the table: its models' N_\\E against N_T with the fitted Eq. 7."""
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.add_subplot()
    embedding_panel(ax, *result.sizes, result.embedding, "the table's models")
    ax.set_title("Step 1 on the table's own model sizes")
    return fig


def frontier_figure(result: RunsReconciliation) -> Figure:
    """Figure 4 for the table: on each basis, the observed Approach-1 frontier points and power
    law, and the power law of the Step-4 simulation predicted from the fitted law."""
    fig = Figure(figsize=(13, 5), layout="constrained")
    panels = zip(fig.subplots(1, 2), (result.observed_nonembedding, result.observed_total),
                 (result.step4.nonembedding, result.step4.total), (r"\setminus E", "T"))
    for ax, observed, simulated, sub in panels:
        ax.scatter(observed.c, observed.n_opt, s=12, color="tab:red", zorder=3, label="observed frontier (Approach 1)")
        c = np.geomspace(observed.c.min(), observed.c.max(), 50)
        if observed.a is not None:
            ax.plot(c, observed.n_coefficient * c**observed.a, color="tab:red",
                    label=rf"observed: $N^*_{{{sub}}} \propto C_{{{sub}}}^{{{observed.a:.3f}}}$")
        exponent, coefficient = (float(v) for v in simulated.fit)
        ax.plot(c, coefficient * c**exponent, "--", color="tab:blue",
                label=rf"predicted (Step 4): $\propto C_{{{sub}}}^{{{exponent:.3f}}}$")
        log_axes(ax)
        ax.set_xlabel(rf"$C_{{{sub}}}$ (FLOP)")
        ax.set_ylabel(rf"$N^*_{{{sub}}}$")
        ax.legend(loc="upper left")
    fig.suptitle("Compute-optimal frontier of the table, observed and predicted from its fitted law")
    return fig


FIGURES = {"fig1_embedding_fit": embedding_fit_figure, "fig4_frontier": frontier_figure}
