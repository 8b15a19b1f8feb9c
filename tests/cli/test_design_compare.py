"""``jaxscale design`` and ``jaxscale compare``: the JSON contract, the files they write, and bad
options refused with one line and exit 2 before any work."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from jaxscale import compare, design
from jaxscale.cli import main
from jaxscale.laws import chinchilla as ch
from jaxscale.planning.simulated_runs import simulated_runs
from tests.determinacy.test_curvature import isoflop_design
from tests.planning.test_recipes import scaled


def run_cli(capsys, *argv):
    try:
        code = main([*map(str, argv)])
    except SystemExit as parser_exit:  # argparse's own refusals
        code = parser_exit.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def runs_csv(tmp_path):
    n, d = isoflop_design(budgets=(1e18, 1e19, 1e20), sizes=6)
    runs = simulated_runs(ch.LAW, ch.EPOCH, n, d, 0.01, seed=0)
    path = tmp_path / "runs.csv"
    pd.DataFrame({"N": runs.n, "D": runs.d, "loss": runs.loss}).to_csv(path, index=False)
    return path


def test_design_json_and_figure(tmp_path, capsys, runs_csv):
    code, out, err = run_cli(capsys, "design", runs_csv, "--target", "N*:1e23", "--budget", "3e21",
                             "--max-cost", "1e21", "--min-cost", "1e19", "--out", tmp_path / "o", "--json")
    assert code == 0, err
    numbers = json.loads(out)
    assert numbers["target"] == "N*(1e+23)" and numbers["criterion"] == "variance" and numbers["belief"] == "robust"
    assert 0 < numbers["spent"] <= 3e21 and len(numbers["runs"]) >= 1
    first = numbers["runs"][0]
    assert first["C"] == pytest.approx(6 * first["N"] * first["D"]) and first["C"] <= 1e21 * (1 + 1e-9)
    lo, hi = numbers["interval95_now"]
    after = numbers["runs"][-1]["interval95_after"]
    assert lo < numbers["estimate"] < hi and after[1] - after[0] < hi - lo
    assert (tmp_path / "o" / "design_candidates.png").is_file()


def test_design_from_the_bootstrap_ensemble(capsys, runs_csv):
    code, out, err = run_cli(capsys, "design", runs_csv, "--target", "N*:1e23", "--budget", "3e21",
                             "--max-cost", "1e21", "--min-cost", "1e19", "--belief", "ensemble", "--max-runs", "3")
    assert code == 0, err
    assert "(95% bootstrap ensemble " in out and "3 runs of" in out


def test_a_plan_from_runs_proposes_no_run_below_their_smallest_size(runs_csv):
    """Epoch's runs (4.4e7 to 1.6e10 parameters) were offered 383 runs from N = 1e7 at one token
    per parameter: the default grid of a plan from runs starts at their smallest model size."""
    smallest = pd.read_csv(runs_csv)["N"].min()
    plan = design(str(runs_csv), target="N*:1e23", budget=3e21, max_cost=1e21)
    proposed = np.array([run["N"] for run in plan.to_dict()["runs"]])
    assert len(proposed) >= 1 and proposed.min() >= smallest * (1 - 1e-12)
    assert design(None, target="N*:1e23", budget=3e21, max_cost=1e21, max_runs=1).to_dict()["runs"]  # from priors


def test_design_from_the_priors_with_a_users_candidates(tmp_path, capsys):
    path = tmp_path / "candidates.csv"
    pd.DataFrame({"N": [1e8, 1e9, 1e10], "D": [2e9, 2e10, 2e11]}).to_csv(path, index=False)
    code, out, err = run_cli(capsys, "design", "--target", "L:7e10,1.4e12", "--budget", "1e21",
                             "--candidates", path, "--json")
    assert code == 0, err
    numbers = json.loads(out)
    assert numbers["from"] == "priors" and numbers["candidates"] == 3 and numbers["sigma"] == 0.01


def test_design_prints_an_interval_with_a_negative_bound_unambiguously(tmp_path, capsys):
    """The prior's interval on a spans zero: each row's interval was printed '-0.1834-1.183'."""
    path = tmp_path / "candidates.csv"
    pd.DataFrame({"N": [1e8, 1e9], "D": [2e9, 2e10]}).to_csv(path, index=False)
    code, out, err = run_cli(capsys, "design", "--target", "a:1e24", "--budget", "1e21", "--candidates", path)
    assert code == 0, err
    lo, hi = design(target="a:1e24", budget=1e21, candidates=([1e8, 1e9], [2e9, 2e10])).to_dict()["runs"][0][
        "interval95_after"]
    assert lo < 0 < hi and f"{lo:.4g} to {hi:.4g}" in out.splitlines()[3]


@pytest.mark.parametrize("options, message", [
    (["--target", "N*", "--budget", "1e21"], "target 'N*'"),
    (["--budget", "0"], "must be a finite number > 0"),
    (["--budget", "1e21", "--max-runs", "0"], "argument --max-runs: must be an integer >= 1"),
    (["--budget", "1e21", "--max-cost", "1e20", "--min-cost", "1e21"], "--min-cost 1e+21 must be below --max-cost"),
    (["--budget", "1e21", "--candidates", "c.csv", "--max-cost", "1e20"], "not with --candidates"),
    (["--budget", "1e21", "--belief", "ensemble"], "belief 'ensemble' reads the bootstrap of a fit of runs"),
])
def test_design_refuses_bad_options(capsys, options, message):
    code, _, err = run_cli(capsys, "design", *options)
    assert code == 2 and message in err and "Traceback" not in err


def two_recipe_csvs(tmp_path):
    n, d = isoflop_design(budgets=(1e18, 1e19, 1e20, 1e21), sizes=6)
    paths = []
    for name, params, seed in (("baseline", ch.EPOCH, 0), ("better", scaled(ch.EPOCH), 1)):
        runs = simulated_runs(ch.LAW, params, n, d, 0.01, seed)
        paths.append(tmp_path / f"{name}.csv")
        pd.DataFrame({"N": runs.n, "D": runs.d, "loss": runs.loss}).to_csv(paths[-1], index=False)
    return paths


@pytest.mark.slow
def test_compare_two_tables(tmp_path, capsys):
    baseline, better = two_recipe_csvs(tmp_path)
    code, out, err = run_cli(capsys, "compare", baseline, better, "--compute", "1e21", "--bootstrap", "50",
                             "--out", tmp_path / "o", "--json")
    assert code == 0, err
    numbers = json.loads(out)
    assert numbers["baseline"] == "baseline" and numbers["shared"] == ["alpha", "beta"]
    k = numbers["multipliers"]["better"]
    lo, hi = k["bootstrap95"]
    assert lo < k["k"] < hi and k["posterior95"] is None
    assert (tmp_path / "o" / "compare.png").is_file()


@pytest.mark.slow
def test_the_verbs_return_results(tmp_path):
    baseline, better = two_recipe_csvs(tmp_path)
    result = compare(baseline, better, names=["A", "B"], compute=1e21, bootstrap=50)
    table = result.summary()
    assert list(table.columns[:4]) == ["quantity", "estimate", "lower", "upper"]
    assert table["quantity"].iloc[0] == "k(1e+21) B / A"
    assert set(result.plot()) == {"compare"}
    plan = design(baseline, target="a:1e22", budget=1e21, max_cost=1e20)
    rows = plan.summary()
    assert rows["quantity"].iloc[0] == "a(1e+22) now" and len(rows) == len(plan.plan.choices) + 1
    assert np.all(np.diff(rows["upper"] - rows["lower"]) < 0)


@pytest.mark.parametrize("options, message", [
    (["x.csv"], "two or more runs tables"),
    (["x.csv", "y.csv", "--group-by", "source"], "--group-by reads one table"),
    (["x.csv", "y.csv", "--recipes", "a,b"], "--recipes names groups of --group-by"),
    (["x.csv", "y.csv", "--bootstrap", "1"], "argument --bootstrap: must be an integer >= 2"),
])
def test_compare_refuses_bad_options(capsys, options, message):
    code, _, err = run_cli(capsys, "compare", *options)
    assert code == 2 and message in err and "Traceback" not in err
