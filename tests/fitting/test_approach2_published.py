"""Hoffmann et al.'s (2022) Approach 2 on their isoFLOP points, as the README's table of
reproduced numbers states it: Epoch AI's extraction of the Chinchilla isoFLOP curves, the
command the README gives, and the exponent a with its 95% bootstrap interval to the digits the
README prints. The paper's Table 2 gives a = 0.49 for Approach 2."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from jaxscale.cli import main
from tests.conftest import shared_data_file

#: The README's row: a = 0.492 [0.456, 0.529], printed to 3 decimals.
README = {"a": 0.492, "lower": 0.456, "upper": 0.529}


def test_approach2_on_hoffmanns_isoflops_gives_the_readme_numbers():
    path = shared_data_file("isoflops_public.csv")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["fit", str(path), "--where", "source=epochai_chinchilla", "--method", "approach2",
                     "--bootstrap", "1000", "--json"])
    assert code == 0
    numbers = json.loads(out.getvalue())
    lower, upper = numbers["ci95"]["a"]
    assert (numbers["a"], lower, upper) == pytest.approx((README["a"], README["lower"], README["upper"]), abs=5e-4)
    assert lower < 0.49 < upper  # Hoffmann et al. (2022) Table 2, Approach 2
