"""``allocate``: the compute-optimal model size and tokens of a law, a fit or a posterior;
``allocate_data_constrained``: with a budget of unique tokens, the data-constrained optimum
(Muennighoff et al. 2023) beside Chinchilla's."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from jaxscale._api._results import Figures, Result, rows
from jaxscale._api.fitted import Fitted
from jaxscale.core.numerics import float64
from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable


@dataclass(frozen=True, repr=False)
class Allocation(Result):
    """N*(C), D*(C) = C/(6 N*) and D*/N* of a law at each budget (Pearce & Song Eq. 11, by the
    implicit-differentiation solver), with 95% bands over draws where there are draws.

    Attributes:
        law: the law.
        params: the parameters at which the optimum is solved (a fit's, the draws' median or
            a published set).
        draws: the draws behind the bands, or None.
        source: what the parameters came from.
        table: :func:`jaxscale.optimum.allocation.allocation_table`'s columns (with how far each
            optimum lies outside the runs, for a law fitted to runs).
        seconds: the verb's wall time.
        warnings: a sentence for each budget whose optimum lies beyond the runs
            (:mod:`jaxscale.optimum.extrapolation`).
    """

    law: Law
    params: Any
    draws: Draws | None
    source: str
    table: dict[str, np.ndarray]
    seconds: float
    warnings: tuple[str, ...] = ()

    def _report(self) -> dict[str, Any]:
        return {"law": self.law.name, "source": self.source, "params": self.params._asdict(), **self.table,
                **({"warnings": list(self.warnings)} if self.warnings else {}), "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """N*, D* and D*/N* at every budget, with their 95% bands over the draws."""
        t, none = self.table, np.full(len(self.table["C"]), np.nan)
        return rows({"quantity": f"{label}({c:.3g})", "estimate": t[key][i], "lower": t.get(f"{key}_lo", none)[i],
                     "upper": t.get(f"{key}_hi", none)[i]}
                    for i, c in enumerate(t["C"])
                    for key, label in (("N", "N*"), ("D", "D*"), ("tokens_per_param", "D*/N*")))

    def plot(self) -> Figures:
        """``optimal_bands``: N*(C), D*(C) and the loss there from 1e18 to 1e27 FLOP, the median and
        95% band over the draws (a line at the parameters without draws)."""
        import jax

        from jaxscale._api.bayes import BAND_BUDGETS
        from jaxscale.optimum.allocation import optimal_allocation
        from jaxscale.plots.bayes import optimal_bands_figure

        params = self.draws.used if self.draws is not None else jax.tree.map(lambda v: np.asarray([v]), self.params)
        bands = optimal_allocation(self.law, params, np.logspace(*np.log10(BAND_BUDGETS), 40))
        return Figures(optimal_bands=optimal_bands_figure(bands))

    def _title(self) -> str:
        return f"Allocation: {self.law.name} law, {self.source}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        bands, outside = "N_lo" in numbers, "N_decades_outside_runs" in numbers
        lines = [f"{numbers['law']} law, {numbers['source']}: "
                 + " ".join(f"{k}={v:.4g}" for k, v in numbers["params"].items()),
                 f"{'C (FLOP)':>12} {'N*':>12} {'D*':>12} {'D*/N*':>8}"
                 + (f" {'decades outside runs':>21}" if outside else "")
                 + (f" {'N* 95% band':>25} {'D* 95% band':>25}" if bands else "")]
        for i, c in enumerate(numbers["C"]):
            line = (f"{c:>12.3g} {_shown(numbers['N'][i], '.4g'):>12} {_shown(numbers['D'][i], '.4g'):>12} "
                    f"{_shown(numbers['tokens_per_param'][i], '.3g'):>8}")
            if outside:
                line += (f" {'N ' + _shown(numbers['N_decades_outside_runs'][i], '.2f'):>11}"
                         f" {'D ' + _shown(numbers['D_decades_outside_runs'][i], '.2f'):>9}")
            if bands:
                line += "".join(f" {_band(numbers[key + '_lo'][i], numbers[key + '_hi'][i]):>25}" for key in ("N", "D"))
                share = numbers["undefined_fraction"][i]
                line += f"  (no optimum in {share:.3g} of the draws)" if share else ""
            lines.append(line)
        lines += [f"warning: {warning}" for warning in numbers.get("warnings", [])]
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


@dataclass(frozen=True, repr=False)
class DataConstrainedAllocation(Result):
    """The compute-optimal run with U_D unique tokens under the data-constrained law of
    Muennighoff et al. (2023) at each budget, its local exponents, and beside it Chinchilla's
    answer with unlimited data on the same A, B, E, alpha, beta.

    Attributes:
        law: the data-constrained law.
        params: its parameters.
        published: the name of the published set the parameters came from.
        best: the optimum with U_D unique tokens.
        unlimited: Chinchilla's optimum with unlimited data.
    """

    law: Law
    params: Any
    published: str
    best: Any  # jaxscale.optimum.allocation.RepeatedDataAllocation
    unlimited: Any  # jaxscale.optimum.allocation.OptimalAllocation

    @float64
    def _report(self) -> dict[str, Any]:
        from jaxscale.laws import chinchilla, data_constrained

        best, unlimited, u = self.best, self.unlimited, self.best.unique_tokens
        base = data_constrained.base_params(self.params)
        chinchilla_on_u = data_constrained.loss(unlimited.n, unlimited.d, u, self.params)
        return {
            "law": self.law.name, "citation": self.law.citation, "base": self.published,
            "params": self.params._asdict(), "unique_tokens": u,
            "loss_floor": float(data_constrained.loss_floor(u, self.params)),
            "budgets": [{
                "C": best.c[i],
                "data_constrained": {
                    "N": best.n[i], "D": best.d[i], "epochs": best.epochs[i], "loss": best.loss[i],
                    "dlogN_dlogC": best.n_exponent[i], "dlogD_dlogC": 1.0 - best.n_exponent[i],
                    "dlogN_dlogU": best.n_unique_exponent[i], "dlogD_dlogU": -best.n_unique_exponent[i]},
                "chinchilla": {
                    "N": unlimited.n[i], "D": unlimited.d[i], "epochs": unlimited.d[i] / u,
                    "loss_unlimited_data": unlimited.loss[i], "loss_on_unique_tokens": chinchilla_on_u[i],
                    "dlogN_dlogC": float(chinchilla.allocation_exponents(base)[0])},
            } for i in range(len(best.c))],
        }

    def summary(self) -> pd.DataFrame:
        """N*, D*, the epochs of U_D and the loss at every budget, data-constrained beside
        Chinchilla's with unlimited data (no intervals: a published parameter set)."""
        return rows({"quantity": f"{label}({row['C']:.3g})", "estimate": row["data_constrained"][key],
                     "chinchilla": row["chinchilla"][other]}
                    for row in self._numbers["budgets"]
                    for label, key, other in (("N*", "N", "N"), ("D*", "D", "D"), ("epochs", "epochs", "epochs"),
                                              ("loss", "loss", "loss_on_unique_tokens")))

    @float64
    def plot(self) -> Figures:
        """``allocation``: the loss along each budget against the epochs of U_D, both laws, optima marked."""
        from jaxscale.laws import chinchilla, data_constrained
        from jaxscale.plots.allocate import repeated_data_figure

        return Figures(allocation=repeated_data_figure(
            self.law.given(U_D=self.best.unique_tokens), self.params, chinchilla.LAW,
            data_constrained.base_params(self.params), self.best, self.unlimited))

    def _title(self) -> str:
        return f"DataConstrainedAllocation: {self.law.name} law ({self.published}), U_D = {self.best.unique_tokens:.3g}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        p = numbers["params"]
        lines = [f"{numbers['law']} law ({numbers['citation']}), base {numbers['base']}: "
                 f"A={p['A']:.4g} B={p['B']:.4g} E={p['E']:.4g} alpha={p['alpha']:.4g} beta={p['beta']:.4g} "
                 f"R*_D={p['R_D_star']:.4g} R*_N={p['R_N_star']:.4g}",
                 f"U_D = {numbers['unique_tokens']:.3g} unique tokens; the lowest loss they allow (N, D -> inf): "
                 f"{numbers['loss_floor']:.4f}"]
        for row in numbers["budgets"]:
            lines += _budget_text(row)
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


def _band(lower: Any, upper: Any) -> str:
    """A 95% band as text, "lower to upper"."""
    return f"{_shown(lower, '.4g')} to {_shown(upper, '.4g')}"


def _shown(value: Any, fmt: str) -> str:
    """A number, or "undetermined" where the optimum is not (None in JSON)."""
    return "undetermined" if value is None or value != value else format(value + 0.0, fmt)  # no "-0"


def _budget_text(row: dict[str, Any]) -> list[str]:
    """One budget of a data-constrained allocation: the optimum beside Chinchilla's with unlimited data."""
    dc, ch = row["data_constrained"], row["chinchilla"]
    lines = ["", f"C = {row['C']:.3g} FLOP{'':14s}{'data-constrained':>18s}{'Chinchilla (unlimited data)':>30s}"]
    for label, key, fmt in (("N* (parameters)", "N", ".4g"), ("D* (tokens)", "D", ".4g"),
                            ("epochs of U_D", "epochs", ".3g")):
        lines.append(f"  {label:30s}{_shown(dc[key], fmt):>18s}{_shown(ch[key], fmt):>30s}")
    lines += [f"  {'loss with U_D unique tokens':30s}{_shown(dc['loss'], '.4f'):>18s}"
              f"{_shown(ch['loss_on_unique_tokens'], '.4f'):>30s}",
              f"  {'loss with unlimited data':30s}{'':>18s}{_shown(ch['loss_unlimited_data'], '.4f'):>30s}",
              f"  {'d log N*/d log C':30s}{_shown(dc['dlogN_dlogC'], '.4f'):>18s}{_shown(ch['dlogN_dlogC'], '.4f'):>30s}",
              f"  {'d log N*/d log U_D':30s}{_shown(dc['dlogN_dlogU'], '.4f'):>18s}"]
    if dc["N"] is None or dc["N"] != dc["N"]:
        lines.append("  (the loss along this budget is flat at the floor to float64 precision: more compute buys "
                     "nothing, and no single N* is optimal)")
    return lines


def allocate(source: Fitted | Draws | Law | str, compute: float | Sequence[float], *, published: str | None = None,
             params: Mapping[str, float] | None = None) -> Allocation:
    """The compute-optimal allocation N*(C), D*(C) under C = 6 N D (Pearce & Song Eq. 11). With a
    limited number of unique tokens, :func:`allocate_data_constrained`.

    Args:
        source: a fitted law (:class:`~jaxscale.Fitted`: a :class:`~jaxscale.FitReport` at its
            fit, bands over its bootstrap refits; a :class:`~jaxscale.Posterior` at its median,
            bands over its draws), :class:`~jaxscale.laws.Draws` (at their median, bands over
            them), or a law (name or :class:`~jaxscale.laws.Law`) at a published set.
        compute: one budget or several (FLOP).
        published: the law's published parameter set (default: its first, e.g. ``"epoch"``).
        params: values replacing parameters of the published set, by name.

    Returns:
        An :class:`Allocation`.
    """
    from jaxscale.core.validation import check_positive

    start = time.perf_counter()
    check_positive("compute", compute)
    budgets = np.atleast_1d(np.asarray(compute, np.float64))
    if isinstance(source, (str, Law)):
        law, name, point = _published(source, published, params)
        if law.inputs[2:] == ("U_D",):
            raise ValueError(f"the {law.name} law needs the unique tokens available: allocate_data_constrained")
        return _allocation(law, point, None, f"published {name}", budgets, start, None)
    if published is not None or params is not None:
        raise ValueError("published and params choose a law's parameters: not with a fit, posterior or draws")
    if isinstance(source, Draws):
        return _allocation(source.law, source.median(), source, f"median of {source.n_valid} {source.kind} draws",
                           budgets, start, None)
    if not isinstance(source, Fitted):
        raise ValueError(f"allocate takes a fitted law (law, params, draws), draws or a law; got "
                         f"{type(source).__name__}")
    return _allocation(source.law, source.params, source.draws, _described(source), budgets, start, source.runs)


def allocate_data_constrained(compute: float | Sequence[float], unique_tokens: float,
                              law: str | Law = "data-constrained", *, published: str | None = None,
                              params: Mapping[str, float] | None = None) -> DataConstrainedAllocation:
    """The compute-optimal run with ``unique_tokens`` unique tokens, repeated as many epochs as
    the optimum wants, under a law of (N, D, U_D) such as the data-constrained law of
    Muennighoff et al. (2023), beside Chinchilla's answer with unlimited data.

    Args:
        compute: one budget or several (FLOP).
        unique_tokens: the unique tokens U_D available.
        law: a law of (N, D, U_D), by name or :class:`~jaxscale.laws.Law`.
        published: its published parameter set (default: its first, ``"muennighoff"``).
        params: values replacing parameters of the published set, by name (e.g. ``{"R_D_star": 10.0}``).

    Returns:
        A :class:`DataConstrainedAllocation`.
    """
    from jaxscale.core.validation import check_positive

    check_positive("compute", compute)
    check_positive("unique_tokens", unique_tokens)
    law, name, point = _published(law, published, params)
    if law.inputs[2:] != ("U_D",):
        raise ValueError(f"unique_tokens applies to a law of (N, D, U_D) such as data-constrained, not {law.name}")
    return _data_constrained(law, point, name, np.atleast_1d(np.asarray(compute, np.float64)), unique_tokens)


def _published(law: str | Law, published: str | None, params: Mapping[str, float] | None) -> tuple[Law, str, Any]:
    """The law, the name of its published set (default: its first) and that set with ``params`` replaced."""
    from jaxscale.core.validation import check_positive
    from jaxscale.laws.registry import law_by_name

    law = law_by_name(law)
    name = published or next(iter(law.published), None)
    if name is None:
        raise ValueError(f"the {law.name} law has no published parameter set: allocate a fit or a posterior of it")
    unknown = sorted(set(params or {}) - set(law.param_names))
    if unknown:
        raise ValueError(f"the {law.name} law has no parameter {', '.join(unknown)}; its parameters are "
                         f"{', '.join(law.param_names)}")
    point = law.published_params(name)._replace(**(params or {}))
    for key, value in (params or {}).items():
        check_positive(key, value)
    return law, name, point


def _described(source: Fitted) -> str:
    """What a fitted law's allocation stands on: its runs and its draws."""
    runs = "" if source.runs is None else f"fitted to {source.runs.source}"
    draws = "" if source.draws is None else f"bands over {source.draws.n_valid} {source.draws.kind} draws"
    return ", ".join(part for part in (runs, draws) if part) or "fitted parameters"


def _allocation(law: Law, point: Any, draws: Draws | None, source: str, budgets: np.ndarray,
                start: float, runs: RunsTable | None) -> Allocation:
    """The allocation of ``law`` at ``point``; with the ``runs`` it was fitted to (a law of (N, D)),
    how far each optimum lies outside them and a warning where it is beyond them."""
    from jaxscale.optimum.allocation import allocation_table
    from jaxscale.optimum.extrapolation import beyond_the_runs_warnings

    runs = runs if runs is not None and law.inputs == ("N", "D") else None
    table = allocation_table(law, point, budgets, draws, runs=runs)
    warnings = () if runs is None else tuple(beyond_the_runs_warnings(table, runs.n, runs.d))
    return Allocation(law, point, draws, source, table, time.perf_counter() - start, warnings)


@float64
def _data_constrained(law: Law, params: Any, published: str, budgets: np.ndarray,
                      unique_tokens: float) -> DataConstrainedAllocation:
    from jaxscale.laws import chinchilla, data_constrained
    from jaxscale.optimum.allocation import (
        optimal_allocation,
        optimal_allocation_given_unique_tokens,
    )

    best = optimal_allocation_given_unique_tokens(law, params, budgets, unique_tokens)
    unlimited = optimal_allocation(chinchilla.LAW, data_constrained.base_params(params), budgets)
    return DataConstrainedAllocation(law, params, published, best, unlimited)
