"""``jaxscale sensitivity``: the published and table forms, the JSON contract, figures, bad input
(exit 2, one line), and on Epoch's runs the acceptance check of the influence against the
jackknife."""

from __future__ import annotations

import json

import pytest

from jaxscale.cli import main
from tests.conftest import shared_data_file

GOOD = "N,D,loss\n1e8,2e9,3.1\n2e8,4e9,2.9\n4e8,8e9,2.7\n8e8,1.6e10,2.5\n1.6e9,3.2e10,2.4\n3.2e9,6.4e10,2.3\n"


def run_cli(capsys, *argv):
    code = main(["sensitivity", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("options, message", [
    ([], "give a runs table or --published NAME"),
    (["RUNS", "--published", "epoch"], "give a runs table or --published NAME"),
    (["--published", "epoch", "--law", "kaplan"], "no published parameter set 'epoch' for the kaplan law"),
    (["--published", "gpt4"], "for the chinchilla law; choose one of ['chinchilla', 'epoch']"),
    (["RUNS", "--bootstrap", "1"], "argument --bootstrap: must be 0 (none) or >= 2"),
    (["RUNS", "--top", "0"], "argument --top: must be an integer >= 1"),
    (["RUNS", "--law", "kaplan-steps"], "law of N and D"),
    (["--published", "epoch", "--compute", "-1"], "argument --compute: must be a finite number > 0, got -1"),
    (["--published", "epoch", "--gamma", "0"], "argument --gamma: must be a finite number > 0"),
    (["--published", "epoch", "--delta", "5"], "argument --delta: must be a number in (0, 1), got 5"),
    (["RUNS", "--out", "RUNS"], "exists and is not a directory"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, options, message):
    path = tmp_path / "runs.csv"
    path.write_text(GOOD)
    try:
        code, out, err = run_cli(capsys, *(path if o == "RUNS" else o for o in options))
    except SystemExit as parser_exit:  # argparse's own errors
        code, (out, err) = parser_exit.code, capsys.readouterr()
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and out == ""


def test_help_documents_the_quantities(capsys):
    with pytest.raises(SystemExit):
        main(["sensitivity", "--help"])
    out = capsys.readouterr().out
    for words in ("N*(C), D*(C)", "L(N, D)", "reconciled exponent", "delta-method", "leave-one-out"):
        assert words in out


def test_published_set_prints_elasticities_and_the_reconciliation(capsys):
    code, out, _ = run_cli(capsys, "--published", "epoch", "--json")
    assert code == 0
    numbers = json.loads(out)
    e = numbers["quantities"]["N*(1e+24)"]["elasticities"]
    assert e["A"] == pytest.approx(1 / (0.3478 + 0.3658), rel=1e-9) and abs(e["E"]) < 1e-12
    knobs = numbers["reconciliation"]["knobs"]
    assert set(knobs) == {"A", "B", "E", "alpha", "beta", "gamma", "delta", "N_min", "N_max"}
    reconciled = numbers["quantities"]["reconciled exponent"]
    assert reconciled["value"] == pytest.approx(numbers["reconciliation"]["exponent"], rel=1e-12)
    for k, value in reconciled["elasticities"].items():  # one function, two parametrisations
        assert value == pytest.approx(knobs[k]["elasticity"], abs=1e-9), k
    assert knobs["A"]["factor_to_target"] is None  # no first-order reach: JSON null
    assert 0.77 < numbers["reconciliation"]["frontier_exponent"] < 0.78
    assert "influence" not in numbers and numbers["source"] == "published epoch"


def test_a_law_without_the_reconciled_exponent_says_why(capsys):
    code, out, _ = run_cli(capsys, "--published", "kaplan", "--law", "kaplan", "--json")
    assert code == 0
    numbers = json.loads(out)
    assert numbers["reconciliation"] is None and "reconciled exponent" not in numbers["quantities"]
    assert numbers["reconciliation_undefined"].startswith("undefined for the kaplan law: it needs Chinchilla's law")


@pytest.mark.slow
def test_epoch_table_influence_agrees_with_the_jackknife(tmp_path, capsys):
    """The acceptance check: on Epoch's 240 runs the first-order influence on a and on
    N*(1e24) correlates >= 0.95 with exact leave-one-out refits; figures and text output."""
    data = shared_data_file("chinchilla_svg_extracted_data.csv")
    code, out, _ = run_cli(capsys, data, "--drop-highest", "5", "--bootstrap", "200", "--json", "--out", tmp_path)
    assert code == 0
    numbers = json.loads(out)
    influence = numbers["influence"]
    assert influence["n_runs"] == 240 and influence["jackknife_converged"] == 240
    for q in ("a", "N*(1e+24)"):
        assert influence["quantities"][q]["correlation_jackknife"] >= 0.95, q
        assert len(influence["quantities"][q]["most_influential"]) == 5
    for q, v in numbers["quantities"].items():
        assert v["sd_log_delta"] == pytest.approx(v["sd_log_draws"], rel=0.15), q
    assert {p.name for p in tmp_path.iterdir()} == {"tornado.png", "influence.png", "jackknife.png"}
    code, out, _ = run_cli(capsys, data, "--drop-highest", "5", "--bootstrap", "0")
    assert code == 0 and "correlation" in out and "reconciled exponent" in out and "SD of log q" not in out


@pytest.mark.filterwarnings("error")
def test_an_exactly_determined_table_is_refused_with_the_reason(tmp_path, capsys):
    # 5 runs for the 5 parameters of the chinchilla law: the fit would pass through every run, and
    # nothing measures its error (the design rule of fitting.design; it leaked numpy's warnings and NaN
    # correlations before)
    path = tmp_path / "five.csv"
    path.write_text("N,D,loss\n1e8,2e9,3.1\n2e8,4e9,2.9\n4e8,8e9,2.7\n8e8,1.6e10,2.5\n1.6e9,8e9,2.45\n")
    code, out, err = run_cli(capsys, path, "--bootstrap", "20", "--json")
    assert code == 2 and out == "" and "5 runs for the chinchilla law's 5 parameters: no degrees of freedom" in err
