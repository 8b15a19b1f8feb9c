"""``design``: which runs to train next for a target quantity, within a compute budget
(:mod:`jaxscale.planning.selection`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import pandas as pd
from jax.typing import ArrayLike

from jaxscale._api._results import Figures, Result, rows
from jaxscale._api.runs import Runs, as_runs
from jaxscale.fitting.approach3 import FitResult
from jaxscale.laws.law import Law
from jaxscale.planning.target_intervals import gaussian_interval
from jaxscale.planning.selection import Plan
from jaxscale.tables.table import RunsTable
from jaxscale.support.significant import format_or_undefined as _shown


_BELIEF_NAMES = {"prior": "prior", "robust": "sandwich", "ensemble": "bootstrap ensemble"}


@dataclass(frozen=True, repr=False)
class DesignReport(Result):
    """The runs to train next, in order, and what each is expected to do to the target.

    Attributes:
        plan: the greedy plan (:class:`~jaxscale.planning.selection.Plan`): candidates, their value
            per FLOP, the chosen runs.
        fit: the Approach-3 fit of the runs so far (None: planned from the law's priors).
        runs: the runs so far (None without).
        seconds: the verb's wall time.
    """

    plan: Plan
    fit: FitResult | None
    runs: RunsTable | None
    seconds: float

    @property
    def law(self) -> Law:
        return self.plan.law

    def _interval(self, variance: float) -> tuple[float, float]:
        """The 95% Gaussian interval of the target at the plan's estimate for a variance (design scale)
        under the plan's belief (the sandwich covariance at a fit, the bootstrap ensemble's, or the priors)."""
        plan = self.plan
        scale = math.log(plan.estimate) if plan.target.log else plan.estimate
        interval = gaussian_interval(scale, math.sqrt(variance) if variance >= 0 else math.nan, 0.95, plan.target.log)
        return interval.lower, interval.upper

    def _report(self) -> dict[str, Any]:
        plan = self.plan
        table = plan.table()
        chosen = []
        for order, row in table.iterrows():
            lo, hi = self._interval(row["sd_after"] ** 2)
            chosen.append({"order": int(order), **{k: float(row[k]) for k in table.columns},
                           "interval95_after": [lo, hi]})
        lo, hi = self._interval(plan.variance)
        return {
            "law": plan.law.name, "target": plan.target.name, "criterion": plan.criterion, "belief": plan.kind,
            "from": "priors" if self.fit is None else f"Approach-3 fit of {self.fit.n_points} runs",
            "estimate": plan.estimate, "sd_now": math.sqrt(plan.variance) if plan.variance >= 0 else None,
            "interval95_now": [lo, hi], "sigma": plan.belief.sigma, "budget": plan.budget, "spent": plan.spent,
            "candidates": len(plan.n), "runs": chosen, "seconds": self.seconds,
        }

    def summary(self) -> pd.DataFrame:
        """The target now and after each chosen run (estimate, its expected 95% interval under the belief),
        with the run's N, D, FLOP, the cumulative FLOP and the variance it removes."""
        plan = self.plan
        entries = [{"quantity": f"{plan.target.name} now", "estimate": plan.estimate,
                    **dict(zip(("lower", "upper"), self._interval(plan.variance)))}]
        for order, row in plan.table().iterrows():
            lo, hi = self._interval(row["sd_after"] ** 2)
            entries.append({"quantity": f"{plan.target.name} after run {order}", "estimate": plan.estimate,
                            "lower": lo, "upper": hi,
                            **{k: row[k] for k in ("N", "D", "C", "cumulative_C", "reduction")}})
        return rows(entries)

    def plot(self) -> Figures:
        """``design_candidates``: the candidates in (N, D) coloured by value per FLOP, the chosen ones numbered."""
        from jaxscale.plots.planning import candidates_figure

        so_far = (None, None) if self.runs is None else (self.runs.n, self.runs.d)
        return Figures(design_candidates=candidates_figure(self.plan, *so_far))

    def _title(self) -> str:
        source = "the priors" if self.fit is None else f"{self.fit.n_points} runs"
        return (f"DesignReport: {len(self.plan.choices)} runs for {self.plan.target.name} from {source}, "
                f"{self.plan.spent:.3g} of {self.plan.budget:.3g} FLOP")

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lo, hi = numbers["interval95_now"]
        lines = [f"{numbers['law']} law, from {numbers['from']}: {numbers['target']} = "
                 f"{_shown(numbers['estimate'], '.4g')} (95% {_BELIEF_NAMES[numbers['belief']]} "
                 f"{_shown(lo, '.4g')} to {_shown(hi, '.4g')}); noise sigma = {numbers['sigma']:.3g}"]
        if numbers["criterion"] != "variance":
            lines.append("  the target is undefined at this fit: runs chosen by the information they add (D-optimality)")
        lines += [f"{len(numbers['runs'])} runs of {numbers['candidates']} candidates, {numbers['spent']:.3g} of "
                  f"{numbers['budget']:.3g} FLOP:",
                  f"{'#':>3} {'N':>10} {'D':>10} {'D/N':>7} {'C':>10} {'cum. C':>10} {'95% after':>24}"]
        for row in numbers["runs"]:
            lo, hi = row["interval95_after"]
            lines.append(f"{row['order']:>3} {row['N']:>10.3g} {row['D']:>10.3g} {row['tokens_per_param']:>7.3g} "
                         f"{row['C']:>10.3g} {row['cumulative_C']:>10.3g} {_shown(lo, '>10.4g')} to {_shown(hi, '<10.4g')}")
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


def design(runs: Runs | None = None, *, target: str = "N*:1e24", budget: float, law: str | Law = "chinchilla",
           candidates: tuple[ArrayLike, ArrayLike] | None = None, max_cost: float | None = None,
           min_cost: float | None = None, max_runs: int | None = None, noise: float | None = None,
           belief: str = "robust") -> DesignReport:
    """Propose the next runs that shrink a target's uncertainty most per FLOP.

    The runs so far are fitted by Approach 3; the robust belief at that fit (the sandwich covariance
    of the Huber fit with the law's priors, each candidate observed with the residual scale at its
    distance from the compute-optimal tokens per parameter: :mod:`jaxscale.planning.ratio_noise`),
    or the law's priors without runs, gives each candidate (N, D) the variance of the target it
    would remove, (g^T Sigma j)^2 / (sigma_x^2 + j^T Sigma j), per FLOP of its cost 6 N D; the plan takes the best
    affordable one, updates the belief and repeats until ``budget`` is spent
    (:mod:`jaxscale.planning.selection`).

    Args:
        runs: the runs so far (a table, CSV path, DataFrame or a function returning a table); None:
            plan from the law's priors.
        target: what the study decides: ``N*:C``, ``D*:C``, ``a:C`` (C in FLOP) or ``L:N,D``
            (:func:`jaxscale.planning.targets.parse_target`).
        budget: FLOP the new runs may spend together.
        law: a law of N and D, by object or name.
        candidates: the candidate runs (N, D) as two arrays; default a grid up to ``max_cost``
            from the runs' smallest model size (:func:`jaxscale.planning.candidates.grid_beside_runs`).
        max_cost: the most FLOP one candidate of the grid may cost (default: ``budget``).
        min_cost: the least (default: none).
        max_runs: stop after this many runs.
        noise: the residual scale of log loss of a new run near the compute-optimal ratio, scaled
            up away from it (default: the sandwich's per-run scale at the fit, or 1% without runs).
        belief: ``"robust"``, or ``"ensemble"``: the plan reads what each run would remove off the
            spread of 100 bootstrap refits of the fit (the target and each candidate's predicted
            loss; :mod:`jaxscale.planning.ensemble_belief`) instead of the sandwich covariance at
            one point; needs ``runs``.

    Returns:
        A :class:`DesignReport`.
    """
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.laws.registry import law_by_name
    from jaxscale.planning.candidates import grid_beside_runs
    from jaxscale.planning.selection import check_candidates, plan_runs
    from jaxscale.planning.targets import parse_target

    start = time.perf_counter()
    law = law_by_name(law)
    goal = parse_target(target, law)
    if candidates is not None and (max_cost is not None or min_cost is not None):
        raise ValueError("max_cost and min_cost shape the default grid; not with candidates")
    table = None if runs is None else as_runs(runs)
    n, d = check_candidates(*candidates) if candidates is not None else grid_beside_runs(
        budget if max_cost is None else max_cost, None if table is None else table.n, min_cost=min_cost)
    fit = None if table is None else fit_approach3(table, law=law)
    if fit is not None:
        fit.check_settled("plan from")
    plan = plan_runs(law, goal, n, d, budget, fit=fit, sigma=noise, max_runs=max_runs, belief=belief)
    return DesignReport(plan, fit, table, time.perf_counter() - start)
