"""Numbers printed with the digits their intervals justify (jaxscale.support.significant)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jaxscale.support.significant import (
    format_at_decimals,
    format_number,
    format_with_interval,
    interval_decimals,
    significant_table,
)


@pytest.mark.parametrize(("lower", "upper", "decimals"), [
    (0.3170403, 0.3706377, 3),  # half-width 0.0268: two digits are the thousandths
    (287.6375, 711.6593, -1),  # 212: tens
    (8.277569e9, 1.358864e10, -8),  # 2.66e9: the 1e8 place
    (0.99, 1.01, 3),  # 0.01: exactly a power of ten
])
def test_the_half_widths_second_significant_digit_sets_the_decimals(lower, upper, decimals):
    assert interval_decimals(lower, upper) == decimals


@pytest.mark.parametrize(("lower", "upper"), [(1.0, 1.0), (math.nan, 2.0), (1.0, math.inf)])
def test_an_interval_without_width_sets_nothing(lower, upper):
    assert interval_decimals(lower, upper) is None


def test_an_estimate_and_its_interval_are_rounded_together():
    assert format_with_interval(0.3473105, 0.3170403, 0.3706377) == ("0.347", "0.317", "0.371")
    assert format_with_interval(477.8257, 287.6375, 711.6593) == ("480", "290", "710")
    assert format_with_interval(1.041294e10, 8.277569e9, 1.358864e10) == ("1.04e10", "8.3e9", "1.36e10")


def test_the_printed_numbers_differ_from_the_full_ones_by_at_most_half_the_quantum():
    rng = np.random.default_rng(0)
    for _ in range(200):
        centre = 10 ** rng.uniform(-6, 12)
        half = centre * 10 ** rng.uniform(-4, 0)
        numbers = (centre, centre - half, centre + half)
        quantum = 10.0 ** -interval_decimals(numbers[1], numbers[2])
        for full, shown in zip(numbers, format_with_interval(*numbers)):
            assert abs(float(shown) - full) <= quantum / 2 * (1 + 1e-9), (numbers, shown)


def test_significant_zeros_of_an_interval_are_kept():
    assert format_with_interval(3.4e-4, 3.0e-4, 3.8e-4) == ("3.40e-4", "3.00e-4", "3.80e-4")
    assert format_at_decimals(2.0, 2) == "2.00"


def test_a_missing_interval_leaves_the_estimate_its_default_digits():
    assert format_with_interval(1.8172183, math.nan, math.nan) == ("1.817", "", "")
    assert format_with_interval(1.8172183, math.nan, 2.0) == ("1.817", "", "2")


@pytest.mark.parametrize(("value", "text"), [
    (1.8172183, "1.817"), (2143.416, "2143"), (9.115365e9, "9.115e9"), (0.0003118, "3.118e-4"),
    (12.0, "12"), (0.0, "0"), (-0.25, "-0.25"), (math.nan, "nan"), (math.inf, "inf"),
])
def test_a_number_without_interval_has_four_significant_digits(value, text):
    assert format_number(value) == text


def test_rounding_to_zero_prints_no_minus_sign():
    assert format_at_decimals(-0.0004, 2) == "0.00"


def test_a_summary_table_is_formatted_row_by_row_and_the_original_keeps_full_precision():
    frame = pd.DataFrame({
        "quantity": ["A", "alpha", "published"],
        "estimate": [477.8257, 0.3473105, 0.3118],
        "lower": [287.6375, 0.3170403, math.nan],
        "upper": [711.6593, 0.3706377, math.nan],
        "se": [115.810087, 0.014652, math.nan],
        "ess": np.array([1234, 56789, 3]),
        "covered": [True, False, True],
    })
    before = frame.copy()
    shown = significant_table(frame)
    assert shown["estimate"].tolist() == ["480", "0.347", "0.3118"]
    assert shown["lower"].tolist() == ["290", "0.317", ""]
    assert shown["se"].tolist() == ["115.8", "0.01465", ""]
    assert shown["ess"].tolist() == ["1234", "56789", "3"]  # counts whole
    assert shown["covered"].tolist() == [True, False, True]
    assert shown["quantity"].tolist() == ["A", "alpha", "published"]
    pd.testing.assert_frame_equal(frame, before)


def test_a_table_without_intervals_gets_default_digits_everywhere():
    shown = significant_table(pd.DataFrame({"sd": [0.0123456, 1234.567, None]}, index=["x", "y", "z"], dtype=object))
    assert shown["sd"].tolist() == ["0.01235", "1235", ""]


def test_any_triple_of_columns_can_be_an_estimate_and_its_interval():
    frame = pd.DataFrame({"lr_opt": [0.0031234], "lr_opt_lower": [0.0025], "lr_opt_upper": [0.0041],
                          "batch_opt": [1.23456e6], "batch_opt_lower": [1.1e6], "batch_opt_upper": [1.4e6]})
    shown = significant_table(frame, intervals=[("lr_opt", "lr_opt_lower", "lr_opt_upper"),
                                                ("batch_opt", "batch_opt_lower", "batch_opt_upper"),
                                                ("absent", "lower", "upper")])
    assert shown.iloc[0].tolist() == ["0.00312", "0.00250", "0.00410", "1.23e6", "1.10e6", "1.40e6"]
