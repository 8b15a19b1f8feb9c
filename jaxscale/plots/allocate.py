"""The figure of ``jaxscale allocate``: the loss along each compute budget against the epochs of
the unique data, under the data-constrained law and under Chinchilla's law with unlimited data."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from jaxscale.laws.law import Law
from jaxscale.optimum.allocation import OptimalAllocation, RepeatedDataAllocation


def repeated_data_figure(law_given: Law, params: Any, base_law: Law, base_params: Any,
                         best: RepeatedDataAllocation, unlimited: OptimalAllocation) -> Figure:
    """For each budget C, the loss of N = C/(6D) against D/U_D (epochs): ``law_given`` (the
    data-constrained law at U_D) solid, ``base_law`` (Chinchilla, unlimited data) dashed, each
    law's optimum marked (the data-constrained one only where it is determined). The laws follow
    the dtype of their inputs: call it under x64 (:mod:`jaxscale.core.numerics`) for float64 curves."""
    fig = Figure(figsize=(7.0, 4.6), layout="constrained")
    ax = fig.subplots()
    u = best.unique_tokens
    for i, c in enumerate(best.c):
        centre = best.d[i] if np.isfinite(best.d[i]) else unlimited.d[i]
        d = np.geomspace(centre / 100, centre * 100, 400)
        repeated = np.asarray(law_given.loss(c / (6 * d), d, params))
        fresh = np.asarray(base_law.loss(c / (6 * d), d, base_params))
        line, = ax.plot(d / u, repeated, label=f"C = {c:.2g} FLOP")
        ax.plot(d / u, fresh, "--", color=line.get_color(), alpha=0.7)
        if np.isfinite(best.d[i]):
            ax.plot(best.epochs[i], best.loss[i], "o", color=line.get_color())
        ax.plot(unlimited.d[i] / u, unlimited.loss[i], "x", color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlabel(f"epochs of the U_D = {u:.3g} unique tokens (D / U_D)")
    ax.set_ylabel("loss (nats per token)")
    ax.set_title("Loss along each budget: data-constrained (solid, o: optimum)\n"
                 "and Chinchilla with unlimited data (dashed, x: optimum)", fontsize=10)
    ax.grid(alpha=0.4)
    ax.legend(fontsize=8)
    return fig
