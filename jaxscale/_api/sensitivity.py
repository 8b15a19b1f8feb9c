"""``sensitivity``: which parameters, which runs and which of the reconciliation's own choices
drive a law's conclusions (:mod:`jaxscale.sensitivities.study`)."""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from jaxscale._api._results import Figures, Result, rows
from jaxscale._api.fit import check_bootstrap
from jaxscale._api.fitted import Fitted, FittedByApproach3
from jaxscale._api.runs import Runs, as_runs
from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law

#: The normal quantile of a central 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True, repr=False)
class SensitivityReport(Result):
    """A sensitivity study: elasticities of every quantity, the delta method beside the spread
    over draws, each run's influence (fits), and the reconciled exponent's sensitivities.

    Attributes:
        study: the study's sections, as :mod:`jaxscale.sensitivities.study` reports them.
        source: what was studied: the runs' source, ``"published NAME"`` or the draws' kind.
        dropped_highest: highest-loss runs dropped before the fit (None without runs).
        seconds: the verb's wall time.
    """

    study: dict[str, Any]
    source: str
    dropped_highest: int | None
    seconds: float

    def _report(self) -> dict[str, Any]:
        dropped = {} if self.dropped_highest is None else {"drop_highest": self.dropped_highest}
        return {"source": self.source, **dropped, **self.study, "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """Each quantity's value; with draws, the delta method's 95% interval exp(log q -/+ 1.96
        SD) and the SDs of log q (delta method, over the draws); its elasticity to each
        parameter (``e_NAME``)."""
        entries = []
        for name, q in self.study["quantities"].items():
            sd = q.get("sd_log_delta", math.nan)
            entry = {"quantity": name, "estimate": q["value"], "lower": q["value"] * math.exp(-Z95 * sd),
                     "upper": q["value"] * math.exp(Z95 * sd)}
            if "sd_log_delta" in q:
                entry |= {"sd_log_delta": sd, "sd_log_draws": q["sd_log_draws"]}
            entries.append(entry | {f"e_{k}": v for k, v in q["elasticities"].items()})
        return rows(entries)

    def plot(self) -> Figures:
        """``tornado`` (elasticities) and, for a fit, ``influence`` (each run's influence on every
        quantity) and ``jackknife`` (first-order against leave-one-out changes)."""
        from jaxscale.plots import sensitivity as plots

        quantities = self.study["quantities"]
        figures = Figures(tornado=plots.tornado_figure({q: v["elasticities"] for q, v in quantities.items()}))
        if "influence" in self.study:
            runs = self.study["influence"]["per_run"]
            figures["influence"] = plots.influence_figure(runs["N"], runs["D"], runs["linear"])
            correlations = {q: v["correlation_jackknife"] for q, v in self.study["influence"]["quantities"].items()}
            figures["jackknife"] = plots.jackknife_figure(runs["linear"], runs["exact"], correlations)
        return figures

    def _title(self) -> str:
        return f"SensitivityReport: {self.study['law']} law, {self.source}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lines = [f"jaxscale sensitivity: {numbers['law']} law, {numbers['source']}",
                 "  " + ", ".join(f"{k} = {v:.5g}" for k, v in numbers["params"].items()),
                 *_quantities_text(numbers["quantities"])]
        if "influence" in numbers:
            lines += _influence_text(numbers["influence"])
        if numbers.get("reconciliation") is not None:
            lines += _reconciliation_text(numbers["reconciliation"])
        elif "reconciliation_undefined" in numbers:
            lines += ["", f"reconciled exponent: {numbers['reconciliation_undefined']}"]
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", [])), "", f"{numbers['seconds']:.1f} s"]


def _pairs(planned: Sequence[float] | Sequence[Sequence[float]]) -> tuple[tuple[float, float], ...]:
    """One planned run (N, D), or several, as a tuple of pairs."""
    if len(planned) and not hasattr(planned[0], "__len__"):
        planned = [planned]
    return tuple((float(n), float(d)) for n, d in planned)


def sensitivity(source: Fitted | Draws | Runs | None = None, *, published: str | None = None,
                law: str | Law = "chinchilla", compute: Sequence[float] = (1e24,),
                planned: Sequence[float] | Sequence[Sequence[float]] = (7e10, 1.4e12),
                bootstrap: int | None = None, seed: int = 0, gamma: float | None = None,
                delta: float | None = None, table_embedding: bool = False, target: float | None = None,
                top: int = 5) -> SensitivityReport:
    """A sensitivity study by automatic differentiation.

    For each quantity (N*(C) and D*(C) at each budget, the loss of each planned run, the law's
    a and b, and for the Chinchilla law Pearce & Song's reconciled exponent): its elasticities
    d log q / d log theta; with draws of the parameters (bootstrap refits, a posterior), the
    delta-method SD of log q from their covariance beside the SD over the draws; for a fit,
    each run's influence by implicit differentiation against exact leave-one-out refits; for
    the Chinchilla law, the reconciled exponent's derivatives with respect to the law, the
    embedding relation (gamma, delta) and Kaplan's size window.

    Args:
        source: a fitted law (:class:`~jaxscale.Fitted`: a :class:`~jaxscale.FitReport`, studied
            with each run's influence; a :class:`~jaxscale.Posterior`, at its draws' median),
            :class:`~jaxscale.laws.Draws` (at their median), or runs (a table, CSV path,
            DataFrame or a function returning a table, fitted by Approach 3 first); None with
            ``published``.
        published: instead of ``source``, a published parameter set of ``law`` (e.g. ``"epoch"``).
        law: the law of a published set or of the runs to fit.
        compute: budgets (FLOP) of N*(C) and D*(C).
        planned: a planned run (N, D), or several, whose loss is extrapolated.
        bootstrap: refits for the covariance of a fit (0: none; default: the fit's own refits if
            it has them, else 1000).
        seed: the bootstrap's seed.
        gamma, delta: the embedding relation N_T = N_E + gamma N_E^delta of the reconciled exponent
            (default: Pearce & Song's fit to Table A9, 47491, and 1/3).
        table_embedding: gamma, delta fitted to the runs' own model sizes (both bases needed).
        target: the exponent the reconciliation's first-order factors aim at (default: Kaplan's 0.73).
        top: runs listed per quantity.

    Returns:
        A :class:`SensitivityReport`.
    """
    from jaxscale.laws.registry import law_by_name
    from jaxscale.reconciliation.pipeline import EmbeddingFit
    from jaxscale.sensitivities import study

    start = time.perf_counter()
    law = law_by_name(law)
    if (source is None) == (published is None):
        raise ValueError("sensitivity studies a fit, a posterior, draws or runs, or a published set: give one")
    if bootstrap is not None:
        check_bootstrap(bootstrap)
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    drawn = isinstance(source, Draws)
    if table_embedding and (published is not None or drawn or gamma is not None or delta is not None):
        raise ValueError("table_embedding takes gamma, delta from runs: not with published parameters, bare draws, "
                         "gamma or delta")
    default = study.StudySettings()
    embedding = EmbeddingFit(*(d if a is None else a for a, d in zip((gamma, delta), default.embedding)))
    settings = study.StudySettings(budgets=tuple(compute), planned=_pairs(planned), embedding=embedding,
                                   n_bootstrap=default.n_bootstrap if bootstrap is None else bootstrap, seed=seed,
                                   top=top, target=default.target if target is None else target)
    if published is not None:
        numbers = study.published_study(law, law.published_params(published), settings)
        return SensitivityReport(numbers, f"published {published}", None, time.perf_counter() - start)
    if drawn:
        return SensitivityReport(study.draws_study(source, settings), f"{source.kind} draws", None,
                                 time.perf_counter() - start)
    if isinstance(source, Fitted) and not isinstance(source, FittedByApproach3):
        return _draws_of(source, settings, table_embedding, start)
    refits, checked = None, None
    if isinstance(source, FittedByApproach3):
        fitted = source.fit
        refits = source.refits if bootstrap is None else None
        checked = source.identifiability
        settings = _with_table_embedding(settings, fitted.runs, table_embedding)
    else:
        from jaxscale.fitting.approach3 import fit_approach3
        from jaxscale.optimum.allocation import check_nd

        check_nd(law)  # the study's quantities need a law of N and D: say so before fitting
        runs = as_runs(source)
        settings = _with_table_embedding(settings, runs, table_embedding)  # both bases, or an error before fitting
        fitted = fit_approach3(runs, law=law)
    from jaxscale.determinacy.identifiability import check_determined, identifiability

    check_determined(checked if checked is not None else identifiability(fitted), "sensitivities")
    return SensitivityReport(study.fit_study(fitted, settings, refits), fitted.runs.source,
                             fitted.runs.dropped_highest, time.perf_counter() - start)


def _draws_of(source: Fitted, settings: Any, table_embedding: bool, start: float) -> SensitivityReport:
    """The study of a fitted law at its draws (a posterior's; no run influence)."""
    from jaxscale.sensitivities import study

    if source.draws is None:
        raise ValueError(f"a {type(source).__name__} without draws has no spread to study: fit runs, or give draws")
    runs = source.runs
    if runs is None:
        if table_embedding:
            raise ValueError("table_embedding takes gamma, delta from runs: this fitted law has none")
        return SensitivityReport(study.draws_study(source.draws, settings), f"{source.draws.kind} draws", None,
                                 time.perf_counter() - start)
    settings = _with_table_embedding(settings, runs, table_embedding)
    return SensitivityReport(study.draws_study(source.draws, settings), runs.source, runs.dropped_highest,
                             time.perf_counter() - start)


def _with_table_embedding(settings: Any, runs: Any, table_embedding: bool) -> Any:
    """``settings`` with gamma, delta of N_T = N_E + gamma N_E^delta fitted to the runs' model
    sizes, where ``table_embedding`` asks for them."""
    if not table_embedding:
        return settings
    from jaxscale.reconciliation.on_runs import table_embedding

    return dataclasses.replace(settings, embedding=table_embedding(runs))


def _quantities_text(quantities: dict[str, Any]) -> list[str]:
    """Each quantity's elasticities and, with draws, its SD of log q three ways."""
    params = list(next(iter(quantities.values()))["elasticities"])
    lines = ["", "elasticities d log q / d log theta",
             f"  {'quantity':<22} {'value':>11} " + " ".join(f"{p:>8}" for p in params)]
    lines += [f"  {q:<22} {v['value']:>11.5g} " + " ".join(f"{v['elasticities'][p]:>+8.4f}" for p in params)
              for q, v in quantities.items()]
    if "sd_log_delta" not in next(iter(quantities.values())):
        return lines
    lines += ["", "SD of log q: delta method (full covariance, independent parameters) against the draws",
              f"  {'quantity':<22} {'delta':>8} {'indep.':>8} {'draws':>8}   variance shares"]
    for q, v in quantities.items():
        shares = " ".join(f"{p} {s:+.2f}" for p, s in v["shares"].items())
        lines.append(f"  {q:<22} {v['sd_log_delta']:>8.4f} {v['sd_log_independent']:>8.4f} "
                     f"{v['sd_log_draws']:>8.4f}   {shares}")
    return lines


def _influence_text(section: dict[str, Any]) -> list[str]:
    """Each run's first-order influence against the leave-one-out refits."""
    lines = ["", f"influence of each run (first order, Delta log q when the run is left out) against "
             f"{section['jackknife_converged']} leave-one-out refits; {section['quadratic_runs']} of "
             f"{section['n_runs']} runs in the Huber quadratic region"]
    for q, v in section["quantities"].items():
        lines.append(f"  {q:<22} correlation {v['correlation_jackknife']:.4f} "
                     f"(through d theta/d log L alone: {v['correlation_jackknife_log_loss_route']:.4f})")
        for label, key in (("most influential", "most_influential"), ("worst matched", "worst_matched")):
            runs = "; ".join(f"#{r['run']} N={r['N']:.3g} D={r['D']:.3g}: {r['linear']:+.4f}/{r['exact']:+.4f}"
                             f" h={r['leverage']:.2f}" for r in v[key])
            lines.append(f"    {label:<16} (linear/exact, leverage) {runs}")
    return lines


def _reconciliation_text(section: dict[str, Any]) -> list[str]:
    """The reconciled exponent's derivatives by each knob, and the factor to the target."""
    lines = ["", f"reconciled exponent {section['exponent']:.4f} (smooth window; Step-4 frontier "
             f"{section['frontier_exponent']:.4f}), gamma = {section['gamma']:.6g}, delta = {section['delta']:.4g}",
             f"  {'knob':<8} {'value':>10} {'da/dx':>11} {'elasticity':>10} "
             f"{'factor to ' + format(section['target'], 'g'):>14} {'a there':>8}"]
    for k, v in section["knobs"].items():
        lines.append(f"  {k:<8} {v['value']:>10.4g} {v['derivative']:>+11.4g} {v['elasticity']:>+10.4f} "
                     f"{_or_dash(v['factor_to_target'], 14, '.4g')} {_or_dash(v['exponent_at_factor'], 8, '.4f')}")
    lines.append("  (da/dx per decade of N for the window bounds N_min, N_max; factors beyond 100x either way: —)")
    return lines


def _or_dash(value: float | None, width: int, spec: str) -> str:
    """``value`` formatted, or a dash where it is undefined (NaN, or null from JSON)."""
    return f"{value:>{width}{spec}}" if value is not None and value == value else f"{'—':>{width}}"
