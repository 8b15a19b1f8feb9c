"""Numbers printed with the digits they justify.

An estimate with an interval is worth the digits of the interval's width and no more: all three
numbers are rounded to the decimal place of the half-width's second significant digit, so
``477.8257 [287.6375, 711.6593]`` prints as ``480 [290, 710]`` and ``0.3473105 [0.3170403,
0.3706377]`` as ``0.347 [0.317, 0.371]``. A number without an interval (a published value, a
count, an exact result) prints with :data:`DEFAULT_SIGNIFICANT` significant digits. Very large
and very small numbers print in scientific notation, with the same digits.

These functions format for display only: the tables they format (a result's ``summary()``) keep
full precision for computing with.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    import pandas as pd

#: Significant digits of the interval's half-width that set the rounding of an estimate.
INTERVAL_SIGNIFICANT = 2
#: Significant digits of a number printed without an interval.
DEFAULT_SIGNIFICANT = 4
#: Magnitudes printed in fixed notation; outside ``[1e-3, 1e5)`` scientific notation.
FIXED_RANGE = (1e-3, 1e5)
#: The columns of a summary that hold an estimate and its 95% interval.
INTERVAL_COLUMNS = ("estimate", "lower", "upper")


def interval_decimals(lower: float, upper: float, significant: int = INTERVAL_SIGNIFICANT) -> int | None:
    """The decimal place an interval justifies: the place of the half-width's last kept digit.

    Args:
        lower: Lower end of the interval.
        upper: Upper end of the interval.
        significant: Significant digits of the half-width to keep.

    Returns:
        The number of decimals to round to (negative: tens, hundreds, ...), as for Python's
        ``round``; None when the interval has no width to go by (a bound missing or infinite,
        or the two ends equal).
    """
    half_width = abs(upper - lower) / 2
    if not math.isfinite(half_width) or half_width == 0:
        return None
    return significant - 1 - math.floor(math.log10(half_width))


def format_at_decimals(value: float, decimals: int) -> str:
    """``value`` rounded to ``decimals`` decimal places (negative: to tens, hundreds, ...) and
    written with exactly the digits that rounding keeps.

    Args:
        value: The number.
        decimals: Decimal places, as for Python's ``round``.

    Returns:
        Fixed notation inside :data:`FIXED_RANGE` (``"0.347"``, ``"480"``), scientific notation
        outside it (``"1.04e10"``); ``"nan"``, ``"inf"`` or ``"-inf"`` as they are.
    """
    if not math.isfinite(value):
        return str(value)
    rounded = round(value, decimals) or 0.0  # no "-0"
    if rounded == 0 or FIXED_RANGE[0] <= abs(rounded) < FIXED_RANGE[1]:
        return f"{rounded:.{max(decimals, 0)}f}"
    mantissa_decimals = max(math.floor(math.log10(abs(rounded))) + decimals, 0)
    return _tidy_exponent(f"{rounded:.{mantissa_decimals}e}")


def format_or_undefined(value: float | None, spec: str) -> str:
    """``value`` in the format ``spec``, or "undefined" where it is None (a JSON null: a quantity
    the runs leave undefined) or not finite: how a result's text prints a number it may lack."""
    if value is None or not math.isfinite(value):
        return "undefined"
    return format(value, spec)


def format_number(value: float, significant: int = DEFAULT_SIGNIFICANT) -> str:
    """``value`` with ``significant`` significant digits (for a number without an interval).

    Args:
        value: The number.
        significant: Significant digits to keep.

    Returns:
        The number written as :func:`format_at_decimals` writes it, less trailing zeros of its
        decimals, which would claim digits nobody measured (``"1.817"``, ``"2143"``, ``"9.115e9"``,
        ``"12"`` for 12.0).
    """
    if not math.isfinite(value) or value == 0:
        return format_at_decimals(value, 0)
    return _without_trailing_zeros(format_at_decimals(value, significant - 1 - math.floor(math.log10(abs(value)))))


def format_with_interval(estimate: float, lower: float, upper: float,
                         significant: int = INTERVAL_SIGNIFICANT) -> tuple[str, str, str]:
    """An estimate and its interval, all three rounded to the decimal place the interval justifies.

    Args:
        estimate: The point estimate.
        lower: Lower end of its interval (NaN: none).
        upper: Upper end of its interval (NaN: none).
        significant: Significant digits of the interval's half-width to keep.

    Returns:
        The three numbers as strings; without a usable interval the estimate has
        :data:`DEFAULT_SIGNIFICANT` digits and a missing bound is ``""``.
    """
    decimals = interval_decimals(lower, upper, significant)
    formatter = format_number if decimals is None else functools.partial(format_at_decimals, decimals=decimals)
    shown = [_blank_or(value, formatter) for value in (estimate, lower, upper)]
    return shown[0], shown[1], shown[2]


def significant_table(frame: pd.DataFrame,
                      intervals: Sequence[Sequence[str]] = (INTERVAL_COLUMNS,)) -> pd.DataFrame:
    """A copy of ``frame`` for display, every number written with the digits it justifies.

    Each triple of ``intervals`` names an estimate's, its lower bound's and its upper bound's
    columns (by default ``estimate, lower, upper``, those of a result's ``summary()``); where the
    frame has all three, each row's three numbers are rounded together by
    :func:`format_with_interval`. Every other float gets :func:`format_number`'s default digits and
    an integer is written whole (a count). Text and booleans are kept as they are; a missing number
    (NaN or None) becomes ``""``.

    Args:
        frame: A table of numbers, such as a result's ``summary()``.
        intervals: Triples of column names (estimate, lower, upper); a triple whose columns the
            frame lacks is ignored.

    Returns:
        A DataFrame of the same shape, index and columns whose numeric cells are strings.
    """
    shown = frame.astype(object)
    triples = [list(triple) for triple in intervals if all(column in frame.columns for column in triple)]
    in_a_triple = {column for triple in triples for column in triple}
    for column in frame.columns:
        if column not in in_a_triple:
            shown[column] = [_display_cell(value) for value in frame[column]]
    for triple in triples:
        formatted = [format_with_interval(*map(float, row)) for row in frame[triple].itertuples(index=False)]
        for position, column in enumerate(triple):
            shown[column] = [numbers[position] for numbers in formatted]
    return shown


def _display_cell(value: object) -> object:
    """A cell for display: a float by :func:`format_number`, an integer whole (a count), None as
    ``""`` (a missing number), a boolean, text or anything else unchanged."""
    if value is None:
        return ""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return value
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return _number_or_blank(float(value))
    return value


def _number_or_blank(value: float) -> str:
    return _blank_or(value, format_number)


def _blank_or(value: float, formatter: Callable[[float], str]) -> str:
    """``""`` for a missing number (NaN), else ``formatter(value)``."""
    return "" if math.isnan(value) else formatter(value)


def _without_trailing_zeros(text: str) -> str:
    """``"12.00"`` -> ``"12"``, ``"1.500e9"`` -> ``"1.5e9"``; an integer's zeros are kept."""
    mantissa, e, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + e + exponent


def _tidy_exponent(text: str) -> str:
    """``"1.04e+10"`` -> ``"1.04e10"``, ``"3.2e-05"`` -> ``"3.2e-5"``."""
    mantissa, exponent = text.split("e")
    return f"{mantissa}e{int(exponent)}"
