"""Figures of a Bayesian refit: the posterior, the compute-optimal bands, the reconciled exponent."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from jaxscale.core.intervals import interval
from jaxscale.optimum.allocation import OptimalAllocation
from jaxscale.reconciliation.per_draw import ReconciledExponents

#: Values marked on the reconciled-exponent figure (Pearce & Song Eqs. 18-19; Kaplan Eq. 1.7).
REFERENCE_EXPONENTS = (
    (0.78, "Pearce & Song, Epoch spec. (0.78)", "tab:red"),
    (0.74, "Pearce & Song, Chinchilla spec. (0.74)", "tab:orange"),
    (0.73, "Kaplan et al. (0.73)", "black"),
)


def corner_figure(draws: Mapping[str, np.ndarray], names: Sequence[str] = ("A", "B", "E", "alpha", "beta"),
                  log_scale: Sequence[str] = ("A", "B"), bins: int = 40, law: str = "Chinchilla") -> Figure:
    """Corner plot: histograms of each quantity on the diagonal, pairwise scatter below it.
    Quantities in ``log_scale`` are shown as log10."""
    values = {n: np.log10(draws[n]) if n in log_scale else np.asarray(draws[n]) for n in names}
    labels = {n: f"log10 {n}" if n in log_scale else n for n in names}
    k = len(names)
    fig = Figure(figsize=(2.2 * k, 2.2 * k), layout="constrained")
    axes = fig.subplots(k, k, squeeze=False)
    for i, yi in enumerate(names):
        for j, xj in enumerate(names):
            ax = axes[i, j]
            if j > i:
                ax.set_axis_off()
                continue
            if i == j:
                ax.hist(values[xj], bins=bins, color="tab:blue", alpha=0.8)
                ax.set_yticks([])
            else:
                ax.scatter(values[xj], values[yi], s=1, alpha=0.15, color="tab:blue", rasterized=True)
                if j == 0:
                    ax.set_ylabel(labels[yi])
            if i == k - 1:
                ax.set_xlabel(labels[xj])
            ax.tick_params(labelsize=7)
    fig.suptitle(f"Posterior of the {law} law")
    return fig


def optimal_bands_figure(bands: OptimalAllocation, level: float = 0.95) -> Figure:
    """N*(C), D*(C) and the loss along the optimum against C: posterior median and central
    ``level`` band."""
    fig = Figure(figsize=(12, 4), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, values, label, log_y in (
        (axes[0], bands.n, r"$N^*(C)$, parameters", True),
        (axes[1], bands.d, r"$D^*(C)$, tokens", True),
        (axes[2], bands.loss, r"$L(N^*, D^*)$, nats per token", False),
    ):
        lo, hi = interval(values, level)
        ax.fill_between(bands.c, lo, hi, alpha=0.3, color="tab:blue", label=f"{level:.0%} band")
        ax.plot(bands.c, np.nanmedian(values, axis=0), color="tab:blue", label="posterior median")
        ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("C, training FLOP")
        ax.set_ylabel(label)
        ax.grid(alpha=0.4)
    axes[0].legend(loc="upper left")
    fig.suptitle("Compute-optimal allocation under the posterior")
    return fig


def reconciled_exponent_figure(exponents: ReconciledExponents, level: float = 0.95, bins: int = 40) -> Figure:
    """Posterior of the Kaplan-basis frontier exponent (Pearce & Song Step 4) with the paper's
    0.74 / 0.78 and Kaplan's 0.73 marked; the total-basis exponent beside it. The band is the
    ``level`` highest-density interval, the interval ``jaxscale bayes`` prints."""
    fig = Figure(figsize=(11, 4), layout="constrained")
    ax_ne, ax_t = fig.subplots(1, 2)
    for ax, values, title in (
        (ax_ne, exponents.nonembedding, r"Kaplan basis: $N^*_{\setminus E} \propto C_{\setminus E}^{g}$"),
        (ax_t, exponents.total, r"total basis: $N^*_T \propto C_T^{a}$"),
    ):
        lo, hi = interval(values, level, method="hdi")
        median = np.nanmedian(values)
        ax.hist(values, bins=bins, color="tab:blue", alpha=0.7)
        ax.axvspan(lo, hi, color="tab:blue", alpha=0.1, label=f"{level:.0%} HDI [{lo:.3f}, {hi:.3f}]")
        ax.axvline(median, color="tab:blue", label=f"median {median:.3f}")
        ax.set_title(title)
        ax.set_xlabel("exponent")
        ax.set_yticks([])
    for value, label, color in REFERENCE_EXPONENTS:
        ax_ne.axvline(value, color=color, linestyle="--", label=label)
    ax_ne.legend(fontsize=8)
    ax_t.legend(fontsize=8)
    fig.suptitle("Reconciled exponent under the posterior (Pearce & Song 2024, Step 4)")
    return fig


def predictive_figure(observed: np.ndarray, median: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                      law: str, level: float = 0.9) -> Figure:
    """Posterior predictive check: each run's observed loss against the posterior predictive
    median, with its central ``level`` interval."""
    fig = Figure(figsize=(6, 5), layout="constrained")
    ax = fig.add_subplot()
    ax.errorbar(observed, median, yerr=[median - lo, hi - median], fmt="o", ms=3, alpha=0.6, elinewidth=0.8,
                color="tab:blue", label=f"predictive median, {level:.0%} interval")
    span = [min(observed.min(), lo.min()), max(observed.max(), hi.max())]
    ax.plot(span, span, "--", color="gray", label="observed = predicted")
    ax.set_xlabel("observed loss (nats per token)")
    ax.set_ylabel("posterior predictive loss (nats per token)")
    ax.set_title(f"{law}: posterior predictive check")
    ax.legend()
    return fig
