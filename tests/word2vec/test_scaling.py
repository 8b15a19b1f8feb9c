"""word2vec scaling study: cost model, law fits with the Approach-3 engine, compute-optimal split,
Mikolov 2013a Table 2, and the grid's checkpointed cells."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from jaxscale.cli import main
from jaxscale.laws.chinchilla import ChinchillaParams
from jaxscale.laws.word2vec_error import KaplanErrorParams
from jaxscale.word2vec import scaling as study
from jaxscale.word2vec.scaling import (
    ScalingGrid,
    compute_optimal_split,
    cost_per_word,
    error_law_by_name,
    fit_error_law,
    fit_report,
    published_rows,
)
from tests.conftest import shared_data_file

CHINCHILLA_TRUE = ChinchillaParams(A=2.0, B=40.0, E=0.3, alpha=0.6, beta=0.35)
KAPLAN_TRUE = KaplanErrorParams(d_c=15.0, T_c=3e6, alpha_d=0.3, alpha_T=0.15)


def known_grid(law: str, params: dict) -> list[dict]:
    dims, words = np.meshgrid([25, 50, 100, 200, 400], [1e6, 2e6, 4e6, 8e6, 1.6e7, 3.2e7])
    error = study.predicted_error(error_law_by_name(law), params, dims.ravel(), words.ravel())
    return [{"dim": d, "words": w, "error": e} for d, w, e in zip(dims.ravel(), words.ravel(), error)]


def test_cost_per_word_is_mikolov_eq_4_and_5():
    v = 2**15
    assert cost_per_word("cbow", "hs", 100, 4, 5, v) == 8 * 100 + 100 * 15  # Eq. 4, N = 8
    assert cost_per_word("skipgram", "hs", 100, 10, 5, v) == 10 * (100 + 100 * 15)  # Eq. 5, C = 10
    assert cost_per_word("skipgram", "neg", 100, 5, 5, v) == 5 * (100 + 100 * 6)


def test_chinchilla_split_matches_closed_form():
    kappa, budget = 3.0e3, 1e15
    out = compute_optimal_split(error_law_by_name("chinchilla"), CHINCHILLA_TRUE, budget, kappa)
    a, b = CHINCHILLA_TRUE.alpha, CHINCHILLA_TRUE.beta
    g = (a * CHINCHILLA_TRUE.A / (b * CHINCHILLA_TRUE.B)) ** (1 / (a + b))
    assert out["dim"] == pytest.approx(g * (budget / kappa) ** (b / (a + b)), rel=1e-8)
    assert out["dim"] * out["words"] * kappa == pytest.approx(budget, rel=1e-10)
    assert out["exponent_dim"] == pytest.approx(b / (a + b), rel=1e-8)


# the second set is a real fit to a 1-epoch 2-16M-word grid: r = alpha_d / alpha_T = 82, whose
# (d_c/d)^r overflows float64 at the solver's bracket unless the law is evaluated in log space
STEEP = KaplanErrorParams(d_c=24.37, T_c=1.906e6, alpha_d=5.115, alpha_T=0.06243)


@pytest.mark.parametrize("params", [KAPLAN_TRUE, STEEP])
def test_kaplan_split_matches_closed_form(params):
    """On d T = K, (d_c/d)^r + T_c d / K (r = alpha_d/alpha_T) is least at d* = (r d_c^r K / T_c)^(1/(r+1))."""
    kappa, budget = 70.0, 3e13
    out = compute_optimal_split(error_law_by_name("kaplan"), params, budget, kappa)
    r = params.alpha_d / params.alpha_T
    k = budget / kappa
    assert out["dim"] == pytest.approx((r * params.d_c ** r * k / params.T_c) ** (1 / (r + 1)), rel=1e-8)
    assert out["exponent_dim"] == pytest.approx(1 / (r + 1), rel=1e-8)
    assert 0 < out["predicted_error"] < 1


@pytest.mark.parametrize(("law", "true"), [("chinchilla", CHINCHILLA_TRUE), ("kaplan", KAPLAN_TRUE)])
def test_fit_recovers_a_known_error_law(law, true):
    fit = fit_error_law(known_grid(law, true), error_law_by_name(law))
    assert type(fit.params) is type(true)
    for name, value in true._asdict().items():
        assert getattr(fit.params, name) == pytest.approx(value, rel=2e-3), name


def test_table2_needs_the_interaction_of_kaplans_form():
    """Mikolov 2013a Table 2: the Eq. 1.5 form, whose terms share one power, fits it far better
    than the additive Chinchilla form, and puts the compute optimum of the largest cell's budget
    near that cell (d = 600, T = 783M): Table 2 grew both together, as §4.2 advises."""
    rows = published_rows()
    largest = max(rows, key=lambda r: r["compute"])
    report = fit_report(rows, kappa=largest["q_per_word"] / largest["dim"] * 3, budget=largest["compute"])
    kaplan, chinchilla = report["fits"]["kaplan"], report["fits"]["chinchilla"]
    assert kaplan["rms_points"] < 1.5 < 2 * kaplan["rms_points"] < chinchilla["rms_points"]
    optimal = report["optimal"]
    assert 300 < optimal["dim"] < 1200 and 3e8 < optimal["words"] < 2e9
    assert 0 < optimal["exponent_dim"] < 0.5 < optimal["exponent_words"] < 1


def test_grid_validation():
    with pytest.raises(ValueError, match="at least 6"):
        ScalingGrid(dims=(50, 100), words=(10_000, 20_000))
    assert math.prod((len(ScalingGrid().dims), len(ScalingGrid().words))) >= 6
    with pytest.raises(ValueError, match="unknown error law"):
        error_law_by_name("linear")


def test_figures_draw_the_grid_and_frontier():
    from matplotlib.figure import Figure

    from jaxscale.plots.word2vec import accuracy_grid_figure, frontier_figure

    rows = [{"dim": d, "words": w, "accuracy": 100 * (1 - e), "error": e, "compute": 1e3 * d * w}
            for d in (25, 50, 100) for w, e in ((1e6, 0.9), (2e6, 0.8))]
    grid_fig = accuracy_grid_figure(rows)
    assert isinstance(grid_fig, Figure)
    labels = [t.get_text() for t in grid_fig.axes[0].texts]
    assert labels.count("10.0") == 3 and labels.count("20.0") == 3
    law = error_law_by_name("chinchilla")
    optimal = compute_optimal_split(law, CHINCHILLA_TRUE, 1e12, 1e3)
    frontier = frontier_figure(rows, lambda d, t: study.predicted_error(law, CHINCHILLA_TRUE, d, t), 1e3, optimal)
    assert len(frontier.axes[0].get_lines()) == 3 * 2 + 2  # points + law per dim, frontier, optimum


def test_cli_published_fits_table2(tmp_path, capsys):
    assert main(["word2vec", "scaling", "--published", "mikolov-2013a", "--out", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["law"] == "kaplan" and set(report["fits"]) == {"kaplan", "chinchilla"}
    assert len(report["rows"]) == 24
    assert {p.name for p in tmp_path.iterdir()} == {"report.json", "accuracy_grid.png", "frontier.png", "manifest.json"}


@pytest.mark.parametrize("args", [[], ["corpus.txt", "--published", "mikolov-2013a"]])
def test_cli_needs_corpus_or_published(tmp_path, capsys, args):
    assert main(["word2vec", "scaling", *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "CORPUS" in err and "--published" in err and "Traceback" not in err


@pytest.mark.parametrize("budget", ["0", "-5", "nan", "inf"])
def test_cli_refuses_a_budget_that_is_not_a_positive_number(tmp_path, capsys, budget):
    # checked before anything trains; the published study printed d* = nan for these
    for args in (["--published", "mikolov-2013a"], [str(tmp_path / "never-read.txt")]):
        with pytest.raises(SystemExit) as parsed:
            main(["word2vec", "scaling", *args, "--out", str(tmp_path), "--budget", budget])
        assert parsed.value.code == 2
        assert f"argument --budget: must be a finite number > 0, got {budget}" in capsys.readouterr().err


def test_grid_saves_cells_and_resumes(tmp_path, monkeypatch):
    """Every finished cell is on disk; a re-run trains nothing; other settings are refused."""
    corpus = shared_data_file("enwiki_30k_articles.txt.gz")
    grid = ScalingGrid(dims=(4, 8), words=(20_000, 40_000, 80_000), epochs=1)
    rows = study.run_grid(corpus, tmp_path, grid, progress=False)
    assert len(list((tmp_path / "cells").glob("*.json"))) == 6
    assert {(r["dim"], r["words"]) for r in rows} == {(d, w) for d in grid.dims for w in grid.words}

    def no_training(*args, **kwargs):
        raise AssertionError("a saved cell was trained again")

    monkeypatch.setattr(study, "run_cell", no_training)
    assert study.run_grid(corpus, tmp_path, grid, progress=False) == rows
    with pytest.raises(ValueError, match="other settings"):
        study.run_grid(corpus, tmp_path, ScalingGrid(dims=(4, 8), words=(20_000, 40_000, 80_000), epochs=2))
