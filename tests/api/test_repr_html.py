"""A result's notebook table shows the digits its intervals justify; its summary keeps them all."""

from __future__ import annotations

import math

from jaxscale._api._results import Result, rows


class _Exponent(Result):
    def summary(self):
        return rows([{"quantity": "a", "estimate": 0.5138995, "lower": 0.4808926, "upper": 0.5565537},
                     {"quantity": "published", "estimate": 0.4912345, "lower": None, "upper": None}])


def test_the_notebook_table_rounds_to_the_interval_and_the_summary_does_not():
    html = _Exponent()._repr_html_()
    assert "<td>0.514</td>" in html and "<td>0.481</td>" in html and "<td>0.557</td>" in html
    assert "<td>0.4912</td>" in html and "0.5138995" not in html
    assert _Exponent().summary()["estimate"].iloc[0] == 0.5138995
    assert math.isnan(_Exponent().summary()["lower"].iloc[1])
