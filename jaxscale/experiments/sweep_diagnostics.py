"""The diagnostics a sweep reports beside its exponents (docs/sweep_protocol.md).

Three questions decide whether a Method-1 exponent of a sweep measures anything:

1. **Was each size's learning rate tuned?** Per size, the final validation loss at every rate
   tried and whether the best one sits at an edge of the rates tried (then the optimum may lie
   beyond them, and the size's curve is worse than a tuned one by an unknown amount).
2. **Who holds the frontier?** Per basis, each size that is N*(C) somewhere on the fitted
   budgets, with the budgets where it is; fewer than three sizes give no exponent.
3. **Do the curves cross?** For each pair of consecutive sizes (by N_T), the compute C_T at which
   the larger size's best-rate constant curve first drops below the smaller's, if it does where
   both were evaluated. A pair that never crosses means the larger size never overtakes within
   the sweep, so the frontier cannot move from one to the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxscale.fit.allocation_laws import AllocationLaws
from jaxscale.runs import RunsTable


def learning_rate_rows(losses: dict[str, dict[float, float]], best: dict[str, float]) -> list[dict[str, Any]]:
    """Per size: the rates tried with their final losses, the best rate, and whether it is at an edge."""
    rows = []
    for size, by_rate in losses.items():
        rates = sorted(by_rate)
        lr = best.get(size)
        rows.append({
            "size": size, "rates": rates, "final_losses": [by_rate[r] for r in rates], "best_lr": lr,
            "at_edge": lr is None or lr in (rates[0], rates[-1]),
        })  # fmt: skip
    return rows


def frontier_rows(fit: AllocationLaws, size_of: dict[float, str]) -> list[dict[str, Any]]:
    """Per size on the fitted frontier: its name, and the first and last budget where it is N*."""
    rows = []
    for n in fit.sizes:
        c = fit.c[fit.n_opt == n]
        rows.append({"size": size_of.get(float(n), f"N={n:.4g}"), "n": float(n), "c_first": float(c.min()),
                     "c_last": float(c.max()), "budgets": int(len(c))})
    return rows


def first_crossing(smaller: tuple[np.ndarray, np.ndarray], larger: tuple[np.ndarray, np.ndarray]) -> float | None:
    """The first compute, on the union of both curves' evaluation points inside their common
    range, at which ``larger``'s loss (linear in log C) is below ``smaller``'s; None if never.
    Each curve is (C, loss) sorted by C."""
    low, high = max(smaller[0][0], larger[0][0]), min(smaller[0][-1], larger[0][-1])
    grid = np.union1d(smaller[0], larger[0])
    grid = grid[(grid >= low) & (grid <= high)]
    if grid.size == 0:
        return None
    gap = np.interp(np.log(grid), np.log(larger[0]), larger[1]) - np.interp(np.log(grid), np.log(smaller[0]), smaller[1])
    below = np.flatnonzero(gap < 0)
    return float(grid[below[0]]) if below.size else None


def crossing_rows(curves: RunsTable, run_of: dict[str, str], sizes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For consecutive sizes by N_T (each with its best-rate constant run ``run_of[size]``), the
    compute C_T at which the larger first overtakes the smaller."""

    def curve(size: str) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(curves.run_id == run_of[size])
        rows = rows[np.argsort(curves.c[rows])]
        return curves.c[rows], curves.loss[rows]

    ordered = [s["name"] for s in sorted(sizes, key=lambda s: s["n_total"]) if s["name"] in run_of]
    return [{"smaller": a, "larger": b, "c_crossing": first_crossing(curve(a), curve(b))}
            for a, b in zip(ordered, ordered[1:])]


def sweep_diagnostics(curves: RunsTable, sizes: list[dict[str, Any]], losses: dict[str, dict[float, float]],
                      best: dict[str, float], run_of: dict[str, str], frontiers: dict[str, AllocationLaws]
                      ) -> dict[str, Any]:
    """The three diagnostics of the module docstring, as plain data for ``summary.json``:
    ``sizes`` as :func:`jaxscale.experiments.sweep.model_sizes` gives them, ``losses`` the final
    loss per size and rate, ``run_of`` each size's best-rate constant run, ``frontiers``
    experiment 1's fit per basis."""
    column = {"total": "n_total", "nonembedding": "n_nonembedding"}
    return {
        "learning_rates": learning_rate_rows(losses, best),
        "frontier": {basis: frontier_rows(fit, {float(s[column[basis]]): s["name"] for s in sizes})
                     for basis, fit in frontiers.items()},
        "crossings": crossing_rows(curves, run_of, sizes),
    }


def _compute(c: float | None) -> str:
    return "never" if c is None else f"{c:.3g}"


def format_diagnostics(report: dict[str, Any]) -> str:
    """Markdown of :func:`sweep_diagnostics`' report."""
    lines = ["## Learning rates (constant schedule, final validation loss)", "",
             "| size | rates tried: final loss | best | at a grid edge |", "|---|---|---|---|"]
    for r in report["learning_rates"]:
        tried = ", ".join(f"{lr:g}: {loss:.4f}" for lr, loss in zip(r["rates"], r["final_losses"]))
        lines.append(f"| {r['size']} | {tried} | {r['best_lr']} | {'yes' if r['at_edge'] else 'no'} |")
    for basis, rows in report["frontier"].items():
        lines += ["", f"## Frontier of experiment 1, {basis} basis: {len(rows)} sizes", "",
                  "| size | N | budgets C where it is N* | budgets |", "|---|---|---|---|"]
        lines += [f"| {r['size']} | {r['n']:.4g} | {r['c_first']:.3g} – {r['c_last']:.3g} | {r['budgets']} |"
                  for r in rows]
    lines += ["", "## Curve crossings (best-rate constant runs, C_T)", "", "| smaller | larger | first C_T where the larger is below |",
              "|---|---|---|"]
    lines += [f"| {r['smaller']} | {r['larger']} | {_compute(r['c_crossing'])} |" for r in report["crossings"]]
    return "\n".join(lines) + "\n"
