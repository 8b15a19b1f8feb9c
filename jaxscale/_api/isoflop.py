"""``isoflop``: each isoFLOP budget's optimum by every declared rule, the exponent a of N* ~ C^a
through them with its interval, the budgets refused at their grid's edge, and what the grids imply
of their own bias (:mod:`jaxscale.fitting.isoflop_optima`, :mod:`jaxscale.fitting.isoflop_grid`)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from jax.typing import ArrayLike

from jaxscale._api._results import Figures, Result, bounds, rows
from jaxscale._api.runs import Runs, as_runs
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.isoflop_grid import GridDiagnostics
from jaxscale.fitting.isoflop_optima import INTERVALS, RESAMPLES, RULES, SEED_NOISE, Profiles, RuleFit


@dataclass(frozen=True, repr=False)
class IsoflopReport(Result):
    """Every rule's per-budget optima and exponent, and the grid's diagnostics.

    Attributes:
        profiles: the isoFLOP points (ln N, ln D, loss, budget of each run).
        reference: the law fitted to every run by variable projection (the law rule's exponents
            and the diagnostics' reference).
        fits: each rule's :class:`~jaxscale.fitting.isoflop_optima.RuleFit`, by name.
        diagnostics: width, centring, drift, implied bias and warnings.
        seconds: the verb's wall time.
    """

    profiles: Profiles
    reference: FitResult
    fits: dict[str, RuleFit]
    diagnostics: GridDiagnostics
    seconds: float

    def _report(self) -> dict[str, Any]:
        ref = self.reference.summary()
        return {"reference": {"law": self.reference.law.name, "method": self.reference.method,
                              **{k: ref[k] for k in (*self.reference.law.param_names, "a")}},
                "rules": {rule: fit.to_dict() for rule, fit in self.fits.items()},
                "grid": self.diagnostics.to_dict(), "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """For each rule: a and ln N* at the budgets' geometric mean with their 95% intervals, the
        budgets accepted, and the bias the law implies on these grids."""
        entries = []
        for rule, fit in self.fits.items():
            implied = self.diagnostics.implied[rule]
            entries.append({"quantity": f"a ({rule})", "estimate": fit.a, **bounds(fit.a_interval),
                            "budgets": int(fit.accepted.sum()), "implied_bias": implied.exponent_bias})
            entries.append({"quantity": f"ln N*({fit.pivot:.3g}) ({rule})", "estimate": fit.log_n_pivot,
                            **bounds(fit.log_n_pivot_interval),
                            "budgets": int(fit.accepted.sum()), "implied_bias": implied.intercept_bias})
        return rows(entries)

    def plot(self) -> Figures:
        """``isoflop_rules``: each budget's curve with its minimum by each rule and its refusals;
        the optima against C with each rule's power law."""
        from jaxscale.plots.isoflop import rules_figure

        return Figures(isoflop_rules=rules_figure(self.profiles, self.fits, self.diagnostics))

    def _title(self) -> str:
        return f"IsoflopReport: {len(self.profiles.budgets)} budgets, {len(self.profiles.loss)} runs"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        ref = numbers["reference"]
        lines = [f"jaxscale isoflop: {len(numbers['grid']['budgets'])} budgets; reference {ref['law']} by "
                 f"{ref['method']}: a = {ref['a']:.4f}"]
        for rule, fit in numbers["rules"].items():
            a = "undefined (fewer than two budgets accepted)" if fit["a"] is None else f"{fit['a']:.4f}"
            ci = fit["a_interval"]
            span = "" if ci is None else f"   95% [{ci[0]:.4f}, {ci[1]:.4f}] ({fit['interval']}, {fit['resamples']})"
            lost = round(fit["undefined_share"] * fit["resamples"]) if ci else 0
            span += f"; undefined in {lost} of {fit['resamples']} resamples" if lost else ""
            lines.append(f"  a ({rule}){'':<{9 - len(rule)}} {a}{span}")
        lines.append(f"  {'budget C':<10} {'width':>6} {'centring':>9}  " + "  ".join(f"{r + ' N*':>12}" for r in numbers["rules"]))
        for j, b in enumerate(numbers["grid"]["budgets"]):
            stars = [fit["budgets"][j]["n_star"] for fit in numbers["rules"].values()]
            lines.append(f"  {b['C']:<10.3g} {b['width_decades']:>6.2f} {b['centring_decades']:>+9.2f}  "
                         + "  ".join(f"{'refused' if s is None else format(s, '.4g'):>12}" for s in stars))
        refusals = [r for fit in numbers["rules"].values() for r in fit["refusals"]]
        lines += [f"  refused: {r}" for r in refusals]
        lines += [f"  WARNING: {w}" for w in numbers["grid"]["warnings"]]
        lines += [f"wrote {path}" for path in numbers.get("files", [])]
        return lines


def isoflop(runs: Runs, *, rules: Sequence[str] = RULES, interval: str = "resample", resamples: int = RESAMPLES,
            sigma: float = SEED_NOISE, seed: int = 0, groups: ArrayLike | None = None) -> IsoflopReport:
    """IsoFLOP analysis: each budget's optimum by each rule, a with its interval, refusals and
    the grid's diagnostics.

    Args:
        runs: runs at a few budgets of compute, several sizes each (a
            :class:`~jaxscale.tables.table.RunsTable`, a CSV path or a DataFrame).
        rules: any of ``"parabola"`` (Approach 2), ``"akima"`` (Porian et al. 2024), ``"law"``
            (the law refitted locally).
        interval: ``"resample"`` (points redrawn within each budget) or ``"seed-noise"``
            (Porian et al.'s noise added to each loss).
        resamples: resamples of the interval (0: none).
        sigma: the seed noise's standard deviation (``"seed-noise"``).
        seed: the resampling seed.
        groups: a budget label per run (default: runs grouped by compute within 0.05 decades).

    Returns:
        An :class:`IsoflopReport`.
    """
    from jaxscale.fitting.isoflop_grid import diagnose
    from jaxscale.fitting.isoflop_optima import fit_rule, profiles
    from jaxscale.fitting.vpnls import fit_vpnls

    start = time.perf_counter()
    unknown = [r for r in rules if r not in RULES]
    if unknown or not rules:
        raise ValueError(f"rules must be among {', '.join(RULES)}, got {list(rules)}")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
    if resamples < 0 or resamples == 1:
        raise ValueError(f"resamples must be 0 (none) or >= 2, got {resamples}")
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a finite number > 0, got {sigma}")
    table = as_runs(runs)
    data = profiles(table, groups)
    reference = fit_vpnls(table)
    fits = {rule: fit_rule(rule, data, reference=reference, interval_kind=interval, resamples=resamples,
                           sigma=sigma, seed=seed) for rule in rules}
    return IsoflopReport(data, reference, fits, diagnose(data, reference, fits), time.perf_counter() - start)
