"""The Bayesian examples run end to end in their fast mode (on the shared Chinchilla data)."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "chinchilla_svg_extracted_data.csv"

pytestmark = pytest.mark.skipif(not DATA.exists(), reason=f"shared data not found at {DATA}")


def _main(script: str):
    return runpy.run_path(str(ROOT / "examples" / script), run_name="example")["main"]


@pytest.mark.slow
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


@pytest.mark.slow
def test_sensitivity_study_fast(tmp_path: Path, capsys) -> None:
    """The whole walk-through (fit, 200 bootstrap refits, 240 leave-one-out refits, the
    reconciliation's knobs): about 30 s on 2 cores, so opt-in."""
    result = _main("sensitivity_study.py")(["--fast", "--out", str(tmp_path)])
    assert "elasticities" in capsys.readouterr().out
    e = dict(zip(result["values"], result["elasticities"]))
    # Eq. 14: N* ∝ (A/B)^(1/(alpha+beta)) (C/6)^a, E does not enter.
    assert e["N*(1e+24)"][0] == pytest.approx(-e["N*(1e+24)"][1], rel=1e-9)
    assert abs(e["N*(1e+24)"][2]) < 1e-12 and abs(e["reconciled exponent"][2]) < 1e-12
    for q in ("a", "N*(1e+24)"):
        assert result["correlations"][q] >= 0.95
    spread = result["delta_method"]
    np.testing.assert_allclose(spread.sd_log, spread.sd_log_draws, rtol=0.2)
    assert 0.77 < result["reconciliation"].frontier_exponent < 0.78
    assert {p.name for p in tmp_path.iterdir()} == {"tornado.png", "influence.png", "jackknife.png"}


@pytest.mark.skipif(not (DATA.parent / "misfitting_scaling_results.csv").exists(), reason="shared data not found")
@pytest.mark.slow
def test_other_labs_runs_fast(capsys) -> None:
    result = _main("other_labs_runs.py")(["--fast"])
    out = capsys.readouterr().out
    assert "Approach 2" in out and "Section 2 on the table" in out
    for source in ("epochai_chinchilla", "ml_scalefit"):
        assert abs(result[source].a - 0.49) < 0.03  # Hoffmann et al. (2022) Table 2, Approach 2
    assert result["misfitting_nonembedding"].a > result["misfitting_total"].a
