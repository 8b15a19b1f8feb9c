"""Figures of Pearce & Song (2024) Section 2, equivalent to their Figures 1-4."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from jaxscale.laws import table_a9
from jaxscale.plots.log_ticks import plain_log_ticks
from jaxscale.plots.margins import fixed_margins
from jaxscale.reconciliation.pipeline import EmbeddingFit, Reconciliation
from jaxscale.reconciliation.synthetic_curves import BasisFrontier


def log_axes(ax: Axes) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax)
    ax.grid(which="major", linewidth=0.6, alpha=0.5)
    ax.grid(which="minor", linewidth=0.3, alpha=0.3)


def embedding_panel(ax: Axes, n_total: np.ndarray, n_nonembedding: np.ndarray, fit: EmbeddingFit,
                    label: str) -> None:
    """N_\\E against N_T of some models with the fitted Eq. 7, N_T = N_\\E + γ N_\\E^δ."""
    n = np.geomspace(n_nonembedding.min() / 10, n_nonembedding.max() * 3, 400)
    ax.scatter(n_total, n_nonembedding, s=18, color="tab:blue", zorder=3, label=label)
    ax.plot(n, n, "--", color="gray", label=r"$N_T = N_{\setminus E}$")
    ax.plot(n + fit.gamma * n**fit.delta, n, color="tab:pink",
            label=rf"fit: $N_T = N_{{\setminus E}} + {float(fit.gamma):.0f}\,N_{{\setminus E}}^{{{float(fit.delta):.3f}}}$")
    ax.set_xlabel(r"$N_T$, total parameters")
    ax.set_ylabel(r"$N_{\setminus E}$, non-embedding parameters")
    log_axes(ax)
    ax.legend(loc="upper left")


def embedding_fit_figure(result: Reconciliation) -> Figure:
    """Figure 1: N_\\E against N_T for Table A9 with the fitted Eq. 7."""
    fig = Figure(figsize=(7, 5))
    ax = fig.add_subplot()
    fixed_margins(fig, left=0.85, right=0.2, bottom=0.6, top=0.35)
    embedding_panel(ax, table_a9.total_params(), table_a9.nonembedding_params(), result.embedding_fit,
                    "Chinchilla Table A9 configurations")
    ax.set_xlim(1e6, 2e10)
    ax.set_ylim(1e5, 2e10)
    ax.set_title(f"Step 1: embedding share (implied aspect ratio {result.aspect_ratio:.1f})")
    return fig


def local_exponent_figure(result: Reconciliation) -> Figure:
    """Figure 2: the optimum N*_\\E(C_\\E) (Eq. 16) and its local exponent g (Eq. 17, autodiff)
    across scales, with the small- and large-scale limits and the transition N = γ^(3/2)."""
    fig = Figure(figsize=(8, 5))
    ax = fig.add_subplot()
    fixed_margins(fig, left=0.8, right=0.75, bottom=0.6, top=0.35)
    ax.plot(result.c_optimal, result.n_check, color="black", label=r"$N^*_{\setminus E}$ (solver; Eq. 16)")
    log_axes(ax)
    ax.set_xlabel(r"$C_{\setminus E}$ (FLOP)")
    ax.set_ylabel(r"$N^*_{\setminus E}$")
    ax2 = ax.twinx()
    ax2.plot(result.c_optimal, result.g_autodiff, color="tab:blue", label="g (autodiff; Eq. 17)")
    ax2.axhline(result.limit_large, color="gray", linestyle="--", label=r"$\beta/(\alpha+\beta)$")
    ax2.axhline(result.limit_small, color="gray", linestyle=":", label=r"$\beta/(\alpha/3+\beta)$")
    c_transition = np.interp(np.log(result.transition_size), np.log(result.n_check), np.log(result.c_optimal))
    ax2.axvline(np.exp(c_transition), color="tab:red", alpha=0.5, label=r"$N_{\setminus E} = \gamma^{3/2}$")
    ax2.set_ylabel("g = d log N* / d log C")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax2.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper left")
    ax.set_title(f"Step 3: three phases ({result.spec} specification)")
    return fig


def training_curves_figure(result: Reconciliation) -> Figure:
    """Figure 3: synthetic training curves from Eq. 15 against tokens and against C_\\E."""
    curves = result.step4.curves
    fig = Figure(figsize=(12, 5))
    left, right = fig.subplots(1, 2, sharey=True)
    fixed_margins(fig, left=0.65, right=0.15, bottom=0.6, top=0.4, columns=2, gap=0.45)
    colours = _colours(len(curves.n_nonembedding))
    tokens = np.asarray(curves.tokens)
    for n, loss, colour in zip(np.asarray(curves.n_nonembedding), np.asarray(curves.loss), colours):
        left.plot(tokens, loss, color=colour, label=_size_label(n))
        right.plot(6 * n * tokens, loss, color=colour)
    left.set_xlim(tokens[0], 1e18)
    right.set_xlim(1e10, 1e23)
    for ax, xlabel in ((left, "D (tokens)"), (right, r"$C_{\setminus E}$ (FLOP)")):
        log_axes(ax)
        ax.set_xlabel(xlabel)
    left.set_ylabel("loss (nats per token)")
    left.legend(fontsize="x-small", ncol=2, title=r"$N_{\setminus E}$", title_fontsize="small")
    fig.suptitle(f"Step 4: synthetic training curves ({result.spec} specification)")
    return fig


def frontier_figure(result: Reconciliation) -> Figure:
    """Figure 4: the compute-efficient frontier on both bases, with the local power-law fit and
    (non-embedding basis) the analytic optimum of Eq. 16."""
    fig = Figure(figsize=(13, 5))
    left, right = fig.subplots(1, 2)
    fixed_margins(fig, left=0.8, right=0.15, bottom=0.6, top=0.4, columns=2, gap=0.9)
    _frontier_panel(left, result.step4.nonembedding, r"\setminus E")
    left.plot(result.c_optimal, result.n_check, "--", color="black", label="analytic optimum (Eq. 16)")
    left.set_xlim(1e11, 1e24)
    left.legend(loc="upper left")
    _frontier_panel(right, result.step4.total, "T")
    right.legend(loc="upper left")
    fig.suptitle(f"Step 4: Method-1 frontier ({result.spec} specification)")
    return fig


def _frontier_panel(ax, basis: BasisFrontier, sub: str) -> None:
    c = np.exp(np.asarray(basis.frontier.log_c))
    ax.scatter(c, np.asarray(basis.n_opt), s=12, color="tab:red", zorder=3, label="compute-efficient frontier")
    x = np.logspace(11, 25, 100)
    fit = basis.fit
    ax.plot(x, np.asarray(fit(x)), color="tab:pink",
            label=rf"local fit: $N^*_{{{sub}}} \propto C_{{{sub}}}^{{{float(fit.exponent):.3f}}}$")
    log_axes(ax)
    ax.set_xlabel(rf"$C_{{{sub}}}$ (FLOP)")
    ax.set_ylabel(rf"$N^*_{{{sub}}}$")


def _colours(n: int) -> np.ndarray:
    from matplotlib import colormaps

    return colormaps["plasma"](np.linspace(0, 0.9, n))


def _size_label(n: float) -> str:
    """A model size for the legend, in plain text (the legend's title names N_\\E once: one
    mathtext label per curve cost a parse each)."""
    return f"{n / 1e6:.2f}M" if n >= 1e5 else f"{n / 1e3:.2f}K"


FIGURES = {
    "fig1_embedding_fit": embedding_fit_figure,
    "fig2_local_exponent": local_exponent_figure,
    "fig3_training_curves": training_curves_figure,
    "fig4_frontier": frontier_figure,
}
