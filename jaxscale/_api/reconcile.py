"""``reconcile``: Pearce & Song's (2024) reconciliation of Kaplan's and Chinchilla's exponents,
on a published parameter set or on one's own runs."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jaxscale._api._results import Figures, Result, bounds, rows

if TYPE_CHECKING:
    import pandas as pd

    from jaxscale._api.runs import Runs

#: The quantities of the reconciliation of a published set: (key, meaning, format).
ROWS = (
    ("gamma", "γ  (Eq. 7 fit to Table A9)", "{:.0f}"),
    ("delta", "δ  (Eq. 7 fit to Table A9)", "{:.4f}"),
    ("aspect_ratio", "implied aspect ratio d/l", "{:.1f}"),
    ("exponent_nonembedding", "N*_\\E ∝ C_\\E^a, Step-4 frontier fit", "{:.4f}"),
    ("exponent_nonembedding_analytic", "  same window, continuous optimum", "{:.4f}"),
    ("exponent_total", "N*_T ∝ C_T^a, Step-4 frontier fit", "{:.4f}"),
    ("exponent_total_analytic", "  β/(α+β), Eq. 14", "{:.4f}"),
    ("limit_small", "g as N*_\\E → 0, β/(α/3+β)", "{:.4f}"),
    ("limit_large", "g as N*_\\E → ∞, β/(α+β)", "{:.4f}"),
    ("transition_size", "transition N_\\E = γ^(3/2)", "{:.3g}"),
    ("g_peak", "peak of g (transition phase)", "{:.4f}"),
    ("g_peak_size", "  at N*_\\E", "{:.3g}"),
    ("max_abs_error_autodiff_vs_eq17", "max |g_autodiff − g_Eq17|, N 1e2..1e12", "{:.1e}"),
    ("max_abs_error_solver_vs_eq16", "max |log C_solver − log C_Eq16|", "{:.1e}"),
)


@dataclass(frozen=True, repr=False)
class ReconcileReport(Result):
    """Pearce & Song's Section 2: Steps 1-4 on a published parameter set
    (:mod:`jaxscale.reconciliation.pipeline`), or the observed and predicted exponents of a runs
    table on both parameter bases (:mod:`jaxscale.reconciliation.on_runs`).

    Attributes:
        result: the pipeline's result (``Reconciliation`` or ``RunsReconciliation``).
        source: the runs' source, or None for a published set.
        seconds: the verb's wall time.
    """

    result: Any
    source: str | None
    seconds: float

    def _report(self) -> dict[str, Any]:
        if self.source is None:
            from jaxscale.reconciliation.pipeline import PAPER_VALUES, summary

            return {**summary(self.result), "paper": PAPER_VALUES[self.result.spec], "seconds": self.seconds}
        from jaxscale.reconciliation.on_runs import summary

        return {"runs": self.source, **summary(self.result), "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """Published set: each quantity of Steps 1-4 beside the paper's value. Runs: the exponent
        a of N* ∝ C^a on each basis and their shift, observed (Approach 1) and predicted
        (Step 4 on the runs' own law), with 95% intervals."""
        numbers = self._numbers
        if self.source is None:
            return rows({"quantity": k, "estimate": numbers[k], "paper": numbers["paper"].get(k),
                         "meaning": meaning.strip()} for k, meaning, _ in ROWS)
        return rows({"quantity": f"{kind} a, {basis}", "estimate": entry["a"], **bounds(entry.get("ci95"))}
                    for kind in ("observed", "predicted") for basis, entry in numbers[kind].items())

    def plot(self) -> Figures:
        """Published set: Figures 1-4 of the paper, named ``figN_..._SPEC``; runs: the embedding
        fit and the frontier on both bases, ``fig1_embedding_fit_runs`` and ``fig4_frontier_runs``."""
        if self.source is None:
            from jaxscale.plots.reconcile import FIGURES

            suffix = self.result.spec
        else:
            from jaxscale.plots.runs_reconciliation import FIGURES

            suffix = "runs"
        return Figures({f"{name}_{suffix}": make(self.result) for name, make in FIGURES.items()})

    def _title(self) -> str:
        what = f"the {self.result.spec} parameters" if self.source is None else self.source
        return f"ReconcileReport: Pearce & Song (2024) Section 2 on {what}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lines = _published_text(numbers) if self.source is None else _runs_text(numbers)
        return [*lines, *(f"figure: {f}" for f in numbers.get("files", [])), f"done in {numbers['seconds']:.1f} s"]


def _published_text(numbers: dict[str, Any]) -> list[str]:
    """Each quantity of Steps 1-4 (:data:`ROWS`) beside the paper's value."""
    paper = numbers["paper"]
    lines = [f"Pearce & Song (2024) reconciliation, {numbers['spec']} parameters", "",
             f"{'quantity':<44} {'jaxscale':>12} {'paper':>10}", "-" * 68]
    for key, label, fmt in ROWS:
        theirs = fmt.format(paper[key]) if key in paper else ""
        lines.append(f"{label:<44} {fmt.format(numbers[key]):>12} {theirs:>10}")
    return [*lines, "-" * 68]


def _interval_text(entry: dict[str, Any]) -> str:
    if entry["a"] is None:
        return "undefined"
    ci = entry.get("ci95")
    return f"{entry['a']:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def _runs_text(numbers: dict[str, Any]) -> list[str]:
    """The table's own Step 1 and law, then the exponents observed and predicted on each basis."""
    law = numbers["law"]
    lines = [f"Pearce & Song (2024) Section 2 on {numbers['runs']} ({numbers['models']} model sizes)", "",
             f"Step 1 on the table: gamma = {numbers['gamma']:.4g}, delta = {numbers['delta']:.4f}",
             f"Chinchilla law on the last checkpoints of the tuned runs ({law['n_points']}): "
             f"alpha = {law['alpha']:.3f}, beta = {law['beta']:.3f}, E = {law['E']:.3f}, a = {law['a']:.3f}", "",
             f"{'N* ∝ C^a':<28} {'observed (Approach 1)':>26} {'predicted (Step 4)':>26}"]
    for key, label in (("total", "total basis, N_T vs C_T"), ("nonembedding", "non-embedding, N_\\E vs C_\\E"),
                       ("shift", "shift a_\\E - a_T")):
        lines.append(f"{label:<28} {_interval_text(numbers['observed'][key]):>26} "
                     f"{_interval_text(numbers['predicted'][key]):>26}")
    return lines


def reconcile(published: str | None = None, runs: Runs | None = None, *, bootstrap: int = 200,
              seed: int = 0) -> ReconcileReport:
    """Pearce & Song's (2024) reconciliation of Kaplan's and Chinchilla's compute-optimal exponents.

    On a published Chinchilla-law parameter set: Step 1 fits N_T = N_E + gamma N_E^delta (Eq. 7)
    to Chinchilla's Table A9, Step 2 writes the law in non-embedding terms (Eq. 15), Step 3 solves
    the optimum and its local exponent by implicit differentiation (Eqs. 16-17), Step 4 simulates
    Kaplan-range training curves and fits the frontier. On runs with both parameter bases and
    run identity: the exponents observed by Approach 1 on each basis against those Section 2
    predicts from the runs' own law and embedding relation.

    Args:
        published: ``"epoch"`` (Besiroglu et al., the default) or ``"chinchilla"`` (Hoffmann et al.).
        runs: instead, a runs table (:func:`jaxscale.load_runs` with ``run_by``), CSV path or DataFrame.
        bootstrap: with runs, the resamples behind every interval (>= 2).
        seed: with runs, the resampling seed.

    Returns:
        A :class:`ReconcileReport`.
    """
    start = time.perf_counter()
    if runs is None:
        from jaxscale.laws import chinchilla
        from jaxscale.reconciliation.pipeline import reconcile_spec

        name = published or "epoch"
        chinchilla.LAW.published_params(name)  # an unknown name: the choices, before any work
        return ReconcileReport(reconcile_spec(name), None, time.perf_counter() - start)
    if published is not None:
        raise ValueError("reconcile takes a published parameter set or runs, not both")
    if bootstrap < 2:
        raise ValueError(f"bootstrap must be >= 2, got {bootstrap}")
    from jaxscale._api.runs import (
        as_runs,  # a published set needs no table (nor pandas)
    )
    from jaxscale.reconciliation.on_runs import reconcile_runs

    table = as_runs(runs)
    return ReconcileReport(reconcile_runs(table, bootstrap_resamples=bootstrap, seed=seed), table.source,
                           time.perf_counter() - start)
