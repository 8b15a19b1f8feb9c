"""Do two datasets share their exponents? The grouped model answers from synthetic runs whose truth is known."""

from __future__ import annotations

import contextlib
import io
import json
import warnings

import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.inference import grouped
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws import chinchilla
from jaxscale.tables.table import read_runs_table

#: Each dataset's N-term A / N^alpha is the same at N = 10^8.75, so that the datasets differ in
#: the slope alone; E and the data term are common.
PIVOT = 10 ** 8.75
TERM = 0.4
CONFIG = NutsConfig(chains=2, warmup=250, samples=250, progress_bar=False)


def frame(alphas: tuple[float, ...], seed: int = 0) -> pd.DataFrame:
    """A 5 x 5 grid of (N, D) per dataset, dataset k with exponent alphas[k], 0.5% log noise."""
    rng = np.random.default_rng(seed)
    n, d = (g.ravel() for g in np.meshgrid(np.logspace(7, 10.5, 5), np.logspace(9, 11.5, 5)))
    parts = []
    for k, alpha in enumerate(alphas):
        truth = chinchilla.ChinchillaParams(A=TERM * PIVOT**alpha, B=1500.0, E=1.8, alpha=alpha, beta=0.32)
        with jax.enable_x64(True):
            loss = np.asarray(chinchilla.loss(n, d, truth)) * np.exp(0.005 * rng.standard_normal(n.size))
        parts.append(pd.DataFrame({"n_total": n, "tokens": d, "loss": loss, "source": f"set{k}"}))
    return pd.concat(parts, ignore_index=True)


def sharing(alphas: tuple[float, ...]) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: ESS warnings are expected and not what is tested
        comparison = grouped.compare_sharing(read_runs_table(frame(alphas)), "source", ("alpha", "beta"), config=CONFIG)
    return grouped.sharing_report(comparison)


@pytest.fixture(scope="module")
def same() -> dict:
    return sharing((0.34, 0.34))


@pytest.fixture(scope="module")
def different() -> dict:
    return sharing((0.3, 0.5))


# Four NUTS runs (two models on each of two tables): 3.5 min on the loaded 2-core VM, so slow.
@pytest.mark.slow
def test_same_exponents_are_shared(same):
    shared = next(name for name in same["ranking"] if name != grouped.NOTHING_SHARED)
    unshared = same["ranking"][grouped.NOTHING_SHARED]
    # the shared model is not worse: it ranks first, or trails by less than two standard errors
    assert same["best"] == shared or unshared["elpd_diff"] < 2 * unshared["dse"]
    for name in ("alpha", "beta"):
        lo, hi = same["differences_unshared"][name]["set0 - set1"]["hdi95"]
        assert lo < 0 < hi


@pytest.mark.slow
def test_different_exponents_are_told_apart(different):
    shared = next(name for name in different["ranking"] if name != grouped.NOTHING_SHARED)
    assert different["best"] == grouped.NOTHING_SHARED
    assert different["ranking"][shared]["elpd_diff"] > 2 * different["ranking"][shared]["dse"]
    alpha = different["differences_unshared"]["alpha"]["set0 - set1"]
    assert alpha["hdi95"][1] < 0 and alpha["p_positive"] < 0.025
    assert abs(alpha["median"] - (0.3 - 0.5)) < 0.05
    lo, hi = different["differences_unshared"]["beta"]["set0 - set1"]["hdi95"]
    assert lo < 0 < hi  # beta is common to both: its difference covers 0


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "runs.csv"
    frame((0.34, 0.34)).to_csv(path, index=False)
    return path


def test_unknown_coordinate_is_named(csv, capsys):
    assert main(["bayes", str(csv), "--group-by", "source", "--share", "alpha,gamma"]) == 2
    err = capsys.readouterr().err
    assert "'gamma'" in err and "log_A" in err and "Traceback" not in err


def test_missing_group_column_is_named(csv, capsys):
    assert main(["bayes", str(csv), "--group-by", "dataset"]) == 2
    err = capsys.readouterr().err
    assert "'dataset'" in err and "source" in err and "Traceback" not in err


def test_share_needs_group_by(csv, capsys):
    assert main(["bayes", str(csv), "--share", "alpha"]) == 2
    assert "share needs --group-by" in capsys.readouterr().err
    assert main(["bayes", str(csv), "--group-by", "source", "--laplace"]) == 2
    assert "--group-by samples one grouped model" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_reports_the_differences_of_the_varying_coordinates(csv, tmp_path):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["bayes", str(csv), "--group-by", "source", "--share", "log_A,log_B,log_E", "--chains", "2",
                     "--warmup", "100", "--samples", "100", "--no-progress", "--json", "--out", str(tmp_path / "out")])
    assert code == 0
    out = json.loads(buf.getvalue())
    assert out["shared"] == ["log_A", "log_B", "log_E"] and out["groups"] == ["set0", "set1"]
    assert set(out["differences"]) >= {"alpha", "beta", "a"}  # the exponents vary, so does a = beta/(alpha+beta)
    assert not {"log_A", "log_B", "log_E"} & set(out["differences"])
    assert {"alpha[set0]", "alpha[set1]", "log_E"} <= set(out["posterior"])
    assert {p.rsplit("/", 1)[-1] for p in out["files"]} == {"predictive_share_log_A-log_B-log_E.png",
                                                             "posterior_share_log_A-log_B-log_E.nc"}
