"""Identifiability on every fit: condition numbers, correlations and decades are reported; a quantity
the runs do not determine is warned about in words (with runs that would settle it), and a parameter
on a singular direction is reported undefined with everything derived from it."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest

from jaxscale.cli import main
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.determinacy.identifiability import (CONDITION_LIMIT, check_determined, identifiability, undefined_derived,
                                              weak_coordinates)
from jaxscale.laws import chinchilla as ch
from jaxscale.tables.table import from_arrays
from tests.conftest import shared_data_file

GRID = ch.LAW.init_grid()[::45]


def one_decade(seed=0):
    """Six model sizes over one decade of N near 20 tokens per parameter (15, 20, 27), alpha = beta = 0.3, 1% noise."""
    p = ch.ChinchillaParams(A=400.0, B=400.0, E=1.69, alpha=0.3, beta=0.3)
    n = np.repeat(np.geomspace(1e8, 1e9, 6), 3)
    d = n * np.tile([15.0, 20.0, 27.0], 6)
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, d, p)) * np.exp(np.random.default_rng(seed).normal(0, 0.01, n.size))
    return n, d, loss


def test_one_decade_of_sizes_with_equal_exponents_is_not_determined_and_says_so():
    fit = fit_approach3(from_arrays(*one_decade()), grid=GRID)
    ident = identifiability(fit)
    assert ident.undefined == () and np.isfinite(ident.condition_hessian) and np.isfinite(ident.condition_information)
    assert ident.decades["N"] == pytest.approx(1.0)
    text = " | ".join(ident.warnings)
    assert "is not determined: its 95% interval" in text and "decades of" in text
    lo, hi = ident.intervals["a"][1:]
    assert hi - lo > ident.intervals["a"][0]  # the rule, as declared


def test_the_cli_prints_condition_numbers_and_the_warning_with_runs_to_train(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in zip(*one_decade())))
    assert main(["fit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "identifiability: condition number" in out and "WARNING: " in out and "not determined" in out
    assert "runs that would settle it (jaxscale design): N=" in out
    assert "columns: N = N, D = D, C = 6 N D, loss = loss" in out
    assert main(["fit", str(path), "--json"]) == 0
    section = json.loads(capsys.readouterr().out)["identifiability"]
    assert section["warnings"] and len(section["suggested_runs"]) == 3 and section["correlation_source"] == "sandwich"


@pytest.mark.parametrize("drop", ["0", "5"])
def test_epoch_runs_determine_the_law(capsys, drop):
    table = str(shared_data_file("chinchilla_svg_extracted_data.csv"))
    assert main(["fit", table, "--drop-highest", drop, "--json"]) == 0
    section = json.loads(capsys.readouterr().out)["identifiability"]
    assert section["warnings"] == [] and section["undefined"] == [] and section["suggested_runs"] == []
    assert 1 < section["condition_hessian"] < CONDITION_LIMIT and 1 < section["condition_information"] < CONDITION_LIMIT
    assert section["decades"]["N"] > 2 and section["decades"]["C"] > 3


def test_bootstrap_correlations_are_used_when_there_are_refits():
    import jaxscale as js

    report = js.fit(from_arrays(*one_decade()), bootstrap=20)
    ident = report.identifiability
    assert ident.correlation_source == "bootstrap" and set(ident.intervals) == {"alpha", "beta", "a", "b"}
    assert ident.intervals["a"][1:] == pytest.approx(report.refits.ci95()["a"])


def test_a_singular_direction_names_the_parameters_on_it():
    info = np.diag([1.0, 1.0, 1.0, 1.0, 1.0])
    info[3:, 3:] = [[1.0, 1.0 - 1e-12], [1.0 - 1e-12, 1.0]]  # alpha and beta along one line
    assert weak_coordinates(info, ch.LAW.vector_names) == ("alpha", "beta")
    assert weak_coordinates(np.eye(5), ch.LAW.vector_names) == ()
    assert set(undefined_derived(ch.LAW, ("alpha",))) == {"a", "b", "G"}
    assert undefined_derived(ch.LAW, ("E",)) == ()


def test_undefined_parameters_and_what_derives_from_them_are_none_and_refused_by_sensitivity():
    import jaxscale as js

    n = np.repeat(np.geomspace(1e8, 1e10, 8), 3)
    report = js.fit(from_arrays(n, n * np.tile([5.0, 20.0, 80.0], 8), np.asarray(
        ch.loss(n, n * np.tile([5.0, 20.0, 80.0], 8), ch.EPOCH))), bootstrap=0)
    singular = dataclasses.replace(report, identifiability=dataclasses.replace(report.identifiability,
                                                                                undefined=("alpha",)))
    numbers = singular.to_dict()
    assert numbers["alpha"] is None and numbers["a"] is None and numbers["G"] is None and numbers["E"] is not None
    assert numbers["allocation"]["N"] == [None] and "do not determine alpha, G, a, b" in numbers["note"]
    assert np.isnan(singular.summary().set_index("quantity").loc["alpha", "estimate"])
    with pytest.raises(ValueError, match="the runs do not determine alpha"):
        check_determined(singular.identifiability, "sensitivities")
    with pytest.raises(ValueError, match="the runs do not determine alpha"):
        js.sensitivity(singular, bootstrap=0)


@pytest.mark.slow
def test_bayes_reports_identifiability_from_the_posterior(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in zip(*one_decade())))
    assert main(["bayes", str(path), "--laplace", "--no-progress", "--json"]) == 0
    section = json.loads(capsys.readouterr().out)["identifiability"]
    assert section["correlation_source"] == "posterior" and np.isfinite(section["condition_hessian"])
    assert any("beta is not determined" in w for w in section["warnings"])


def test_the_fit_names_the_loss_column_it_chose_of_several(tmp_path, capsys):
    """A table with both a training and a validation loss: the fit says which one it fitted."""
    n, d, loss = one_decade()
    path = tmp_path / "runs.csv"
    path.write_text("params,tokens,train_loss,val_loss\n"
                    + "".join(f"{a:.17g},{b:.17g},{0.9 * c:.17g},{c:.17g}\n" for a, b, c in zip(n, d, loss)))
    assert main(["fit", str(path)]) == 0
    assert "columns: N = params, D = tokens, C = 6 N D, loss = val_loss" in capsys.readouterr().out
    assert main(["fit", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["columns"] == {"N": "params", "D": "tokens", "C": "6 N D",
                                                               "loss": "val_loss"}


@pytest.mark.parametrize("with_draws", [False, True])
def test_a_quantity_the_fit_leaves_undefined_gets_no_interval_and_no_nan_warning(with_draws):
    """A fitted beta < 0 leaves a and b undefined (the fit's note says why); they were judged
    anyway, printing 'a is not determined: its 95% interval [nan, nan] is wider than its value nan'."""
    from jaxscale.fitting.bootstrap import bootstrap
    from tests.fitting.test_determinable import rising_with_d

    fit = fit_approach3(from_arrays(*rising_with_d()), grid=GRID)
    assert fit.params.beta < 0
    ident = identifiability(fit, bootstrap(fit, 8, seed=0).parameter_draws if with_draws else None)
    assert "a" not in ident.intervals and "b" not in ident.intervals and "beta" in ident.intervals
    assert not any("nan" in w for w in ident.warnings), ident.warnings
