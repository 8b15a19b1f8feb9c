"""Tick labels of log axes as plain text: 10 with a Unicode superscript exponent.

Matplotlib's default labels for log axes are mathtext (``$\\mathdefault{10^{12}}$``), and the
first layout of each distinct label runs the mathtext parser, about 20 ms a label: with a few
dozen labels that is a large share of the time a figure takes to draw (``jaxscale reconcile``
draws four; plain labels saved it 0.2 s of a 3.3 s cold run).
``10¹²`` in plain text looks the same in the default font and costs a string lookup.
"""

from __future__ import annotations

import math

from matplotlib import ticker

SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten_label(value: float, _position: int | None = None) -> str:
    """``10ⁿ`` for an exact power of ten, else no label (a minor tick)."""
    if not value > 0:
        return ""
    exponent = math.log10(value)
    nearest = round(exponent)
    return "10" + str(nearest).translate(SUPERSCRIPTS) if abs(exponent - nearest) < 1e-9 else ""


def plain_log_ticks(ax) -> None:
    """Label both axes of ``ax`` (log scales) at powers of ten, in plain text."""
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ticker.FuncFormatter(power_of_ten_label))
        axis.set_minor_formatter(ticker.NullFormatter())
