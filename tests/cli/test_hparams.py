"""``jaxscale hparams``, ``jaxscale schedule`` and ``jaxscale curve --law multipower``: published values
computed by their laws, a synthetic grid through the whole command, files, and one-line refusals."""

from __future__ import annotations

import json

import pytest

from jaxscale.cli import main
from jaxscale.laws import deepseek_hparams, steplaw
from tests.hyperparameters.test_per_group import _grid


def run_cli(capsys, *argv):
    code = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_deepseeks_published_values_are_printed_to_four_digits(capsys):
    code, out, err = run_cli(capsys, "hparams", "--published", "deepseek", "--compute", "1e24")
    assert code == 0 and err == ""
    lr = float(deepseek_hparams.LR_LAW.evaluate(deepseek_hparams.PUBLISHED_LR, 1e24))
    batch = float(deepseek_hparams.BATCH_LAW.evaluate(deepseek_hparams.PUBLISHED_BATCH, 1e24))
    assert f"eta* = {lr:.4g}" in out and f"B* = {batch:.4g} tokens" in out
    assert f"{lr:.4g}" == "0.0003118"  # 0.3118 x (1e24)^-0.125 = 0.3118 x 1e-3
    code, out, err = run_cli(capsys, "hparams", "--published", "deepseek", "--n", "1e9", "--tokens", "1e24")
    lr = float(deepseek_hparams.LR_LAW.evaluate(deepseek_hparams.PUBLISHED_LR, 6e33))  # C = 6 N D
    assert code == 0 and f"eta* = {lr:.4g}" in out


def test_step_laws_published_values_as_json(capsys):
    code, out, _ = run_cli(capsys, "hparams", "--published", "steplaw", "--n", "7e9", "--tokens", "1.4e12", "--json")
    numbers = json.loads(out)
    p, b = steplaw.PUBLISHED_LR, steplaw.PUBLISHED_BATCH
    assert code == 0 and numbers["interval"] is None
    assert numbers["learning_rate"] == pytest.approx(p.A * 7e9 ** -p.alpha * 1.4e12 ** p.beta, rel=1e-12)
    assert numbers["batch_tokens"] == pytest.approx(b.A * 1.4e12 ** b.beta, rel=1e-12)


def test_a_grid_table_goes_through_the_command_with_its_figures(tmp_path, capsys):
    path = tmp_path / "grid.csv"
    _grid(noise=2e-4, seed=3).to_csv(path, index=False)
    code, out, err = run_cli(capsys, "hparams", path, "--sequence-length", "2048", "--bootstrap", "50",
                             "--no-joint", "--out", tmp_path / "figs", "--json")
    numbers = json.loads(out)
    assert code == 0, err
    assert numbers["per_group"]["laws"]["steplaw-lr"]["params"]["alpha"]["lower"] is not None
    assert numbers["joint"] is None and sorted(p.rsplit("/", 1)[1] for p in numbers["files"]) == [
        "landscapes.png", "lr_law.png"]
    assert (tmp_path / "figs" / "lr_law.png").stat().st_size > 0


def test_without_resamples_the_power_laws_promise_no_intervals(tmp_path, capsys):
    """--bootstrap 0 printed "95% intervals from 0 resamples of runs within groups" over laws shown without any."""
    path = tmp_path / "grid.csv"
    _grid(noise=2e-4, seed=3).to_csv(path, index=False)
    code, out, err = run_cli(capsys, "hparams", path, "--sequence-length", "2048", "--bootstrap", "0", "--no-joint")
    assert code == 0, err
    assert "from 0 resamples" not in out and "power laws through the optima (no intervals: no resamples)" in out


@pytest.mark.slow
def test_the_joint_laws_posterior_is_printed_beside_the_per_group_intervals(tmp_path, capsys):
    path = tmp_path / "grid.csv"
    _grid(noise=2e-4, seed=3).to_csv(path, index=False)
    argv = ["hparams", path, "--sequence-length", "2048", "--bootstrap", "50", "--posterior", "--chains", "2",
            "--warmup", "100", "--samples", "100", "--no-progress"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert "joint law's posterior (NUTS" in out and "inside the group's own 95% interval:" in out
    code, out, _ = run_cli(capsys, *argv, "--json", "--out", tmp_path / "figs")
    numbers = json.loads(out)
    posterior = numbers["posterior"]
    assert code == 0 and posterior["posterior"][0]["quantity"] == "alpha"
    assert (tmp_path / "figs" / "agreement.png").stat().st_size > 0
    assert set(posterior["agreement"]["exponents"]) == {"alpha", "beta", "beta_batch"}


@pytest.mark.parametrize("argv, message", [
    (["hparams"], "give RUNS"),
    (["hparams", "--published", "steplaw", "--compute", "1e24"], "needs --tokens, --n"),
    (["hparams", "x.csv", "--n", "1e9"], "go with --published"),
    # a planned run's inputs that the law does not read were printed as if they were its own
    (["hparams", "--published", "steplaw", "--n", "7e9", "--tokens", "1.4e12", "--compute", "1e22"],
     "the steplaw law does not read --compute"),
    (["hparams", "--published", "deepseek", "--n", "7e9", "--tokens", "1.4e12", "--compute", "1e22"],
     "give --compute, or --n and --tokens for C = 6 N D, not both"),
    (["hparams", "--published", "deepseek", "--n", "7e9", "--compute", "1e22"],
     "give --compute, or --n and --tokens for C = 6 N D, not both"),
    (["hparams", "--published", "steplaw", "--n", "1e9", "--tokens", "1e11", "--posterior"], "--posterior samples"),
    (["hparams", "x.csv", "--no-joint", "--posterior"], "--posterior samples"),
    (["schedule", "--steps", "100", "--peak-lr", "3e-4"], "give RUNS with --fit-runs, or --published"),
    (["schedule", "--published", "luo-25m", "--fit-runs", "a,b", "--steps", "100", "--peak-lr", "3e-4"],
     "--fit-runs names runs of RUNS to fit"),  # was ignored: the published law printed as if fitted to them
    (["schedule", "--published", "luo-25m", "--steps", "100", "--peak-lr", "3e-4", "--warmup-steps", "100"],
     "--warmup-steps < steps - 1"),
])
def test_bad_options_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and out == ""


def test_the_schedule_command_optimises_under_a_published_law(tmp_path, capsys):
    code, out, err = run_cli(capsys, "schedule", "--published", "luo-25m", "--steps", "3000", "--peak-lr", "3e-4",
                             "--warmup-steps", "300", "--iterations", "200", "--out", tmp_path, "--json")
    numbers = json.loads(out)
    assert code == 0, err
    assert numbers["law"] == "luo-25m" and numbers["gain"]["cosine"] > 0
    assert (tmp_path / "schedule.png").is_file()


def test_curve_with_the_multipower_law_needs_the_runs_named(tmp_path, capsys):
    path = tmp_path / "curves.csv"
    path.write_text("run_id,step,n_total,tokens,loss,learning_rate\n" + "".join(
        f"a,{s},1e7,{s},{4 - s / 1000},{3e-4}\n" for s in range(100, 1100, 100)))
    code, _, err = run_cli(capsys, "curve", path, "--law", "multipower", "--protocol", "sweep")
    assert code == 2 and "fits the runs fit_runs (--fit-runs)" in err


def test_the_held_out_rule_needs_two_fitted_runs(tmp_path, capsys):
    path = tmp_path / "curves.csv"
    path.write_text("run_id,step,n_total,tokens,loss,learning_rate\n" + "".join(
        f"{r},{s},1e7,{s},{4 - s / 1000},{3e-4}\n" for r in "ab" for s in range(100, 1100, 100)))
    code, _, err = run_cli(capsys, "curve", path, "--law", "multipower", "--fit-runs", "a", "--predict", "b")
    assert code == 2 and "--fit-rule optimum" in err and "Traceback" not in err


def test_a_schedule_left_short_of_its_optimum_says_so_not_negative_nats_above(capsys):
    """Two iterations left WSD 0.044 nats lower than the "optimised" schedule, and the text said
    "-0.0444 nats above the optimised"."""
    code, out, err = run_cli(capsys, "schedule", "--published", "luo-25m", "--steps", "2000", "--peak-lr", "3e-4",
                             "--iterations", "2")
    assert code == 0, err
    assert "0.0444 nats below the optimised" in out and "-0." not in out
    assert "note: wsd ends below the optimised schedule: the descent did not reach the optimum in 2 iterations" in out
