"""examples/local_exponents.py runs and prints the Eq. 14 agreement it claims."""

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "local_exponents.py"


@pytest.mark.slow
def test_local_exponents_example_runs(capsys):
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert "0.512612" in out  # a = beta/(alpha+beta) for Epoch's fit, from implicit differentiation
    assert "alpha:" in out
