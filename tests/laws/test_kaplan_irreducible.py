"""The law added without touching fit/, inference/ or cli/: Kaplan's Eq. 1.5 plus an
irreducible loss. It fits with `jaxscale fit --law`, samples with `jaxscale bayes --law` and
gives compute-optimal allocations through the generic solver."""

from __future__ import annotations

import contextlib
import io
import json

import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.laws import kaplan
from jaxscale.laws.kaplan_irreducible import LAW, KaplanIrreducibleParams
from jaxscale.optimum.allocation import optimal_allocation

TRUTH = KaplanIrreducibleParams(E=1.7, N_c=5e8, D_c=1e10, alpha_N=0.25, alpha_D=0.27)


def _formula(n, d, p):
    return p.E + ((p.N_c / n) ** (p.alpha_N / p.alpha_D) + p.D_c / d) ** p.alpha_D


def test_log_form_equals_the_equation_and_its_limits():
    n, d = np.geomspace(1e6, 1e12, 7), np.geomspace(1e8, 1e13, 7)
    with jax.enable_x64(True):
        np.testing.assert_allclose(LAW(n, d, TRUTH), _formula(n, d, TRUTH), rtol=1e-13)
        # E -> 0 is Kaplan's Eq. 1.5; N, D -> infinity leaves the floor E
        no_floor = TRUTH._replace(E=1e-300)
        np.testing.assert_allclose(LAW(n, d, no_floor), kaplan.loss_nd(n, d, kaplan.KaplanNDParams(*TRUTH[1:])),
                                   rtol=1e-13)
        assert float(LAW(1e250, 1e250, TRUTH)) == pytest.approx(TRUTH.E, rel=1e-12)


def _runs_csv(tmp_path, noise=0.0, seed=0):
    n, d = (g.ravel() for g in np.meshgrid(np.geomspace(1e7, 1e10, 9), np.geomspace(1e9, 1e12, 9)))
    with jax.enable_x64(True):
        loss = np.asarray(LAW(n, d, TRUTH)) * np.exp(noise * np.random.default_rng(seed).standard_normal(n.size))
    path = tmp_path / "runs.csv"
    pd.DataFrame({"params": n, "tokens": d, "loss": loss}).to_csv(path, index=False)
    return path


def _cli_json(argv):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


def test_fit_command_recovers_the_law(tmp_path):
    result = _cli_json(["fit", str(_runs_csv(tmp_path)), "--law", "kaplan-irreducible", "--json"])
    assert result["law"] == "kaplan-irreducible"
    for name, value in TRUTH._asdict().items():
        assert result[name] == pytest.approx(value, rel=1e-4), name
    assert len(result["allocation"]["N"]) == 1


@pytest.mark.slow
def test_bayes_command_covers_the_truth(tmp_path):
    result = _cli_json(["bayes", str(_runs_csv(tmp_path, noise=0.01)), "--law", "kaplan-irreducible",
                        "--laplace", "--json"])
    for name, value in TRUTH._asdict().items():
        lo, hi = result["posterior"][name]["hdi95"]
        assert lo <= value <= hi, (name, lo, hi)
    assert result["reconciled_exponent"] is None and "undefined for the kaplan-irreducible law" in (
        result["reconciled_exponent_undefined"])


def test_compute_optimal_size_is_the_grid_minimum():
    """The generic solver against brute force: the loss along C = 6ND on a fine grid of N."""
    budgets = np.array([1e19, 1e22, 1e25])
    best = optimal_allocation(LAW, TRUTH, budgets)
    for c, n_star in zip(budgets, best.n):
        n = np.geomspace(n_star / 30, n_star * 30, 200_001)
        brute = n[np.argmin(_formula(n, c / (6 * n), TRUTH))]
        assert n_star == pytest.approx(brute, rel=1e-4)
    np.testing.assert_allclose(6 * best.n * best.d, budgets, rtol=1e-12)
