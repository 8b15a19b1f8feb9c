"""Variable projection (:mod:`jaxscale.fitting.vpnls`): the exact small NNLS, the optimum of
Approach 3 reached on Epoch's runs, the fit verb and command, refusals."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from scipy.optimize import nnls

import jaxscale as js
from jaxscale.cli import main
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.fitting.vpnls import fit_vpnls, nnls_small
from jaxscale.tables.table import drop_highest_loss, read_runs_table
from tests.conftest import shared_data_file


@pytest.fixture(scope="module")
def runs():
    return drop_highest_loss(read_runs_table(shared_data_file("chinchilla_svg_extracted_data.csv")), 5)


def test_small_nnls_is_scipys_on_problems_with_active_bounds(x64):
    rng = np.random.default_rng(0)
    solve = jax.jit(nnls_small)
    active = 0
    for _ in range(40):
        design = rng.normal(size=(30, 3))
        y = rng.normal(size=30)
        c, rss = map(np.asarray, solve(design, y))
        expected, norm = nnls(design, y)
        np.testing.assert_allclose(c, expected, atol=1e-10)
        assert rss == pytest.approx(norm**2, rel=1e-9)
        active += int(np.any(expected == 0))
    assert active > 10  # the bounds were binding in many of them


def test_vpnls_reaches_approach3s_optimum_on_epochs_runs(runs):
    projected, multistart = fit_vpnls(runs), fit_approach3(runs)
    assert projected.method == "vpnls" and projected.n_points == 240
    assert abs(projected.objective - multistart.objective) <= 1e-8
    for name in ("E", "alpha", "beta"):
        assert getattr(projected.params, name) == pytest.approx(getattr(multistart.params, name), rel=1e-5)


def test_fit_verb_and_command_take_method_vpnls(runs, capsys):
    report = js.fit(runs, method="vpnls")
    assert report.to_dict()["method"] == "vpnls" and report.text().startswith("jaxscale fit: chinchilla vpnls")
    path = shared_data_file("chinchilla_svg_extracted_data.csv")
    assert main(["fit", str(path), "--drop-highest", "5", "--method", "vpnls", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["method"] == "vpnls"
    assert printed["objective"] == pytest.approx(report.fit.objective, rel=1e-12)


def test_vpnls_refuses_a_law_without_linear_coordinates_and_asymmetry(runs):
    with pytest.raises(ValueError, match="kaplan declares none"):
        js.fit(runs, law="kaplan", method="vpnls")
    with pytest.raises(ValueError, match="asymmetry applies to method approach3"):
        js.fit(runs, method="vpnls", asymmetry=2.0)
    with pytest.raises(ValueError, match="method must be one of"):
        js.fit(runs, method="vpnl")


def test_projected_condition_is_that_of_the_inverse_covariance_of_the_exponents():
    from jaxscale.determinacy.identifiability import projected_condition
    from jaxscale.laws import chinchilla

    rng = np.random.default_rng(1)
    root = rng.normal(size=(5, 5))
    hessian = root @ root.T + 0.1 * np.eye(5)
    exponents = [3, 4]  # alpha, beta; the Schur complement's inverse is the inverse's exponent block
    expected = np.linalg.cond(np.linalg.inv(np.linalg.inv(hessian)[np.ix_(exponents, exponents)]))
    assert projected_condition(chinchilla.LAW, hessian) == pytest.approx(expected, rel=1e-9)
    assert projected_condition(js.laws.get("kaplan"), hessian) is None


def test_fit_reports_the_projected_condition_number(runs):
    from jaxscale.determinacy.identifiability import identifiability_text

    ident = js.fit(runs, method="vpnls").identifiability
    assert ident.condition_projected < ident.condition_hessian / 100
    assert "projected (linear coordinates solved out)" in "\n".join(identifiability_text(ident.to_dict()))


@pytest.mark.slow  # compiles both fits again for a law of one exponent
def test_vpnls_of_the_tied_law_reaches_approach3s_optimum(runs):
    law = js.laws.get("chinchilla-tied")
    assert abs(fit_vpnls(runs, law=law).objective - fit_approach3(runs, law=law).objective) <= 1e-8
