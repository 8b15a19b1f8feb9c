"""Method-1 frontier and the power-law fit."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.core.frontier import compute_frontier
from jaxscale.core.power_law import fit_power_law

pytestmark = pytest.mark.usefixtures("x64")


def test_frontier_picks_lowest_interpolated_curve_and_handles_ragged_curves():
    log_c = jnp.array([[0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, jnp.nan]])
    loss = jnp.array([[4.0, 3.0, 2.5, 2.4], [3.5, 2.0, 1.0, jnp.nan]])
    f = compute_frontier(log_c, loss, jnp.array([0.5, 1.5, 2.5, 3.5, -1.0]))
    # 0.5: only curve 0 covers it (3.5); 1.5: both give 2.75; 2.5: curve 1 (1.5) beats curve 0 (2.75);
    # 3.5: past both curves' ends; -1.0: before both.
    np.testing.assert_allclose(f.loss[:4], [3.5, 2.75, 1.5, jnp.inf])
    assert [int(f.best[0]), int(f.best[2])] == [0, 1]
    assert list(np.asarray(f.valid)) == [True, True, True, False, False]


def test_power_law_fit_recovers_exact_law_and_ignores_zero_weights():
    x = jnp.logspace(10, 20, 50)
    y = 3e-4 * x**0.73
    law = fit_power_law(x, y)
    assert float(law.exponent) == pytest.approx(0.73, abs=1e-12)
    assert float(law.coefficient) == pytest.approx(3e-4, rel=1e-9)
    y_bad = y.at[:5].set(jnp.inf)
    weights = jnp.ones(50).at[:5].set(0.0)
    assert float(fit_power_law(x, y_bad, weights).exponent) == pytest.approx(0.73, abs=1e-12)
    np.testing.assert_allclose(law(x), y, rtol=1e-9)
