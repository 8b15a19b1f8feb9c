"""``js.curve`` and ``js.runs``: the verbs behind ``jaxscale curve`` and ``jaxscale runs``,
whose ``to_dict()`` is the command's ``--json``, whose text is what it prints, and whose
``save`` writes the command's files."""

from __future__ import annotations

import contextlib
import io
import json

import pandas as pd
import pytest

import jaxscale as js
from jaxscale.cli import main
from tests.curves.test_lr_annealing_fit import TRUE, synthetic_runs

FITTED = ",".join(f"{n}_{k}" for n in TRUE for k in ("constant", "cosine"))
PREDICTED = ",".join(f"{n}_wsd" for n in TRUE)


def _cli(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def _timeless(numbers: dict) -> dict:
    return {k: v for k, v in numbers.items() if k != "seconds"}


@pytest.fixture(scope="module")
def curves_csv(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("curves") / "curves.csv"
    synthetic_runs(steps=200).to_csv(path, index=False)
    return str(path)


def test_curve_is_the_cli_and_predicts_the_third_schedule(curves_csv, tmp_path):
    result = js.curve(curves_csv, fit_runs=FITTED, predict=PREDICTED.split(","), skip_warmups=0)
    assert isinstance(result, js.CurveReport)
    cli = json.loads(_cli(["curve", curves_csv, "--fit-runs", FITTED, "--predict", PREDICTED, "--skip-warmups", "0",
                           "--json"]))
    assert _timeless(result.to_dict()) == _timeless(cli)
    summary = result.summary().set_index("quantity")
    assert list(summary.columns[:3]) == ["estimate", "lower", "upper"]
    for n, params in TRUE.items():  # the law's own curves: alpha recovered, the WSD run predicted
        assert summary.loc[f"n_total={n}: alpha", "estimate"] == pytest.approx(params.alpha, rel=1e-3)
        assert summary.loc[f"n_total={n}: final_mare", "estimate"] < 1e-5
    text = str(result)
    assert text.startswith(f"jaxscale curve: {curves_csv}") and "2 groups, 2 runs predicted" in text
    assert set(result.plot()) == {"curves"}
    assert [p.rsplit("/", 1)[1] for p in result.save(tmp_path / "out")] == ["curves.png"]


def test_a_group_keeps_its_numbers_numbers_beside_a_text_column(tmp_path):
    """Grouped by n_total and a column read as text (as the (Mis)Fitting table's peak_lr is), each
    group's n_total was turned into text too ('1182757632.0' in the JSON)."""
    path = tmp_path / "curves.csv"
    synthetic_runs(steps=200).assign(recipe="base").to_csv(path, index=False)
    result = js.curve(str(path), fit_runs=FITTED, predict=PREDICTED.split(","), skip_warmups=0,
                      group_by="n_total,recipe")
    groups = result.to_dict()["groups"]
    assert all(isinstance(g["n_total"], float) and g["recipe"] == "base" for g in groups)
    assert {e["n_total"] for e in result.to_dict()["final_errors"]} == {float(n) for n in TRUE}


def test_curve_multipower_and_its_refusals(curves_csv, monkeypatch):
    from jaxscale.curves import held_out_schedules

    monkeypatch.setattr(held_out_schedules, "PENALTIES", (0.0, 1e-3))  # two candidates keep the test short
    table = js.load_runs(curves_csv, sizes_vary=False)
    result = js.curve(table, law="multipower", fit_runs=["11760_constant", "11760_cosine"], predict=["11760_wsd"])
    numbers = result.to_dict()
    assert numbers["law"] == "multipower" and [r["fitted"] for r in numbers["runs"]] == [True, True, False]
    assert set(result.plot()) == {"multipower"}
    assert result.summary().set_index("quantity").loc["11760_wsd: mare", "estimate"] == numbers["runs"][2]["mare"]
    # the default rule: the penalty chosen by holding each fitted run out, intervals at every predicted point
    assert numbers["rule"]["held_out_runs"] == ["11760_constant", "11760_cosine"]
    assert 0 <= numbers["interval_coverage"] <= 1 and numbers["runs"][2]["coverage"] == numbers["interval_coverage"]
    assert "fit rule held-out: penalty lambda" in str(result)
    with pytest.raises(ValueError, match="needs two runs in fit_runs"):
        js.curve(table, law="multipower", fit_runs=["11760_constant"], predict=["11760_wsd"])
    with pytest.raises(ValueError, match="fit_rule must be one of held-out, optimum"):
        js.curve(table, law="multipower", fit_runs=["11760_constant"], predict=["11760_wsd"], fit_rule="best")
    with pytest.raises(ValueError, match="go together"):
        js.curve(table, fit_runs=["11760_constant"])
    with pytest.raises(ValueError, match="law must be one of lr-annealing, multipower"):
        js.curve(table, law="kaplan", fit_runs=["11760_constant"], predict=["11760_wsd"])
    with pytest.raises(ValueError, match="apply when reading runs"):
        js.curve(table, fit_runs=["11760_constant"], predict=["11760_wsd"], reading={"n": "N"})


def test_curve_reads_the_schedules_of_the_runs_it_names_only(tmp_path):
    """A run neither fitted nor predicted whose schedule columns are empty (a run of another
    study in the same table) is not read."""
    frame = synthetic_runs(steps=200)
    stranger = frame[frame["run_id"] == "11760_wsd"].assign(run_id="stranger", final_fraction=None, schedule=None)
    path = tmp_path / "with_stranger.csv"
    pd.concat([frame, stranger]).to_csv(path, index=False)
    result = js.curve(str(path), fit_runs=["11760_constant", "11760_cosine"], predict=["11760_wsd"], skip_warmups=0)
    [group] = result.to_dict()["groups"]
    assert group["predicted_runs"] == 1 and group["final_mare"] < 1e-5


def test_runs_is_the_cli_and_saves_the_tidy_table(tmp_path):
    rows = [{"run_id": f"r{n}", "step": s, "n_total": n * 1e6, "tokens": s * 1e6, "loss": 2 + 1 / n + 1 / s}
            for n in (1, 2, 4) for s in (1, 2, 3, 4)]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    result = js.runs(path, loss_policy="min")
    assert isinstance(result, js.RunsReport)
    assert result.to_dict() == json.loads(_cli(["runs", str(path), "--loss-policy", "min", "--json"]))
    assert str(result) + "\n" == _cli(["runs", str(path), "--loss-policy", "min"])
    summary = result.summary().set_index("quantity")
    assert list(summary.index) == ["r1", "r2", "r4"] and summary.loc["r1", "estimate"] == pytest.approx(3.25)
    assert result.plot() == {}
    (saved,) = result.save(tmp_path / "tidy")
    assert (tmp_path / "tidy" / "manifest.json").is_file()
    assert pd.read_csv(saved).shape[0] == result.to_dict()["rows"] == 3
    with pytest.raises(ValueError, match="loss policy"):
        js.runs(path, loss_policy="median")
