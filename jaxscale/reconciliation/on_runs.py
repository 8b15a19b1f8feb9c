"""Pearce & Song (2024) on a user's own runs: does the embedding effect explain the exponents?

For a runs table with both parameter bases (total N_T and non-embedding N_\\E) and run identity:

1. **Observed.** Approach 1 (:func:`jaxscale.fitting.approach1.fit_approach1`) on each basis, with
   95% intervals from resampling runs: N*_T ∝ C_T^a_T and N*_\\E ∝ C_\\E^a_\\E.
2. **Step 1 on the table.** γ, δ of Eq. 7, N_T = N_\\E + γ N_\\E^δ, fitted to the table's own
   model sizes (:func:`jaxscale.reconciliation.pipeline.fit_gamma_delta`), not to Chinchilla's Table A9.
3. **Steps 2-4 on the table.** The Chinchilla law fitted to the table's finished, tuned runs
   (Approach 3 on total parameters: the last checkpoint of every run and, at each (N, D), the
   run of lowest loss, i.e. the best learning rate of a sweep), written in non-embedding terms (Eq. 15 with
   the table's γ, δ), and Pearce & Song's Step-4 simulation over the table's size range: 20
   models log-spaced between its smallest and largest N_\\E, the Method-1 frontier on each basis
   and the power law fitted to it. The *predicted* exponents, with intervals over bootstrap
   refits of the law, are set beside the observed ones, and so is the *shift* a_\\E - a_T that
   the change of basis causes, which is the effect Pearce & Song explain.

**The simulated budget window** (decided once, the same for every table): on each basis, the
budgets at which the compute-optimal size of the fitted law lies inside the table's size range,
from the budget at which its smallest model is optimal to the one at which its largest is
(:func:`jaxscale.optimum.solver.optimal_log_compute`; for the non-embedding basis under Eq. 15, for the
total basis under the law itself). Outside that window the simulated frontier would sit on the
smallest or largest model, which the table cannot show either.

**Refused tables** (one line each, before the work they would break): no run identity; runs of
one checkpoint each (Approach 1's frontier is the envelope of training curves: last checkpoints
alone have none); a Chinchilla law fitted to the table whose exponents are not both positive
(Step 4 simulates a loss that falls with N and D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.intervals import interval
from jaxscale.core.numerics import float64
from jaxscale.fitting.approach1 import fit_approach1
from jaxscale.fitting.approach3 import FitResult, fit_approach3
from jaxscale.fitting.bootstrap import bootstrap
from jaxscale.fitting.frontier_laws import FrontierLaws
from jaxscale.laws import chinchilla, pearce_song
from jaxscale.optimum import solver as optimal
from jaxscale.reconciliation.per_draw import reconciled_exponents
from jaxscale.reconciliation.pipeline import EmbeddingFit, fit_gamma_delta
from jaxscale.reconciliation.synthetic_curves import SimulationConfig, Step4, simulate_step4
from jaxscale.tables.table import RunsTable, best_per_size_and_tokens, final_checkpoints


@dataclass(frozen=True)
class RunsReconciliation:
    """Observed and predicted frontier exponents of one runs table, and what they came from."""

    observed_total: FrontierLaws
    observed_nonembedding: FrontierLaws
    embedding: EmbeddingFit
    sizes: tuple[np.ndarray, np.ndarray]  # (N_T, N_\E) of every distinct model of the table
    law: FitResult  # Chinchilla law on the last checkpoints of the tuned runs, total basis
    config: SimulationConfig
    step4: Step4  # the simulation at the fitted law
    predicted_draws: tuple[np.ndarray, np.ndarray]  # (total, non-embedding) exponent of every refit


def model_sizes(table: RunsTable) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (N_T, N_\\E) pairs of the table's models."""
    if table.n_nonembedding is None:
        raise ValueError("the reconciliation needs both bases: the table has no non-embedding size column")
    pairs = np.unique(np.stack([table.n, table.n_nonembedding], axis=1), axis=0)
    if len(pairs) < 3:
        raise ValueError(f"the table has {len(pairs)} model sizes; fitting N_T = N_E + gamma N_E^delta needs 3")
    return pairs[:, 0], pairs[:, 1]


@float64
def table_embedding(table: RunsTable) -> EmbeddingFit:
    """Step 1 on the table: gamma, delta of Eq. 7, N_T = N_\\E + gamma N_\\E^delta, fitted to its
    own model sizes (:func:`model_sizes`), as floats."""
    return jax.tree.map(float, fit_gamma_delta(*model_sizes(table)))


@float64
def simulation_config(law: chinchilla.ChinchillaParams, embedding: EmbeddingFit,
                      n_nonembedding: np.ndarray) -> SimulationConfig:
    """The Step-4 grids over the table's size range, with the budget windows of the module
    docstring (log10 C at which the smallest and the largest model are compute-optimal)."""
    lo, hi = np.log(n_nonembedding.min()), np.log(n_nonembedding.max())
    q = pearce_song.with_embedding(law, embedding.gamma, embedding.delta)
    log_n_total = np.log(np.exp([lo, hi]) + float(embedding.gamma) * np.exp([lo, hi]) ** float(embedding.delta))
    windows = {
        basis: tuple(float(v) / math.log(10) for v in optimal.optimal_log_compute(f, p, jnp.asarray(x)))
        for basis, f, p, x in (("nonembedding", pearce_song.LAW, q, [lo, hi]),
                               ("total", chinchilla.LAW, law, log_n_total))
    }
    return SimulationConfig(log10_n_nonembedding=(lo / math.log(10), hi / math.log(10)),
                            log10_budget_total=windows["total"],
                            log10_budget_nonembedding=windows["nonembedding"])


@float64
def reconcile_runs(table: RunsTable, *, bootstrap_resamples: int = 200, seed: int = 0) -> RunsReconciliation:
    """Observed (Approach 1) and predicted (Pearce & Song Section 2 with the table's own law and
    embedding relation) exponents on both bases; see the module docstring."""
    if table.run_id is None:
        raise ValueError("the reconciliation needs run identity: a run_id column, or --run-by COLS naming "
                         "the columns that together name a run")
    n_total, n_nonembedding = model_sizes(table)
    _, checkpoints = np.unique(table.run_id, return_counts=True)
    if checkpoints.max() < 2:
        raise ValueError(f"each of the {len(checkpoints)} runs holds one checkpoint: the reconciliation compares "
                         "Approach 1's frontier of training curves, which needs each run's checkpoints (its curve), "
                         "not its final loss alone")
    observed = {basis: fit_approach1(table, basis=basis, bootstrap=bootstrap_resamples, seed=seed)
                for basis in ("total", "nonembedding")}
    embedding = table_embedding(table)
    law = fit_approach3(best_per_size_and_tokens(final_checkpoints(table)), law=chinchilla.LAW)
    falling = {name: float(getattr(law.params, name)) for name in ("alpha", "beta")}
    if min(falling.values()) <= 0:
        raise ValueError("the Chinchilla law fitted to the table's final runs has "
                         + ", ".join(f"{k} = {v:.3g}" for k, v in falling.items())
                         + ": Step 4 simulates a loss that falls with N and D, so both must be > 0")
    config = simulation_config(law.params, embedding, n_nonembedding)
    step4 = simulate_step4(law.params, embedding.gamma, embedding.delta, config)
    refits = bootstrap(law, bootstrap_resamples, seed=seed)
    predicted = reconciled_exponents(refits.parameter_draws.used, embedding, config)
    return RunsReconciliation(
        observed_total=observed["total"], observed_nonembedding=observed["nonembedding"], embedding=embedding,
        sizes=(n_total, n_nonembedding), law=law, config=config, step4=step4,
        predicted_draws=(predicted.total, predicted.nonembedding),
    )


def _interval(draws: np.ndarray) -> list[float]:
    return [float(bound) for bound in interval(draws)]


def summary(result: RunsReconciliation) -> dict[str, Any]:
    """The headline numbers as a JSON-ready dict."""
    observed = {basis: {"a": fit.a, "ci95": None if fit.a_interval is None else list(fit.a_interval),
                        "frontier_sizes": len(fit.sizes)}
                for basis, fit in (("total", result.observed_total), ("nonembedding", result.observed_nonembedding))}
    total, nonembedding = result.predicted_draws
    predicted = {
        "total": {"a": float(result.step4.total.fit.exponent), "ci95": _interval(total)},
        "nonembedding": {"a": float(result.step4.nonembedding.fit.exponent), "ci95": _interval(nonembedding)},
        "shift": {"a": float(result.step4.nonembedding.fit.exponent - result.step4.total.fit.exponent),
                  "ci95": _interval(nonembedding - total)},
    }
    defined = None not in (result.observed_total.a, result.observed_nonembedding.a)
    observed["shift"] = {"a": result.observed_nonembedding.a - result.observed_total.a if defined else None}
    return {
        "models": len(result.sizes[0]),
        "gamma": float(result.embedding.gamma), "delta": float(result.embedding.delta),
        "law": {**result.law.summary(), "n_points": result.law.n_points},
        "budget_window_log10": {"total": list(result.config.log10_budget_total),
                                "nonembedding": list(result.config.log10_budget_nonembedding)},
        "observed": observed, "predicted": predicted,
    }
