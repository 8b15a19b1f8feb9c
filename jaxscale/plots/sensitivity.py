"""Figures of a sensitivity study: tornado of elasticities, run influence over (N, D), and the
first-order influence against exact leave-one-out refits."""

from __future__ import annotations

from typing import Mapping

import numpy as np
from jax.typing import ArrayLike
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure


def _panels(count: int, width: float, height: float) -> tuple[Figure, np.ndarray]:
    cols = min(count, 3)
    rows = -(-count // cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[count:]:
        ax.set_axis_off()
    return fig, axes


def tornado_figure(elasticities: Mapping[str, Mapping[str, float]]) -> Figure:
    """One tornado per quantity: the elasticities d log q / d log theta_k as horizontal bars,
    largest magnitude on top (red: q grows with theta_k, blue: it falls)."""
    fig, axes = _panels(len(elasticities), 4.2, 0.4 * max(len(e) for e in elasticities.values()) + 1.2)
    for ax, (quantity, e) in zip(axes, elasticities.items()):
        names = sorted(e, key=lambda k: abs(e[k]))
        values = np.array([e[k] for k in names])
        ax.barh(names, values, color=np.where(values >= 0, "tab:red", "tab:blue"))
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_title(quantity, fontsize=10)
        ax.set_xlabel(r"$\partial \log q / \partial \log \theta$")
        ax.grid(axis="x", alpha=0.4)
    fig.suptitle("Elasticities of each quantity with respect to the law's parameters")
    return fig


def influence_figure(n: ArrayLike, d: ArrayLike, influence: Mapping[str, ArrayLike]) -> Figure:
    """Every run at (N, D), coloured by its first-order influence on each quantity (the change of
    log q when the run is left out; diverging colours centred on zero)."""
    fig, axes = _panels(len(influence), 4.6, 3.8)
    for ax, (quantity, values) in zip(axes, influence.items()):
        v = np.asarray(values, float)
        bound = float(np.max(np.abs(v))) or 1.0
        points = ax.scatter(n, d, c=v, s=16, cmap="coolwarm", norm=TwoSlopeNorm(0.0, -bound, bound),
                            edgecolors="gray", linewidths=0.3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("N, parameters")
        ax.set_ylabel("D, tokens")
        ax.set_title(quantity, fontsize=10)
        fig.colorbar(points, ax=ax, label=r"$\Delta \log q$ without the run")
    fig.suptitle("Influence of each run (implicit differentiation of the fit)")
    return fig


def jackknife_figure(linear: Mapping[str, ArrayLike], exact: Mapping[str, ArrayLike],
                     correlations: Mapping[str, float]) -> Figure:
    """First-order influence against the exact leave-one-out change of log q, per quantity, with
    the diagonal and their correlation."""
    fig, axes = _panels(len(linear), 4.0, 3.8)
    for ax, quantity in zip(axes, linear):
        x, y = np.asarray(linear[quantity], float), np.asarray(exact[quantity], float)
        ok = np.isfinite(x) & np.isfinite(y)
        ax.scatter(x[ok], y[ok], s=10, alpha=0.7)
        lim = float(np.max(np.abs(np.concatenate([x[ok], y[ok]])))) * 1.05 or 1.0
        ax.plot([-lim, lim], [-lim, lim], color="gray", linewidth=0.8)
        ax.locator_params(nbins=5)
        ax.set_xlabel("first order (implicit differentiation)")
        ax.set_ylabel("exact leave-one-out refit")
        ax.set_title(f"{quantity}: r = {correlations[quantity]:.4f}", fontsize=10)
        ax.grid(alpha=0.4)
    fig.suptitle(r"Influence of each run on $\log q$: linear against the jackknife")
    return fig
