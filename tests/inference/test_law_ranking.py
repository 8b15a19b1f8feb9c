"""Comparing laws by PSIS-LOO: the law that made the data ranks first."""

from __future__ import annotations

import contextlib
import io
import json

import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.laws import chinchilla

TRUTH = chinchilla.ChinchillaParams(A=400.0, B=1500.0, E=1.8, alpha=0.34, beta=0.32)


@pytest.mark.slow
def test_loo_ranks_the_true_law_first(tmp_path):
    rng = np.random.default_rng(0)
    n, d = (g.ravel() for g in np.meshgrid(np.logspace(7.5, 10, 8), np.logspace(9, 11.5, 8)))
    with jax.enable_x64(True):
        loss = np.asarray(chinchilla.loss(n, d, TRUTH)) * np.exp(0.01 * rng.standard_normal(n.size))
    path = tmp_path / "runs.csv"
    pd.DataFrame({"n_total": n, "tokens": d, "loss": loss}).to_csv(path, index=False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["bayes", str(path), "--compare", "kaplan,chinchilla", "--chains", "2", "--warmup", "300",
                     "--samples", "300", "--no-progress", "--json", "--out", str(tmp_path / "out")])
    assert code == 0
    out = json.loads(buf.getvalue())
    ranking = out["ranking"]
    assert out["best"] == "chinchilla" and ranking["chinchilla"]["rank"] == 0
    assert ranking["kaplan"]["elpd_diff"] > 2 * ranking["kaplan"]["dse"]  # clearly worse, not by chance
    assert {p.rsplit("/", 1)[-1] for p in out["files"]} == {"predictive_chinchilla.png", "predictive_kaplan.png"}


def test_compare_needs_two_laws(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    pd.DataFrame({"n_total": [1e8, 2e8, 4e8, 8e8, 1.6e9], "tokens": [1e9, 2e9, 4e9, 8e9, 1.6e10],
                  "loss": [3.0, 2.9, 2.8, 2.7, 2.6]}).to_csv(path, index=False)
    assert main(["bayes", str(path), "--compare", "chinchilla"]) == 2
    assert "at least two different laws" in capsys.readouterr().err
    assert main(["bayes", str(path), "--compare", "chinchilla,kaplan", "--laplace"]) == 2
    assert "compare samples every law" in capsys.readouterr().err


def test_compare_refuses_before_sampling_when_the_pointwise_likelihood_would_not_fit(tmp_path, capsys, monkeypatch):
    from jaxscale.inference import law_ranking, refit

    monkeypatch.setattr(refit, "POINTWISE_TERMS", 4 * 100 * 63)  # 4 chains x 100 samples x 63 runs: one run too many
    monkeypatch.setattr(law_ranking, "sample_posterior", lambda *a, **k: pytest.fail("sampled"))
    n, d = (g.ravel() for g in np.meshgrid(np.logspace(7.5, 10, 8), np.logspace(9, 11.5, 8)))
    path = tmp_path / "runs.csv"
    pd.DataFrame({"n_total": n, "tokens": d, "loss": 2.0 + 1e3 / n**0.3 + 1e3 / d**0.3}).to_csv(path, index=False)
    code = main(["bayes", str(path), "--compare", "kaplan,chinchilla", "--samples", "100", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "PSIS-LOO needs the log likelihood of every draw at every run: 400 x 64 values" in err
    assert refit.keeps_pointwise(refit.NutsConfig(chains=4, samples=100), 63)
