"""``compare``: how much better one recipe is than another, as an effective compute multiplier at
equal loss, with intervals, and whether the recipes share their exponents
(:mod:`jaxscale.planning.recipes`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from jaxscale._api._results import Figures, Result, rows
from jaxscale._api.runs import Runs, as_runs
from jaxscale.laws.law import Law
from jaxscale.planning.target_intervals import Interval
from jaxscale.planning.recipes import Multiplier, RecipeComparison
from jaxscale.support.significant import format_or_undefined as undefined_or


def _bounds(interval: Interval | None) -> dict[str, float]:
    if interval is None:
        return {"lower": np.nan, "upper": np.nan}
    return {"lower": interval.lower, "upper": interval.upper}


def _interval(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.lower, interval.upper]


@dataclass(frozen=True, repr=False)
class CompareReport(Result):
    """Compute multipliers of recipes against a baseline.

    Attributes:
        comparison: the grouped fit, every recipe's multiplier over the budgets with its bootstrap
            (and posterior) intervals, and the PSIS-LOO verdict on sharing when sampled.
        seconds: the verb's wall time.
    """

    comparison: RecipeComparison
    seconds: float

    def _multiplier(self, m: Multiplier, j: int) -> dict[str, Any]:
        return {"k": float(m.k[j]), "bootstrap95": None if m.bootstrap is None else _interval(m.bootstrap[j]),
                "posterior95": None if m.posterior is None else _interval(m.posterior[j]),
                "per_decade": m.change, "per_decade_bootstrap95": _interval(m.per_decade),
                "per_decade_posterior95": _interval(m.per_decade_posterior)}

    def _report(self) -> dict[str, Any]:
        c = self.comparison
        j = c.target_index
        out = {
            "law": c.law.name, "baseline": c.baseline, "recipes": list(c.labels), "shared": list(c.shared),
            "compute": c.budget, "runs_per_recipe": np.bincount(c.fit.data.group).tolist(),
            "multipliers": {label: self._multiplier(m, j) for label, m in c.multipliers.items()},
            "over_budgets": {"C": c.budgets.tolist(), **{label: m.k.tolist() for label, m in c.multipliers.items()}},
        }
        if c.sharing is not None:
            out["sharing"] = c.sharing
            out["unshared_multipliers"] = {label: self._multiplier(m, j) for label, m in c.unshared.items()}
        return {**out, "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """Per recipe: k at the target compute (95% bootstrap interval; posterior bounds beside when
        sampled) and its change over the decade centred there."""
        c = self.comparison
        j = c.target_index
        entries = []
        for label, m in c.multipliers.items():
            post = None if m.posterior is None else m.posterior[j]
            entries.append({"quantity": f"k({c.budget:.3g}) {label} / {c.baseline}", "estimate": m.k[j],
                            **_bounds(m.bootstrap[j]), "posterior_lower": _bounds(post)["lower"],
                            "posterior_upper": _bounds(post)["upper"]})
            entries.append({"quantity": f"k change per decade {label} / {c.baseline}",
                            "estimate": m.change,
                            **_bounds(m.per_decade), "posterior_lower": _bounds(m.per_decade_posterior)["lower"],
                            "posterior_upper": _bounds(m.per_decade_posterior)["upper"]})
        return rows(entries)

    def plot(self) -> Figures:
        """``compare``: the recipes' frontiers and k(C) with its bands."""
        from jaxscale.plots.planning import multiplier_figure

        return Figures(compare=multiplier_figure(self.comparison))

    def _title(self) -> str:
        c = self.comparison
        return f"CompareReport: {c.law.name} law, {', '.join(c.shared)} shared, against {c.baseline}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lines = [f"{numbers['law']} law, {', '.join(numbers['shared'])} shared; baseline {numbers['baseline']}; "
                 f"runs per recipe {numbers['runs_per_recipe']}"]
        for label, m in numbers["multipliers"].items():
            post = f"; posterior {_range(m['posterior95'])}" if m["posterior95"] else ""
            lines += [f"  k({numbers['compute']:.3g}) of {label}: {undefined_or(m['k'], '.4g')} "
                      f"(95% bootstrap {_range(m['bootstrap95'])}{post})",
                      f"    over the decade around it: {_times(m['per_decade'])} "
                      f"({_range(m['per_decade_bootstrap95'])})"]
        if "sharing" in numbers:
            s = numbers["sharing"]
            verdict = "fit" if s["shared_fits"] else "do not fit"
            lines.append(f"  PSIS-LOO: sharing the exponents, elpd {s['elpd_diff']:+.2f} +- {s['se']:.2f} against "
                         f"sharing none: the shared exponents {verdict} (rule: within {s['rule_se']:g} SE)")
            lines += [f"  without sharing, k of {label}: {undefined_or(m['k'], '.4g')} (95% posterior "
                      f"{_range(m['posterior95'])}), {_times(m['per_decade'])} per decade"
                      for label, m in numbers["unshared_multipliers"].items()]
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


def _times(factor: float | None) -> str:
    """A multiplier as text: "x1.23", or "undefined"."""
    text = undefined_or(factor, ".4g")
    return text if text == "undefined" else f"x{text}"


def _range(pair: list[float] | None) -> str:
    """An interval as text ("" where there is none; "unbounded" where a bound is undefined)."""
    if pair is None:
        return ""
    lo, hi = pair
    return "unbounded" if lo is None or hi is None else f"{lo:.3g} to {hi:.3g}"


def compare(baseline: Runs, candidate: Runs | Sequence[Runs] | None = None, *, group_by: str | None = None,
            names: Sequence[str] | None = None, compute: float = 1e22, law: str | Law = "chinchilla",
            bootstrap: int = 1000, seed: int = 0, bayes: bool = False, chains: int = 4,
            samples: int = 1000) -> CompareReport:
    """The effective compute multiplier k(C) = C_A / C of a recipe against a baseline A.

    Args:
        baseline: the baseline recipe's runs (a table, CSV path, DataFrame or a function
            returning a table); or, with ``group_by``, the runs of every recipe in one table.
        candidate: the other recipe's runs, or a list of several recipes' runs, each set against
            the baseline (not with ``group_by``).
        group_by: the column naming each run's recipe in ``baseline``: any number of recipes.
        names: the recipes' names, the baseline's first (default: recipe 1, recipe 2, ...), or which recipes of
            ``group_by`` to compare, the baseline first (default: all, in sorted order).
        compute: the target compute C.
        law: a law of N and D; its exponents are shared, its other coordinates each recipe's own.
        bootstrap, seed: resamples of the stratified bootstrap and their seed.
        bayes: also sample the grouped posterior (shared and unshared: posterior intervals and the
            PSIS-LOO test of sharing).
        chains, samples: NUTS' chains and draws per chain (warmup as many).

    Returns:
        A :class:`CompareReport`.
    """
    from jaxscale.inference.sample import NutsConfig
    from jaxscale.laws.registry import law_by_name
    from jaxscale.planning.recipes import RECIPE, compare_recipes, stacked

    start = time.perf_counter()
    if bootstrap < 2:
        raise ValueError(f"bootstrap must be >= 2 resamples, got {bootstrap}")
    if (candidate is None) == (group_by is None):
        raise ValueError("compare takes a baseline and a candidate table, or one table with group_by")
    chosen = law_by_name(law)
    if group_by is None:
        recipes = [baseline, *(candidate if isinstance(candidate, (list, tuple)) else [candidate])]
        labels = list(names) if names is not None else [f"recipe {i + 1}" for i in range(len(recipes))]
        if len(labels) != len(recipes) or len(set(labels)) != len(recipes):
            raise ValueError(f"names must name each of the {len(recipes)} recipes once, the baseline first; got {labels}")
        table, column, order = stacked({k: as_runs(v) for k, v in zip(labels, recipes)}), RECIPE, labels
    else:
        table, column, order = as_runs(baseline), group_by, names
    config = NutsConfig(chains=chains, warmup=samples, samples=samples, progress_bar=False) if bayes else None
    result = compare_recipes(table, column, compute, law=chosen, recipes=order, resamples=bootstrap, seed=seed,
                             bayes=config)
    return CompareReport(result, time.perf_counter() - start)
