"""``fit``: a scaling law fitted to runs by Hoffmann et al.'s Approach 3, with intervals; ``frontier``:
the compute-efficient frontier of Approaches 1 and 2."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from jaxscale._api._results import Figures, Result, bounds, rows
from jaxscale._api.runs import Runs, as_runs
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.bootstrap import BootstrapResult
from jaxscale.fitting.frontier_laws import FrontierLaws
from jaxscale.determinacy.identifiability import Identifiability, identifiability_text
from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable
from jaxscale.support.atomic import atomic_path

#: Hoffmann et al.'s (2022) approaches that :func:`frontier` runs.
APPROACHES = (1, 2)
#: How :func:`fit` minimises the Huber objective: Approach 3's multistart L-BFGS, or variable
#: projection (:mod:`jaxscale.fitting.vpnls`), which reaches the same optimum.
METHODS = ("approach3", "vpnls")
#: How a holdout chooses the fit that predicts the runs held out (:func:`fit`).
HOLDOUT_RULES = ("published", "nested")
#: Runs proposed where the runs leave a quantity undetermined (:func:`identified`).
SUGGESTED_RUNS = 3


@dataclass(frozen=True, repr=False)
class FitReport(Result):
    """A law fitted by Approach 3 (Huber loss, multistart L-BFGS; Hoffmann et al. Eq. 3), with
    its bootstrap refits, its compute-optimal allocation and the optional checks.

    Attributes:
        fit: the best fit (the law's parameters in ``fit.params``).
        refits: the bootstrap refits (None without a bootstrap).
        allocation: N*(C), D*(C) and D*/N* at the budgets, with 95% bands over the refits
            (:func:`jaxscale.optimum.allocation.allocation_table`; None for a law not of (N, D)).
        likelihood: the Huber-likelihood fit and its test of Hoffmann et al.'s values, or None.
        holdout: the errors on the runs held out, or None.
        seconds: the verb's wall time.
        identifiability: what the runs determine (:mod:`jaxscale.determinacy.identifiability`):
            condition numbers, correlations, decades spanned, the parameters left undefined
            (reported as None) and warnings in words with the runs that would settle them.
    """

    fit: FitResult
    refits: BootstrapResult | None
    allocation: dict[str, np.ndarray] | None
    likelihood: dict[str, Any] | None
    holdout: dict[str, Any] | None
    seconds: float
    identifiability: Identifiability | None = None

    @property
    def law(self) -> Law:
        return self.fit.law

    @property
    def params(self) -> Any:
        """The fitted parameters, the law's NamedTuple."""
        return self.fit.params

    @property
    def draws(self) -> Draws | None:
        """The bootstrap refits as :class:`~jaxscale.laws.draws.Draws` (None without a bootstrap)."""
        return None if self.refits is None else self.refits.parameter_draws

    @property
    def runs(self) -> RunsTable:
        """The runs fitted."""
        return self.fit.runs

    def _note(self) -> dict[str, str]:
        nonpositive, infinite = self.fit.nonpositive_exponents(), self.fit.infinite_parameters()
        if infinite:
            return {"note": f"fitted {' and '.join(infinite)} ran off to infinity on {self.fit.n_points} runs: they "
                            "settle no optimum, so the law's derived quantities are undefined (add runs)"}
        if nonpositive:
            return {"note": f"fitted {' and '.join(nonpositive)} <= 0: the loss does not fall along that input, so "
                            "the law has no compute-optimal allocation and what needs one is undefined"}
        return {}

    @property
    def undetermined(self) -> tuple[str, ...]:
        """Parameters and closed forms the runs leave undefined (a singular curvature at the fit)."""
        from jaxscale.determinacy.identifiability import undefined_derived

        gone = () if self.identifiability is None else self.identifiability.undefined
        return (*gone, *undefined_derived(self.law, gone))

    def _report(self) -> dict[str, Any]:
        fit, refits = self.fit, self.refits
        numbers = {"law": fit.law.name, "method": fit.method, **fit.summary(), "n_starts": fit.n_starts,
                   "n_converged": fit.n_converged, "fit_seconds": fit.seconds, **self._note()}
        if fit.runs.columns is not None:
            numbers["columns"] = dict(fit.runs.columns)
        if refits is not None:
            numbers.update(se=refits.se(), ci95=refits.ci95(), undefined=refits.undefined(),
                           bootstrap_resamples=len(refits.converged), bootstrap_converged=int(refits.converged.sum()),
                           bootstrap_seconds=refits.seconds, seed=refits.seed)
        for key in ("allocation", "likelihood", "holdout"):
            if getattr(self, key) is not None:
                numbers[key] = getattr(self, key)
        if self.identifiability is not None:
            numbers["identifiability"] = self.identifiability.to_dict()
        numbers.update(self._extrapolation_warnings())
        return {**_without(numbers, self.undetermined), "seconds": self.seconds}

    def _extrapolation_warnings(self) -> dict[str, list[str]]:
        """``warnings`` for the budgets whose optimum lies beyond the runs
        (:mod:`jaxscale.optimum.extrapolation`), none where the allocation is undefined."""
        from jaxscale.optimum.extrapolation import beyond_the_runs_warnings

        if self.allocation is None or self.undetermined:
            return {}
        warnings = beyond_the_runs_warnings(self.allocation, self.runs.n, self.runs.d)
        return {"warnings": warnings} if warnings else {}

    def summary(self) -> pd.DataFrame:
        """Each parameter and closed-form quantity (estimate, 95% interval, SE), then N*(C) and
        D*(C) at each budget with their bands. The intervals are the bootstrap's; without one, the
        exponents' and a, b's are the identifiability report's (the sandwich covariance's), as
        ``source`` says; NaN where there is none."""
        ci = {} if self.refits is None else self.refits.ci95()
        se = {} if self.refits is None else self.refits.se()
        gone = self.undetermined
        judged = {} if self.identifiability is None or ci else self.identifiability.intervals
        origin = "bootstrap" if ci else None if self.identifiability is None else self.identifiability.correlation_source
        entries = [{"quantity": k, "estimate": np.nan if k in gone else v,
                    **bounds(None if k in gone else ci.get(k) or (judged[k][1:] if k in judged else None)),
                    "se": np.nan if k in gone else se.get(k, np.nan),
                    "source": origin if k not in gone and (k in ci or k in judged) else None}
                   for k, v in self.fit.summary().items() if k not in ("objective", "n_points")]
        table = self._numbers.get("allocation") or {"C": []}
        for i, c in enumerate(table["C"]):
            for key, label in (("N", "N*"), ("D", "D*")):
                pair = None if self.refits is None else (table[f"{key}_lo"][i], table[f"{key}_hi"][i])
                entries.append({"quantity": f"{label}({c:.3g})", "estimate": table[key][i], **bounds(pair),
                                "source": None if pair is None else "bootstrap"})
        return rows(entries)

    def plot(self) -> Figures:
        """``residuals`` (log residual of every run) and, for a law of (N, D), ``isoflop``."""
        from jaxscale.plots.fit import isoflop_figure, residual_figure

        figures = Figures(residuals=residual_figure(self.fit))
        if self.law.inputs == ("N", "D"):
            figures["isoflop"] = isoflop_figure(self.fit)
        return figures

    def _data_files(self, directory: Path) -> list[Path]:
        if self.refits is None:
            return []
        path = directory / "bootstrap_draws.csv"
        with atomic_path(path) as tmp:
            pd.DataFrame(self.refits.table()).to_csv(tmp, index=False)
        return [path]

    def _title(self) -> str:
        boot = "" if self.refits is None else f", {len(self.refits.converged)} bootstrap refits"
        how = "Approach 3" if self.fit.method == "approach3" else "Approach 3's objective by variable projection"
        return f"FitReport: {self.law.name} law, {how} on {self.fit.n_points} runs{boot}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        return _fit_text(numbers)


@dataclass(frozen=True, repr=False)
class FrontierReport(Result):
    """The power laws N*(C) = k_N C^a, D*(C) = k_D C^b fitted to the compute-efficient frontier
    of Approach 1 (training curves) or 2 (isoFLOP profiles), with percentile intervals.

    Attributes:
        frontier: the frontier's points and the power laws (a, b None where too few model
            sizes are on it).
        seconds: the verb's wall time.
    """

    frontier: FrontierLaws
    seconds: float

    def _report(self) -> dict[str, Any]:
        return {"method": self.frontier.method, **self.frontier.summary(), "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        f = self.frontier
        return rows([{"quantity": "a", "estimate": f.a, **bounds(f.a_interval)},
                     {"quantity": "b", "estimate": f.b, **bounds(f.b_interval)},
                     {"quantity": "n_coefficient", "estimate": f.n_coefficient},
                     {"quantity": "d_coefficient", "estimate": f.d_coefficient}])

    def plot(self) -> Figures:
        """The frontier's points and the fitted power laws, named after the approach."""
        from jaxscale.plots.fit import frontier_laws_figure

        return Figures({self.frontier.method: frontier_laws_figure(self.frontier)})

    def _title(self) -> str:
        return f"FrontierReport: {self.frontier.method}, {len(self.frontier.c)} frontier points"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        return _fit_text(numbers)


def _without(numbers: dict[str, Any], undetermined: tuple[str, ...]) -> dict[str, Any]:
    """``numbers`` with each of the ``undetermined`` quantities, their intervals and, when any
    is, the allocation (which needs every scale and exponent) set to None, and a note saying why."""
    if not undetermined:
        return numbers
    out = {**numbers, **{k: None for k in undetermined if k in numbers}}
    for key in ("se", "ci95"):
        if key in out:
            out[key] = {k: (None if k in undetermined else v) for k, v in out[key].items()}
    if "allocation" in out:
        out["allocation"] = {k: (v if k == "C" else [None] * len(out["allocation"]["C"]))
                             for k, v in out["allocation"].items()}
    out["note"] = (f"the runs do not determine {', '.join(undetermined)}: the fit's curvature is singular "
                   "(identifiability); they and the allocation are undefined")
    return out


def check_bootstrap(resamples: int) -> None:
    """A bootstrap is 0 resamples (none) or at least 2."""
    if resamples < 0 or resamples == 1:
        raise ValueError(f"bootstrap must be 0 (none) or >= 2, got {resamples}")


def fit(runs: Runs, law: str | Law = "chinchilla", *, bootstrap: int = 0, seed: int = 0,
        compute: Sequence[float] | None = None, asymmetry: float | None = None, likelihood: bool = False,
        holdout: float | None = None, holdout_by: str = "n", method: str = "approach3",
        holdout_rule: str = "published") -> FitReport:
    """Fit a scaling law to runs by Hoffmann et al.'s (2022) Approach 3.

    ``law`` is fitted to every run at once by the Huber loss on log residuals from Epoch AI's
    grid of starts (Besiroglu et al. 2024); ``bootstrap`` resamples of the runs give 95%
    intervals of every parameter and derived quantity (about the fit's estimate with the
    refits' robust scale: :func:`jaxscale.core.intervals.robust_normal`) and percentile bands on
    the allocation.
    Approaches 1 and 2 (no law) are :func:`frontier`.

    Args:
        runs: a :class:`~jaxscale.tables.table.RunsTable` (:func:`jaxscale.load_runs`), a CSV path
            or a DataFrame.
        law: any name of :func:`jaxscale.laws.names` or a :class:`~jaxscale.laws.Law`.
        bootstrap: resamples for the intervals (0: none; Epoch: 4000).
        seed: the resampling seed.
        compute: budgets (FLOP) of the compute-optimal allocation (default: the largest
            compute in the runs); laws of (N, D) only.
        asymmetry: weigh over-predictions of the loss this many times more (for under-tuned
            small runs).
        likelihood: also fit the Huber likelihood (a scale sigma) and test Hoffmann et al.'s
            published values (the Chinchilla law only).
        holdout: also fit the runs with N (or C, ``holdout_by="c"``) below this and report the
            errors on the rest.
        holdout_by: ``"n"`` or ``"c"``.
        holdout_rule: the fit that predicts the runs held out: ``"published"`` (Approach 3 as
            published, :mod:`jaxscale.fitting.holdout`) or ``"nested"`` (the rule that nested
            holdouts inside the fitting runs choose, :mod:`jaxscale.fitting.nested_extrapolation`).
        method: ``"approach3"`` (multistart L-BFGS from the law's grid) or ``"vpnls"`` (variable
            projection, :mod:`jaxscale.fitting.vpnls`: the linear coordinates solved on a grid of
            the others, then the same L-BFGS; laws that declare their linear coordinates).

    Returns:
        A :class:`FitReport`.
    """
    from jaxscale.laws.registry import law_by_name

    start = time.perf_counter()
    check_bootstrap(bootstrap)
    law = law_by_name(law)
    if asymmetry is not None and not asymmetry > 0:
        raise ValueError(f"asymmetry must be > 0, got {asymmetry}")
    if likelihood:
        law.require_chinchilla("the likelihood-ratio test at Hoffmann et al.'s published values")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "vpnls" and asymmetry is not None:
        raise ValueError("asymmetry applies to method approach3, not vpnls")
    if holdout_rule not in HOLDOUT_RULES:
        raise ValueError(f"holdout_rule must be one of {', '.join(HOLDOUT_RULES)}, got {holdout_rule!r}")
    if holdout_rule != "published" and holdout is None:
        raise ValueError(f"holdout_rule {holdout_rule!r} chooses the fit of a holdout: give holdout (--holdout-threshold)")
    return _approach3(as_runs(runs), law, bootstrap, seed, compute, asymmetry, likelihood, holdout, holdout_by, start,
                      method, holdout_rule)


def frontier(runs: Runs, approach: int = 2, *, bootstrap: int = 0, seed: int = 0) -> FrontierReport:
    """The compute-efficient frontier of runs and the power laws N*(C) = k_N C^a,
    D*(C) = k_D C^b through it, by Hoffmann et al.'s (2022) Approach 1 or 2 (no law fitted).

    Args:
        runs: a :class:`~jaxscale.tables.table.RunsTable` (:func:`jaxscale.load_runs`), a CSV path
            or a DataFrame: training curves (Approach 1: every checkpoint of runs of several
            sizes) or isoFLOP profiles (Approach 2: runs of several sizes at each of a few budgets).
        approach: ``1`` (the lowest loss at each compute along the training curves) or ``2``
            (a parabola in log N through each isoFLOP profile).
        bootstrap: resamples for percentile intervals of a and b (0: none).
        seed: the resampling seed.

    Returns:
        A :class:`FrontierReport`.
    """
    from jaxscale.fitting.determinable import warn_implausible
    from jaxscale.laws import chinchilla

    start = time.perf_counter()
    if approach not in APPROACHES:
        raise ValueError(f"approach must be 1 or 2, got {approach!r}")
    check_bootstrap(bootstrap)
    table = as_runs(runs)
    warn_implausible(chinchilla.LAW, table)  # runs of (N, D); the approach judges its frontier's points itself
    if approach == 1:
        from jaxscale.fitting.approach1 import fit_approach1 as fit_frontier
    else:
        from jaxscale.fitting.approach2 import fit_approach2 as fit_frontier
    return FrontierReport(fit_frontier(table, bootstrap=bootstrap, seed=seed), time.perf_counter() - start)


def _approach3(table: RunsTable, law: Law, resamples: int, seed: int, compute: Sequence[float] | None,
               asymmetry: float | None, likelihood: bool, holdout: float | None, holdout_by: str,
               start: float, method: str = "approach3", holdout_rule: str = "published") -> FitReport:
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.fitting.bootstrap import bootstrap
    from jaxscale.fitting.vpnls import fit_vpnls
    from jaxscale.optimum.allocation import allocation_table

    result = fit_vpnls(table, law=law) if method == "vpnls" else fit_approach3(table, law=law, asymmetry=asymmetry)
    refits = bootstrap(result, resamples, seed=seed) if resamples else None
    allocation = None
    if law.inputs == ("N", "D"):
        allocation = allocation_table(law, result.params, compute or [float(table.c.max())],
                                      None if refits is None else refits.parameter_draws, runs=table)
    held = None
    if holdout is not None:
        held = _holdout(table, holdout, holdout_by, holdout_rule, law=law, asymmetry=asymmetry)
    return FitReport(fit=result, refits=refits, allocation=allocation,
                     likelihood=_likelihood(table, law) if likelihood else None, holdout=held,
                     seconds=time.perf_counter() - start,
                     identifiability=identified(result, None if refits is None else refits.parameter_draws))


def _holdout(table: RunsTable, threshold: float, by: str, rule: str, **fit_kwargs: Any) -> dict[str, Any]:
    """The summary of the holdout at ``threshold`` by ``rule`` (:data:`HOLDOUT_RULES`)."""
    if rule == "nested":
        from jaxscale.fitting.nested_extrapolation import nested_holdout

        return nested_holdout(table, threshold, by=by, **fit_kwargs).summary()
    from jaxscale.fitting.holdout import holdout_check

    return holdout_check(table, threshold, by=by, **fit_kwargs).summary()


def identified(fit: FitResult, draws: Draws | None) -> Identifiability:
    """What the runs of ``fit`` determine (:func:`jaxscale.determinacy.identifiability.identifiability`),
    with, where they leave something undetermined for a law of (N, D), the first
    :data:`SUGGESTED_RUNS` runs that :mod:`jaxscale.planning` proposes to settle the allocation
    exponent at the largest compute of the runs: candidates of
    :func:`~jaxscale.planning.candidates.grid_beside_runs` up to that compute, chosen greedily by
    expected variance removed per FLOP (:func:`~jaxscale.planning.selection.plan_runs`). A fit
    through its runs exactly (residual scale 0) has no noise for a run to average out: no runs
    are suggested."""
    import dataclasses

    from jaxscale.determinacy.identifiability import identifiability

    ident = identifiability(fit, draws)
    if not (ident.warnings and fit.law.inputs == ("N", "D")) or ident.residual_scale == 0:
        return ident
    from jaxscale.planning.candidates import grid_beside_runs
    from jaxscale.planning.selection import plan_runs
    from jaxscale.planning.targets import allocation_exponent

    top = float(fit.runs.c.max())
    n, d = grid_beside_runs(top, fit.runs.n)
    plan = plan_runs(fit.law, allocation_exponent(fit.law, top), n, d, SUGGESTED_RUNS * top, fit=fit,
                     max_runs=SUGGESTED_RUNS)
    chosen = tuple((float(plan.n[c.index]), float(plan.d[c.index])) for c in plan.choices)
    return dataclasses.replace(ident, suggested_runs=chosen)


def _likelihood(table: RunsTable, law: Law) -> dict[str, Any]:
    from jaxscale.fitting.likelihood import fit_likelihood, likelihood_ratio_test

    ml = fit_likelihood(table, law=law)
    test = likelihood_ratio_test(table, law.published_params("chinchilla"), fit=ml, law=law)
    return {**ml.summary(), "lr_test_vs_chinchilla": test}


def _format(value: Any, spec: str = ".7g") -> str:
    """A value as text: lists joined, floats in ``spec``, None (undefined in JSON) as "undefined"."""
    if isinstance(value, list):
        return "  ".join(_format(v, spec) for v in value)
    if not _defined(value):
        return "undefined"
    return format(value, spec) if isinstance(value, float) else str(value)


def _value_text(value: Any, numbers: dict[str, Any]) -> str:
    """A value of the table; None where Approach 1 leaves the law undefined (too few sizes on
    its frontier, counted in ``n_sizes``)."""
    if value is None and "n_sizes" in numbers:
        from jaxscale.fitting.approach1 import undefined_exponent

        return undefined_exponent(numbers["n_sizes"])
    return _format(value)


def _defined(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _share_of(fraction: float, numbers: dict[str, Any]) -> str:
    """A fraction of the converged resamples as a count of them ("1 of 400"): a percentage rounds
    one in a thousand to "0%"."""
    total = numbers.get("bootstrap_converged")
    return f"{round(fraction * total)} of {total}" if total else f"{fraction:.1%} of"


def _fit_text(numbers: dict[str, Any]) -> list[str]:
    """The text of a fit (Approach 3, or a frontier's power laws): each number with its SE and
    95% interval, then the identifiability, the allocation, the checks and the isoFLOP slices."""
    se, ci, undefined = numbers.get("se", {}), numbers.get("ci95", {}), numbers.get("undefined", {})
    ident = numbers.get("identifiability") or {}
    judged, source = ident.get("intervals", {}), ident.get("correlation_source")  # the sandwich's, without a bootstrap
    lines = [f"jaxscale fit: {numbers.get('law', '')} {numbers['method']}"]
    for key, value in numbers.items():
        if isinstance(value, dict) or key in ("law", "method", "files", "slices", "note", "identifiability", "warnings"):
            continue
        extra = f"   se {se[key]:.4g}" if _defined(se.get(key)) else ""
        extra += f"   95% [{ci[key][0]:.6g}, {ci[key][1]:.6g}]" if key in ci and _defined(ci[key][0]) else ""
        extra += (f"   95% [{judged[key][1]:.6g}, {judged[key][2]:.6g}] ({source})"
                  if key not in ci and key in judged and value is not None else "")
        extra += f"   undefined in {_share_of(undefined[key], numbers)} resamples" if key in undefined else ""
        lines.append(f"  {key:<22} {_value_text(value, numbers)}{extra}")
    if "note" in numbers:
        lines.append(f"  note: {numbers['note']}")
    if "columns" in numbers:
        lines.append("  columns: " + ", ".join(f"{k} = {v}" for k, v in numbers["columns"].items()))
    if "identifiability" in numbers:
        lines += identifiability_text(numbers["identifiability"])
    for section in ("allocation", "likelihood", "holdout"):
        for key, value in numbers.get(section, {}).items():
            lines.append(f"  {section + '.' + key:<34} {value if isinstance(value, dict) else _format(value)}")
    lines += [f"  warning: {warning}" for warning in numbers.get("warnings", [])]
    if "slices" in numbers:
        lines.append(f"  {'isoFLOP slice':<14} {'points':>6} {'sizes':>5} {'N*':>10} {'L*':>8}  status")
        for s in numbers["slices"]:
            lines.append(f"  {s['budget']:<14.3g} {s['points']:>6} {s['sizes']:>5} {_format(s['n_star'], '.3g'):>10} "
                         f"{_format(s['loss_star'], '.4f'):>8}  {s['status']}")
    lines += [f"wrote {path}" for path in numbers.get("files", [])]
    return lines
