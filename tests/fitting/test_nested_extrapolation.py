"""The holdout's nested rule (:mod:`jaxscale.fitting.nested_extrapolation`): the non-embedding basis
from Table A9, the candidates a table can have, the mean of members, the choice, the refusals."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxscale.fitting import nested_extrapolation as nx
from jaxscale.laws import chinchilla, table_a9
from jaxscale.tables.table import from_arrays
from tests.cli.test_fit import run_cli
from tests.conftest import shared_data_file
from tests.fitting.test_approach3 import GRID, TRUE, synthetic_runs


def test_table_a9_sizes_give_their_nonembedding_parameters_and_other_sizes_none():
    total = table_a9.total_params()
    assert np.allclose(table_a9.nonembedding_of(total), table_a9.nonembedding_params())
    assert np.allclose(table_a9.nonembedding_of(total * 1.001), total * 1.001 - table_a9.embedding_params())
    assert table_a9.nonembedding_of(np.append(total, total[3] * 1.02)) is None


def test_every_one_of_epochs_runs_is_a_table_a9_configuration():
    from jaxscale import load_runs

    runs = nx.with_nonembedding(load_runs(shared_data_file("chinchilla_svg_extracted_data.csv"), drop_highest=5))
    assert runs is not None and np.all((runs.n_nonembedding > 0.6 * runs.n) & (runs.n_nonembedding < runs.n))


def test_a_table_without_nonembedding_sizes_has_only_the_total_candidates():
    runs = synthetic_runs(size=40)
    assert nx.with_nonembedding(runs) is None
    assert nx.available(nx.CANDIDATES, False) == (nx.PUBLISHED, nx.CANDIDATES[1])
    assert nx.available(nx.CANDIDATES, True) == nx.CANDIDATES
    with pytest.raises(ValueError, match="needs non-embedding model sizes"):
        nx.nested_holdout(runs, 1e9, candidates=nx.CANDIDATES[2:4])


def test_a_candidate_predicts_the_mean_of_its_members_and_the_lowest_mean_error_is_chosen(monkeypatch):
    runs = synthetic_runs(size=90, seed=2)
    runs = from_arrays(runs.n, runs.d, runs.loss, n_nonembedding=0.8 * runs.n)
    # stand-ins for the fits: the total basis predicts 10% high, the non-embedding basis 10% low
    monkeypatch.setattr(nx, "fit_member", lambda member, table, **kw: member)
    monkeypatch.setattr(nx, "member_prediction", lambda fit, member, table: table.loss * (
        1.1 if member.basis == "total" else 0.9))
    scores = nx.nested_scores(runs, "n", nx.CANDIDATES)
    by_name = {s.candidate.name: s for s in scores}
    assert np.allclose(by_name[nx.PUBLISHED.name].e, np.log(1.1))
    mixed = nx.chosen(scores)
    assert mixed.candidate == nx.CANDIDATES[4] and np.allclose(mixed.mae_nats, 0.0)  # the first of equals
    assert len(mixed.mae_nats) == len(nx.INNER_QUANTILES) and mixed.scale == pytest.approx(0.0)


def test_the_extrapolation_scale_pools_every_split():
    score = nx.NestedScore(nx.PUBLISHED, e=np.array([0.02, -0.01, 0.03]), u=np.array([1.0, 0.5, 2.0]),
                           mae_nats=(0.1, 0.2))
    assert score.scale == pytest.approx(np.sqrt((4 + 1 + 9) / (1 + 0.25 + 4)) / 100)
    assert score.mean_mae_nats == pytest.approx(0.15)


def test_the_holdout_rule_without_a_holdout_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n1e8,2e9,3.1\n2e8,4e9,2.9\n4e8,8e9,2.7\n8e8,1.6e10,2.5\n1.6e9,3.2e10,2.4\n")
    code, _, err = run_cli(capsys, path, "--holdout-rule", "nested")
    assert code == 2 and "give holdout (--holdout-threshold)" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, path, "--method", "approach2", "--holdout-rule", "nested")
    assert code == 2 and "holdout rule apply to approach3" in err


@pytest.mark.slow
def test_runs_of_a_law_in_nonembedding_parameters_choose_that_basis_and_predict_better():
    rng = np.random.default_rng(3)
    n_ne = np.exp(rng.uniform(np.log(1e7), np.log(1e10), 120))
    d = np.exp(rng.uniform(np.log(1e9), np.log(1e12), 120))
    with jax.enable_x64(True):
        loss = np.asarray(chinchilla.loss(n_ne, d, TRUE)) * np.exp(rng.normal(0.0, 0.003, 120))
    runs = from_arrays(n_ne * (1 + 0.3 * (1e7 / n_ne) ** (2 / 3)), d, loss, n_nonembedding=n_ne)
    summary = nx.nested_holdout(runs, 2e9, resamples=40, grid=GRID).summary()
    assert "total" not in summary["rule"] and summary["mae_nats"] < 0.7 * summary["approach3_mae_nats"]
    assert set(summary["nested_mae_nats"]) == {c.name for c in nx.CANDIDATES}
