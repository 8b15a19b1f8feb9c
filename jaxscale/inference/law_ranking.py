"""Which law fits these runs better? Laws ranked by their expected predictive accuracy.

Each law is sampled on the same runs (:func:`jaxscale.inference.refit.sample_posterior`) and
scored by PSIS-LOO (Vehtari, Gelman & Gabry 2017): the expected log pointwise predictive density
of every run when it is left out, elpd_loo = sum_i log p(y_i | y_-i), estimated from the one
posterior by Pareto-smoothed importance sampling. ArviZ's ``compare`` ranks the laws, with the
difference in elpd to the best and its standard error, and stacking weights. The estimate of a run
is unreliable where the Pareto shape k of its importance weights exceeds 0.7 (such a run is highly
influential: refit without it to be sure); the count of those runs is reported per law.

The likelihood is the one every law shares (Student-t on log loss, :mod:`jaxscale.inference.law_model`),
so the elpd of different laws are comparable: same data, same transformation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import arviz as az
import numpy as np
import pandas as pd

from jaxscale.inference.refit import check_pointwise, sample_posterior
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Above this Pareto shape the PSIS estimate of a run's elpd is unreliable (Vehtari et al. 2024).
PARETO_K_MAX = 0.7


@dataclass(frozen=True)
class Comparison:
    """The posterior of every law, ArviZ's comparison table and each law's Pareto shapes."""

    fits: dict[str, Any]  # BayesFit, or GroupedFit (jaxscale.inference.grouped)
    table: pd.DataFrame
    pareto_k: dict[str, np.ndarray]


def compare_laws(runs: RunsTable, laws: Sequence[Law], config: NutsConfig = NutsConfig()) -> Comparison:
    """NUTS for every law on ``runs``, then PSIS-LOO and the ranking."""
    chosen = list(laws)
    if len({law.name for law in chosen}) < 2:
        raise ValueError(f"--compare needs at least two different laws; got {[law.name for law in chosen]}")
    check_pointwise(config, len(runs))
    return rank_by_loo({law.name: sample_posterior(runs, law, config) for law in chosen})


def rank_by_loo(fits: Mapping[str, Any]) -> Comparison:
    """PSIS-LOO of every sampled model (``fits``: name -> a fit with ``idata`` holding the
    pointwise log likelihood of the same runs) and ArviZ's ranking."""
    loo = {name: az.loo(fit.idata, pointwise=True) for name, fit in fits.items()}
    table = az.compare({name: fit.idata for name, fit in fits.items()}, ic="loo")
    return Comparison(fits=dict(fits), table=table,
                      pareto_k={name: np.asarray(v.pareto_k) for name, v in loo.items()})


def report(comparison: Comparison) -> dict[str, Any]:
    """The ranking as a JSON-ready dict: per law, elpd_loo and its SE, p_loo, the difference to
    the best and its SE, the stacking weight, the Pareto-k diagnostics, the divergences and the
    largest R-hat."""
    rows = {}
    for name, row in comparison.table.iterrows():
        k = comparison.pareto_k[name]
        rows[name] = {
            "rank": int(row["rank"]), "elpd_loo": float(row["elpd_loo"]), "se": float(row["se"]),
            "p_loo": float(row["p_loo"]), "elpd_diff": float(row["elpd_diff"]), "dse": float(row["dse"]),
            "weight": float(row["weight"]), "pareto_k_max": float(np.max(k)),
            "pareto_k_above": int(np.sum(k > PARETO_K_MAX)),
            "divergences": comparison.fits[name].diagnostics.divergences,
            "r_hat_max": max(comparison.fits[name].diagnostics.r_hat.values()),
        }
    return {"ranking": rows, "best": comparison.table.index[0], "pareto_k_threshold": PARETO_K_MAX}
