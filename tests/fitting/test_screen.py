"""The fast paths of Approach 3 give the answers of the slow ones: the screen of the start grid
against minimising every start, the centred coordinates against the law's own, and bootstrap
refits on the drawn runs only against refits on every run."""

from __future__ import annotations

import numpy as np
import pytest

from jaxscale.fitting.approach3 import SCREEN, fit_approach3
from jaxscale.fitting.bootstrap import drawn_rows, resample_counts
from jaxscale.fitting.centring import centre, centred_fn, centres, uncentre
from jaxscale.fitting.objective import fit_data, huber_fn, huber_objective
from jaxscale.laws import chinchilla, kaplan
from jaxscale.tables.table import drop_highest_loss, read_runs_table
from tests.conftest import shared_data_file


@pytest.fixture(scope="module")
def epoch_runs():
    return drop_highest_loss(read_runs_table(shared_data_file("chinchilla_svg_extracted_data.csv")), 5)


def test_screened_fit_is_the_full_grid_optimum_on_epochs_runs(epoch_runs):
    screened = fit_approach3(epoch_runs)
    full = fit_approach3(epoch_runs, screen=None)
    assert screened.n_starts == full.n_starts == full.n_minimised == 4500
    assert screened.n_minimised == SCREEN
    assert abs(screened.objective - full.objective) <= 1e-12 * full.objective
    np.testing.assert_allclose(screened.vector, full.vector, rtol=1e-6)


def _random_data(rng, rows=50):
    n, d = np.exp(rng.uniform(17, 24, rows)), np.exp(rng.uniform(20, 27, rows))
    return fit_data((n, d), np.exp(rng.uniform(0.5, 1.5, rows)), rng.integers(0, 4, rows))


@pytest.mark.parametrize("law", [chinchilla.LAW, chinchilla.TIED, kaplan.LAW_ND], ids=lambda law: law.name)
def test_centring_is_an_exact_change_of_variables(x64, law):
    rng = np.random.default_rng(0)
    data = _random_data(rng)
    theta = rng.normal(size=(7, law.n_params))
    m = centres(data)
    u = centre(law, theta, m)
    np.testing.assert_allclose(uncentre(law, u, m), theta, rtol=1e-13, atol=1e-13)
    assert np.array_equal(u, theta) == (not law.centred)
    objective = huber_fn(law)
    for th, ui in zip(theta, u):
        assert float(centred_fn(objective, law)(ui, data)) == pytest.approx(float(objective(th, data)), rel=1e-12)
    np.testing.assert_allclose(np.asarray(centre(law, np.asarray(theta), np.asarray(m))),
                               np.asarray(centre(law, theta, m)), rtol=0)


def test_refits_on_the_drawn_runs_see_the_same_objective(x64):
    rng = np.random.default_rng(1)
    base = _random_data(rng, 40)._replace(weights=np.ones(40))
    counts = resample_counts(40, 8, seed=2)
    rows, weights = drawn_rows(counts)
    assert rows.shape[1] % 16 == 0 or rows.shape[1] == 40
    assert np.all(weights.sum(axis=1) == 40)
    theta = chinchilla.LAW.to_vector(chinchilla.EPOCH)
    for r in range(len(counts)):
        every = huber_objective(theta, base._replace(weights=counts[r]), chinchilla.LAW)
        drawn = base.take(rows[r], weights[r])
        assert float(huber_objective(theta, drawn, chinchilla.LAW)) == pytest.approx(float(every), rel=1e-13)
