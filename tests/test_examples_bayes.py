"""The Bayesian examples run end to end in their fast mode (on the shared Chinchilla data)."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "chinchilla_svg_extracted_data.csv"

pytestmark = pytest.mark.skipif(not DATA.exists(), reason=f"shared data not found at {DATA}")


def _main(script: str):
    return runpy.run_path(str(ROOT / "examples" / script), run_name="example")["main"]


def test_bayes_refit_fast(tmp_path: Path, capsys) -> None:
    result = _main("bayes_refit.py")(["--fast", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "reconciled exponent" in out and "held-out runs" in out
    for name in ("A", "B", "E", "alpha", "beta", "a", "b"):
        s = result["summary"][name]
        assert np.isfinite(s["mean"]) and s["sd"] > 0 and s["hdi95"][0] < s["hdi95"][1]
    lo, hi = result["reconciled_exponent"]["hdi95"]
    assert 0.6 < lo <= result["reconciled_exponent"]["median"] <= hi < 0.9
    assert 0.0 <= result["held_out_coverage"] <= 1.0
    assert {p.name for p in tmp_path.iterdir()} == {
        "posterior.nc", "corner.png", "optimal_bands.png", "reconciled_exponent.png"}


def test_sensitivity_study_fast(capsys) -> None:
    result = _main("sensitivity_study.py")(["--fast"])
    assert "elasticity" in capsys.readouterr().out
    mean, e = result["posterior_mean"], result["elasticities"]["N*(1e24 FLOP)"]
    # Eq. 14: N* ∝ (A/B)^(1/(alpha+beta)), E does not enter.
    assert e["A"] == pytest.approx(1 / (mean["alpha"] + mean["beta"]), rel=1e-9)
    assert e["B"] == pytest.approx(-e["A"], rel=1e-9)
    assert e["E"] == 0.0
    assert result["elasticities"]["reconciled exponent"]["E"] == pytest.approx(0.0, abs=1e-9)
    band = result["n_opt_band"]
    assert band["lo"] < band["median"] < band["hi"]


@pytest.mark.skipif(not (DATA.parent / "misfitting_scaling_results.csv").exists(), reason="shared data not found")
def test_other_labs_runs_fast(capsys) -> None:
    result = _main("other_labs_runs.py")(["--fast"])
    out = capsys.readouterr().out
    assert "Approach 2" in out and "Section 2 on the table" in out
    for source in ("epochai_chinchilla", "ml_scalefit"):
        assert abs(result[source].a - 0.49) < 0.03  # Hoffmann et al. (2022) Table 2, Approach 2
    assert result["misfitting_nonembedding"].a > result["misfitting_total"].a
