"""What the figures show agrees with what the commands print, and every axis says its unit."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jaxscale.inference.refit import median_and_hdi
from jaxscale.plots.bayes import reconciled_exponent_figure
from jaxscale.reconciliation.per_draw import ReconciledExponents


def _band(ax) -> tuple[str, float, float]:
    """The label and the x extent of the shaded interval of ``ax``."""
    (span,) = [p for p in ax.patches if "HDI" in p.get_label() or "interval" in p.get_label()]
    xs = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]
    return span.get_label(), xs.min(), xs.max()


def test_the_reconciled_exponent_band_is_the_printed_hdi():
    # a skewed posterior, where the central interval and the HDI differ by far more than a pixel
    rng = np.random.default_rng(0)
    exponents = ReconciledExponents(0.7 + rng.gamma(1.5, 0.03, 4000), 0.45 + rng.gamma(1.5, 0.02, 4000))
    figure = reconciled_exponent_figure(exponents)
    for ax, values in zip(figure.axes, exponents):
        label, lo, hi = _band(ax)
        printed = median_and_hdi(values)["hdi95"]
        assert "95% HDI" in label
        np.testing.assert_allclose([lo, hi], printed, rtol=1e-12)


def test_the_isoflop_figure_has_a_colour_key_and_units(x64):
    # the runs were coloured by compute with no key to read it, and the loss axis had no unit
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.laws import chinchilla
    from jaxscale.plots.fit import isoflop_figure
    from jaxscale.tables.table import read_runs_table

    n, d = (g.ravel() for g in np.meshgrid(np.geomspace(1e8, 1.6e9, 5), np.geomspace(2e9, 3e10, 4)))
    loss = np.asarray(chinchilla.loss(n, d, chinchilla.LAW.published_params("epoch")))
    figure = isoflop_figure(fit_approach3(read_runs_table(pd.DataFrame({"N": n, "D": d, "loss": loss}))))
    ax, key = figure.axes
    assert ax.get_ylabel() == "loss (nats per token)" and "log_{10} C" in key.get_ylabel()


def test_every_isoflop_parabola_is_drawn_whole_with_its_optimum_inside(x64):
    # the smallest budget's curve ended at the grid's edge, its "optimum" dot at the edge (clipped)
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.laws import chinchilla
    from jaxscale.plots.fit import isoflop_figure
    from jaxscale.tables.table import read_runs_table

    # large models on few tokens: the smallest budgets' optima lie far below the runs' sizes
    n, d = (g.ravel() for g in np.meshgrid(np.geomspace(1e9, 1e10, 5), np.geomspace(1e8, 1e11, 6)))
    loss = np.asarray(chinchilla.loss(n, d, chinchilla.LAW.published_params("epoch")))
    figure = isoflop_figure(fit_approach3(read_runs_table(pd.DataFrame({"N": n, "D": d, "loss": loss}))))
    ax = figure.axes[0]
    curves = [line for line in ax.get_lines() if line.get_label().startswith("C = ")]
    optima = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert len(curves) == len(optima) == 6
    low, high = ax.get_ylim()
    for curve, optimum in zip(curves, optima):
        x, y = curve.get_xdata(), curve.get_ydata()
        (x_star,), (y_star,) = optimum.get_xdata(), optimum.get_ydata()
        assert x[0] <= n.min() and x[-1] >= n.max()  # over the whole range of the runs
        assert x[0] * 2 < x_star < x[-1] / 2  # the minimum inside the drawn curve, not at its end
        assert y_star <= y.min() + 1e-9 and low < y_star < high


def _axis_labels(path) -> list[str]:
    """The text of every axis label a figure module sets (set_xlabel, set_ylabel, supxlabel,
    supylabel; the literal parts of an f-string)."""
    import ast

    labels = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and node.func.attr in {"set_xlabel", "set_ylabel", "supxlabel", "supylabel"}):
            text = node.args[0]
            parts = text.values if isinstance(text, ast.JoinedStr) else [text]
            labels.append("".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)))
    return labels


def test_every_loss_axis_says_its_unit():
    # allocate, schedule, reconcile, bayes and planning figures had loss axes with no unit
    from pathlib import Path

    import jaxscale.plots

    modules = sorted(Path(jaxscale.plots.__file__).parent.glob("*.py"))
    labels = [(m.name, label) for m in modules for label in _axis_labels(m)]
    assert len(labels) > 30  # the walk found the figures' labels
    not_a_loss = ("residual", "loss above", "at equal loss")  # a log ratio, a relative excess, a compute ratio
    unitless = [(m, label) for m, label in labels
                if "loss" in label.lower() and "nats per token" not in label
                and "nats per target" not in label  # a downstream task's log-perplexity: per target (word)
                and not any(words in label.lower() for words in not_a_loss)]
    assert unitless == []
