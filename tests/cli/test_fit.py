"""``jaxscale fit``: exit codes (0 ok, 2 bad table or option, never a traceback), the JSON
contract, the files it writes, and the Epoch reproduction through the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from tests.conftest import shared_data_file

GOOD = "N,D,loss\n1e8,2e9,3.1\n2e8,4e9,2.9\n4e8,8e9,2.7\n8e8,1.6e10,2.5\n1.6e9,3.2e10,2.4\n3.2e9,6.4e10,2.3\n"


def run_cli(capsys, *argv):
    try:
        code = main(["fit", *map(str, argv)])
    except SystemExit as parser_exit:  # argparse's own refusals
        code = parser_exit.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("text, message", [
    (GOOD.replace("2.7", "nan"), "row 3 (line 4), column 'loss': missing value"),
    (GOOD.replace("8e8", "big"), "column 'N': not a number"),
    ("", "empty file"),
    (GOOD.replace("N,D,loss", "N,D,N"), "duplicate column"),
])
def test_bad_table_exits_2_with_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "runs.csv"
    path.write_text(text)
    code, out, err = run_cli(capsys, path, "--out", tmp_path / "o")
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("options, message", [
    (["--drop-highest", "-1"], "argument --drop-highest: must be an integer >= 0"),
    (["--bootstrap", "1"], "argument --bootstrap: must be 0 (none) or >= 2"),
    (["--asymmetry", "0"], "argument --asymmetry: must be a finite number > 0"),
    (["--law", "kaplan", "--likelihood"], "is undefined for the kaplan law: it needs Chinchilla's law"),
    (["--method", "approach2", "--asymmetry", "2"], "asymmetry apply to approach3 and vpnls, not approach2"),
    (["--out", "GOOD"], "exists and is not a directory"),
    (["--n-col", "size"], "column 'size' for model size N not found"),
    (["--drop-highest", "3"], "3 runs for the chinchilla law's 5 parameters: fewer runs than parameters"),
])
def test_bad_option_exits_2(tmp_path, capsys, options, message):
    path = tmp_path / "runs.csv"
    path.write_text(GOOD)
    code, _, err = run_cli(capsys, path, "--out", tmp_path / "o", *(path if o == "GOOD" else o for o in options))
    assert code == 2 and message in err


def _law_csv(path) -> None:
    """15 runs of Epoch's law: 5 sizes at 5, 20 and 80 tokens per parameter."""
    from jaxscale.laws import chinchilla as ch

    n, d = (x.ravel() for x in np.meshgrid(np.geomspace(1e8, 1.6e9, 5), [5.0, 20.0, 80.0]))
    d = d * n
    path.write_text("N,D,loss\n" + "".join(f"{a},{b},{float(ch.loss(a, b, ch.EPOCH))}\n" for a, b in zip(n, d)))


def test_without_out_no_file_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _law_csv(tmp_path / "runs.csv")
    code, out, err = run_cli(capsys, "runs.csv", "--bootstrap", "8", "--json")
    assert code == 0, err
    assert "files" not in json.loads(out) and [p.name for p in tmp_path.iterdir()] == ["runs.csv"]


def test_missing_file_and_unknown_choice_exit_2_without_traceback(tmp_path):
    for argv in (["fit", str(tmp_path / "absent.csv")], ["fit", "x.csv", "--method", "approach9"]):
        proc = subprocess.run([sys.executable, "-m", "jaxscale", *argv], capture_output=True, text=True)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr and proc.stderr.strip()


def test_epoch_reproduction_json_and_files(tmp_path, capsys):
    data = shared_data_file("chinchilla_svg_extracted_data.csv")
    argv = [data, "--drop-highest", "5", "--bootstrap", "64", "--seed", "3", "--json", "--out", tmp_path]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    result = json.loads(out)
    for key in ("A", "B", "E", "alpha", "beta", "a", "b", "objective", "n_points", "seconds", "se", "ci95"):
        assert key in result, key
    expected = {"A": 477.8, "B": 2143, "E": 1.8172, "alpha": 0.3473, "beta": 0.3672, "objective": 1.018274e-3}
    for name, value in expected.items():  # the scipy measurement, 3+ significant digits
        assert result[name] == pytest.approx(value, rel=5e-4), name
    assert result["n_points"] == 240 and result["n_starts"] == 4500
    assert set(result["ci95"]) == {"A", "B", "E", "alpha", "beta", "a", "b", "G"}
    files = {p.name for p in tmp_path.iterdir()}
    assert {"residuals.png", "isoflop.png", "bootstrap_draws.csv"} <= files
    assert len((tmp_path / "bootstrap_draws.csv").read_text().splitlines()) == 65

    code, again, _ = run_cli(capsys, *argv)
    repeat = json.loads(again)
    assert code == 0 and repeat["se"] == result["se"] and repeat["ci95"] == result["ci95"]
    assert repeat["A"] == result["A"]


def test_the_allocation_says_how_far_it_extrapolates_beyond_the_runs(tmp_path, capsys):
    from jaxscale.optimum.extrapolation import decades_outside

    path = tmp_path / "runs.csv"
    _law_csv(path)
    n, d = (pd.read_csv(path)[c].to_numpy() for c in ("N", "D"))
    code, out, err = run_cli(capsys, path, "--compute", "1e18", "1e24", "--json")
    assert code == 0, err
    result = json.loads(out)
    allocation = result["allocation"]
    np.testing.assert_allclose(allocation["N_decades_outside_runs"], decades_outside(allocation["N"], n))
    np.testing.assert_allclose(allocation["D_decades_outside_runs"], decades_outside(allocation["D"], d))
    # 1e24 FLOP lies far beyond these runs (1.2 decades of N): the text and the JSON warn of it alone
    assert allocation["N_decades_outside_runs"][1] > np.log10(n.max() / n.min())
    assert allocation["beyond_runs"] == [False, True]
    assert len(result["warnings"]) == 1 and result["warnings"][0].startswith("at C = 1e+24 FLOP, N* lies")
    code, text, _ = run_cli(capsys, path, "--compute", "1e18", "1e24")
    assert code == 0 and f"  warning: {result['warnings'][0]}" in text.splitlines()


def test_approach2_through_the_cli(tmp_path, capsys):
    import jax
    import numpy as np

    from jaxscale.laws import chinchilla as ch

    budgets = np.geomspace(1e18, 1e21, 4)
    rows = []
    with jax.enable_x64(True):
        for c in budgets:
            for n in np.geomspace(ch.compute_optimal_n(c, ch.EPOCH) / 6, ch.compute_optimal_n(c, ch.EPOCH) * 6, 9):
                rows.append((n, c, float(ch.loss_at_compute(n, c, ch.EPOCH))))
    path = tmp_path / "isoflop.csv"
    path.write_text("params,flops,loss\n" + "".join(f"{n},{c},{l}\n" for n, c, l in rows))
    code, out, err = run_cli(capsys, path, "--method", "approach2", "--json", "--out", tmp_path)
    assert code == 0, err
    result = json.loads(out)
    assert result["a"] == pytest.approx(ch.EPOCH.beta / (ch.EPOCH.alpha + ch.EPOCH.beta), abs=1e-6)
    assert (tmp_path / "approach2.png").exists()


def test_approach1_on_a_sweep_table_of_training_curves(tmp_path, capsys):
    import numpy as np

    from jaxscale.laws import chinchilla as ch

    path = _curves_csv(tmp_path, np.geomspace(1e7, 1e11, 30))
    code, out, err = run_cli(capsys, path, "--method", "approach1", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["a"] == pytest.approx(ch.EPOCH.beta / (ch.EPOCH.alpha + ch.EPOCH.beta), abs=3e-3)


def _curves_csv(tmp_path, sizes) -> str:
    """Training curves of the Epoch law, one per size, in the sweep's column names."""
    import jax
    import numpy as np
    import pandas as pd

    from jaxscale.laws import chinchilla as ch

    tokens = np.geomspace(1e8, 1e13, 120)
    n, d = np.meshgrid(sizes, tokens, indexing="ij")
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, d, ch.EPOCH))
    frame = pd.DataFrame({
        "run_id": np.repeat([f"m{i}" for i in range(len(sizes))], len(tokens)),
        "step": np.tile(np.arange(len(tokens)), len(sizes)),
        "n_total": n.ravel(), "n_nonembedding": 0.9 * n.ravel(), "tokens": d.ravel(),
        "compute_total": 6 * n.ravel() * d.ravel(), "loss": loss.ravel(),
    })
    path = tmp_path / "curves.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_approach1_frontier_of_too_few_sizes_prints_null_and_warns(tmp_path, capsys):
    path = _curves_csv(tmp_path, [1e8, 1e9, 1e10])  # the interior rule leaves the middle size alone
    proc = subprocess.run([sys.executable, "-m", "jaxscale", "fit", path, "--method", "approach1", "--json",
                           "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["a"] is None and result["b"] is None and result["n_sizes"] == 1 and "ci95" not in result
    assert "jaxscale fit: warning: Approach 1 on the total basis: exponent undefined (frontier holds 1 size)" in (
        proc.stderr) and ".py:" not in proc.stderr  # one line, without the source file and line
    assert (tmp_path / "o" / "approach1.png").is_file()
    with pytest.warns(UserWarning, match="frontier holds 1 size"):
        code, out, _ = run_cli(capsys, path, "--method", "approach1")
    assert code == 0
    assert "a                      undefined (frontier holds 1 size)" in out


def test_approach1_drops_the_highest_losses_once_and_bootstraps(tmp_path, capsys):
    from jaxscale.fitting.approach1 import fit_approach1
    from jaxscale.tables.table import drop_highest_loss, read_runs_table

    path = _curves_csv(tmp_path, [1e8, 3e8, 1e9, 3e9, 1e10])
    code, out, err = run_cli(capsys, path, "--method", "approach1", "--drop-highest", "40", "--bootstrap", "50",
                             "--json")
    assert code == 0, err
    result = json.loads(out)
    expected = fit_approach1(drop_highest_loss(read_runs_table(path), 40), bootstrap=50)
    assert expected.a != fit_approach1(read_runs_table(path), bootstrap=0).a  # the drop matters here
    assert (result["a"], result["n_points"], result["n_sizes"]) == (expected.a, len(expected.c), len(expected.sizes))
    assert result["ci95"] == {"a": list(expected.a_interval), "b": list(expected.b_interval)}
