"""How much better is one recipe than another: compute multipliers with intervals, and whether
the recipes share their exponents.

Runs of two or more recipes (data, architecture, optimiser; or two extractions of one figure) are
fitted with one law whose exponents are shared and whose other coordinates (for Chinchilla's law
log A, log B, log E) are each recipe's own: the grouped Approach-3 fit
(:mod:`jaxscale.fitting.grouped`) and, optionally, the grouped posterior
(:mod:`jaxscale.inference.grouped`). Against a baseline recipe A, every other recipe B has the
effective compute multiplier k(C) = C_A / C at equal loss (:mod:`jaxscale.planning.multiplier`)
at the target compute C and over a range of budgets, with

- a 95% bootstrap interval: percentiles of k over the refits of :data:`RESAMPLES` stratified
  resamples (runs resampled within each recipe, :func:`jaxscale.fitting.grouped.grouped_bootstrap`);
- a 95% posterior interval: equal-tailed, over the NUTS draws of the grouped model with the same
  coordinates shared (when asked for: it samples two models, below).

Either is unbounded (never a number) when more than 5% of its draws leave k undefined
(:data:`jaxscale.planning.target_intervals.MAX_UNDEFINED`).

**Do shared exponents fit?** PSIS-LOO of the model that shares the exponents against the model
that shares nothing (:func:`jaxscale.inference.grouped.compare_sharing`). Declared rule: sharing
is rejected when its elpd_loo falls behind the unshared model's by more than
:data:`LOO_STANDARD_ERRORS` standard errors of the difference. Either way the report says how k
changes over the decade centred on C (k(C sqrt 10) / k(C / sqrt 10)): under shared exponents it
changes only through the recipes' own E; without sharing, the unshared model's multiplier and its
change per decade are reported beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import numpy as np
import pandas as pd
from jax.typing import ArrayLike

from jaxscale.core.validation import check_positive
from jaxscale.fitting.grouped import GroupedOptimum, fit_grouped, grouped_bootstrap
from jaxscale.inference.grouped import NOTHING_SHARED, compare_sharing
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law
from jaxscale.optimum.allocation import check_nd
from jaxscale.planning.target_intervals import Interval, percentile_interval
from jaxscale.planning.multiplier import multipliers, per_decade
from jaxscale.tables.table import RunsTable, group_index, read_runs_table

RESAMPLES = 1000
LEVEL = 0.95
#: Sharing is rejected when its elpd_loo is behind by more than this many standard errors.
LOO_STANDARD_ERRORS = 2.0
#: The column naming each run's recipe in a table stacked from several (:func:`stacked`).
RECIPE = "recipe"


def stacked(tables: Mapping[str, RunsTable]) -> RunsTable:
    """One runs table of several, each row's recipe (the key) in the column :data:`RECIPE`."""
    if len(tables) < 2:
        raise ValueError(f"comparing recipes needs two or more tables; got {len(tables)}")
    frames = [table.frame.drop(columns=[RECIPE], errors="ignore").assign(**{RECIPE: label})
              for label, table in tables.items()]
    return read_runs_table(pd.concat(frames, ignore_index=True))


class Multiplier(NamedTuple):
    """One recipe's multiplier against the baseline: ``k`` [C] over the budgets (at the fit; for a
    model sampled only, the posterior median), its 95% ``bootstrap`` and ``posterior`` intervals
    at each budget, and its change over the decade centred on the target with its bootstrap and
    posterior intervals (``per_decade``, ``per_decade_posterior``); None where there are no such
    draws."""

    k: np.ndarray
    bootstrap: tuple[Interval, ...] | None
    posterior: tuple[Interval, ...] | None
    per_decade: Interval | None
    per_decade_posterior: Interval | None

    @property
    def change(self) -> float:
        """k(C sqrt 10) / k(C / sqrt 10) at the fit (or the posterior median)."""
        return (self.per_decade or self.per_decade_posterior).estimate


@dataclass(frozen=True)
class RecipeComparison:
    """Multipliers of every recipe against the baseline.

    Attributes:
        law: the law fitted.
        labels: the recipes, the baseline first.
        shared: the coordinates shared by every recipe.
        budget: the target compute C.
        budgets: [C] the budgets k is given at (the target among them).
        fit: the grouped Approach-3 fit.
        multipliers: per recipe other than the baseline, its :class:`Multiplier`.
        unshared: per recipe, the multiplier of the model sharing nothing (posterior only), when sampled.
        sharing: the PSIS-LOO comparison of sharing against sharing nothing, when sampled:
            elpd_loo difference (shared - unshared), its standard error and whether sharing holds
            by the declared rule.
    """

    law: Law
    labels: tuple[str, ...]
    shared: tuple[str, ...]
    budget: float
    budgets: np.ndarray
    fit: GroupedOptimum
    multipliers: dict[str, Multiplier]
    unshared: dict[str, Multiplier] | None
    sharing: dict[str, Any] | None

    @property
    def baseline(self) -> str:
        return self.labels[0]

    @property
    def target_index(self) -> int:
        return int(np.argmin(np.abs(np.log(self.budgets / self.budget))))


def _draws_of(params: NamedTuple, g: int) -> NamedTuple:
    """Group g's parameters of every draw, from [S, G] fields."""
    return jax.tree.map(lambda v: np.asarray(v)[:, g], params)


def _intervals(k_draws: np.ndarray, k: np.ndarray) -> tuple[Interval, ...]:
    """Per budget, the central 95% interval of log k over the draws ([S, C])."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(k_draws)
    return tuple(percentile_interval(float(k[j]), logs[:, j], LEVEL, True) for j in range(len(k)))


def _decade_interval(trend: np.ndarray, estimate: float) -> Interval:
    """The central 95% interval of k's change over the decade ([S] draws of the ratio)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return percentile_interval(estimate, np.log(trend), LEVEL, True)


def _multiplier(law: Law, budgets: np.ndarray, budget: float, at: tuple[NamedTuple, NamedTuple],
                boot: tuple[NamedTuple, NamedTuple], post: tuple[NamedTuple, NamedTuple] | None) -> Multiplier:
    """k at the fit ``at`` over ``budgets``, with intervals over the bootstrap and posterior draws."""
    k = multipliers(law, *at, budgets)
    change = float(per_decade(law, *at, budget).per_decade)

    def spread(draws: tuple[NamedTuple, NamedTuple]) -> tuple[tuple[Interval, ...], Interval]:
        return (_intervals(multipliers(law, *draws, budgets), k),
                _decade_interval(per_decade(law, *draws, budget).per_decade, change))

    boot_k, boot_change = spread(boot)
    post_k, post_change = (None, None) if post is None else spread(post)
    return Multiplier(k, boot_k, post_k, boot_change, post_change)


def _posterior_only(law: Law, budgets: np.ndarray, budget: float, draws: tuple[NamedTuple, NamedTuple]) -> Multiplier:
    """A multiplier from posterior draws alone (no point fit): medians over the draws."""
    k_draws = multipliers(law, *draws, budgets)
    k = np.nanmedian(k_draws, axis=0)
    change = per_decade(law, *draws, budget).per_decade
    return Multiplier(k, None, _intervals(k_draws, k), None, _decade_interval(change, float(np.nanmedian(change))))


def default_budgets(runs: RunsTable, budget: float) -> np.ndarray:
    """Budgets from a tenth of the smallest run's compute to ten times the larger of the target
    and the largest run's, four per decade, with the target itself."""
    lo, hi = np.log10(np.min(runs.c)) - 1, np.log10(max(np.max(runs.c), budget)) + 1
    return np.unique(np.append(10.0 ** np.arange(np.floor(lo * 4) / 4, hi + 1e-9, 0.25), budget))


def compare_recipes(runs: RunsTable, column: str, budget: float, *, law: Law = chinchilla.LAW,
                    recipes: Sequence[str] | None = None, shared: Sequence[str] | None = None,
                    budgets: ArrayLike | None = None, resamples: int = RESAMPLES, seed: int = 0,
                    bayes: NutsConfig | None = None) -> RecipeComparison:
    """Compute multipliers of recipes against a baseline (module docstring).

    Args:
        runs: runs of every recipe, each row's recipe in ``column``.
        column: the column naming each run's recipe.
        budget: the target compute C (FLOP) of the recipes compared.
        law: a law of N and D.
        recipes: which recipes, the baseline first (default: every one, in sorted order).
        shared: the coordinates shared (default: the law's exponents).
        budgets: where k is given besides the target (default :func:`default_budgets`).
        resamples, seed: the stratified bootstrap.
        bayes: NUTS settings: sample the grouped posterior (shared and unshared) for posterior
            intervals and the PSIS-LOO test of sharing; None: the bootstrap only.

    Returns:
        The :class:`RecipeComparison`.
    """
    check_nd(law)
    check_positive("budget", budget)
    if resamples < 2:
        raise ValueError(f"resamples must be >= 2, got {resamples}")
    index, labels = group_index(runs, column)
    order = list(labels) if recipes is None else list(recipes)
    missing = [r for r in order if r not in labels]
    if missing or len(set(order)) < 2:
        raise ValueError(f"recipes must name two or more of the {column!r} values {list(labels)}; got {order}")
    keep = np.isin(index, [labels.index(r) for r in order])
    runs = runs.select(keep)
    group = np.array([order.index(labels[i]) for i in index[keep]])
    shared = tuple(law.exponent_names if shared is None else shared)
    if budgets is None:
        budgets = default_budgets(runs, budget)
    else:
        budgets = np.unique(np.append(np.asarray(budgets, float), budget))
    check_positive("budgets", budgets)
    fit = fit_grouped(runs, group, order, shared, law)
    refits = grouped_bootstrap(fit, resamples, seed)
    boot = law.from_vector(np.where(refits.converged[:, None, None], refits.vectors, np.nan))
    posterior = unshared = sharing = None
    if bayes is not None:
        posterior, unshared, sharing = _bayes(runs, column, order, shared, law, bayes)
    at = fit.law.from_vector(fit.vectors)
    out, out_unshared = {}, {}
    for g, label in enumerate(order[1:], start=1):
        post = None if posterior is None else (_draws_of(posterior, 0), _draws_of(posterior, g))
        out[label] = _multiplier(law, budgets, budget, (_at(at, 0), _at(at, g)),
                                 (_draws_of(boot, 0), _draws_of(boot, g)), post)
        if unshared is not None:
            free = (_draws_of(unshared, 0), _draws_of(unshared, g))
            out_unshared[label] = _posterior_only(law, budgets, budget, free)
    return RecipeComparison(law=law, labels=tuple(order), shared=fit.layout.shared, budget=float(budget),
                            budgets=budgets, fit=fit, multipliers=out,
                            unshared=out_unshared if unshared is not None else None, sharing=sharing)


def _at(params: NamedTuple, g: int) -> NamedTuple:
    return jax.tree.map(lambda v: float(np.asarray(v)[g]), params)


def _bayes(runs: RunsTable, column: str, order: list[str], shared: tuple[str, ...], law: Law,
           config: NutsConfig) -> tuple[NamedTuple, NamedTuple, dict[str, Any]]:
    """The grouped posteriors sharing ``shared`` and sharing nothing (their parameters [S, G]
    with the groups in ``order``) and the PSIS-LOO verdict on sharing."""
    comparison = compare_sharing(runs, column, shared, law, config)
    name = next(k for k in comparison.fits if k != NOTHING_SHARED)
    fits = comparison.fits
    permute = [fits[name].labels.index(label) for label in order]

    def reorder(params: NamedTuple) -> NamedTuple:
        return jax.tree.map(lambda v: np.asarray(v)[:, permute], params)

    table = comparison.table
    diff = float(table.loc[name, "elpd_loo"] - table.loc[NOTHING_SHARED, "elpd_loo"])
    se = float(table["dse"].max())
    verdict = {"elpd_diff": diff, "se": se, "rule_se": LOO_STANDARD_ERRORS,
               "shared_fits": bool(diff >= -LOO_STANDARD_ERRORS * se)}
    return reorder(fits[name].params), reorder(fits[NOTHING_SHARED].params), verdict
