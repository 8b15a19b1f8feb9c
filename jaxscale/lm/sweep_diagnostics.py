"""The diagnostics a sweep reports beside its exponents (docs/sweep_protocol.md).

Three questions decide whether a Method-1 exponent of a sweep measures anything:

1. **Was each size's learning rate tuned?** Per size, the final validation loss at every rate
   tried and whether the best one sits at an edge of the rates tried (then the optimum may lie
   beyond them, and the size's curve is worse than a tuned one by an unknown amount).
2. **Who holds the frontier?** Per basis, each size that is N*(C) somewhere in the budget
   range, with the budgets where it is and whether they are fitted; fewer than three fitted
   sizes give no exponent.
3. **Do the curves cross?** For each pair of consecutive sizes (by N_T), the compute C_T at which
   the larger size's best-rate constant curve first drops below the smaller's, the compute from
   which it stays below, and how often the order changes (more than once: the curves are closer
   than their noise). A pair that never crosses means the larger size never overtakes within
   the sweep, so the frontier cannot move from one to the other.

The frontier rows cover every budget of the range and give the share held by the smallest and
by the largest size trained: there N* is censored (the optimum may lie beyond the sizes
trained), so a large share flattens N*(C) by construction, and the interior rule leaves those
budgets out of the fit (each row says whether its budgets were fitted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxscale.fitting.frontier_laws import FrontierLaws
from jaxscale.tables.table import RunsTable


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


def frontier_rows(whole: FrontierLaws, fitted: FrontierLaws, size_of: dict[float, str]) -> list[dict[str, Any]]:
    """Per size on the ``whole`` frontier of the budget range: its name, the first and last budget
    where it is N*, how many (and what share) of the range's budgets it holds, and whether its
    budgets are among the ``fitted`` ones (the interior rule leaves out the edge sizes')."""
    rows = []
    for n in whole.sizes:
        c = whole.c[whole.n_opt == n]
        rows.append({"size": size_of.get(float(n), f"N={n:.4g}"), "n": float(n), "c_first": float(c.min()),
                     "c_last": float(c.max()), "budgets": int(len(c)), "share": len(c) / len(whole.c),
                     "fitted": bool(np.isin(n, fitted.sizes))})
    return rows


def crossings(smaller: tuple[np.ndarray, np.ndarray], larger: tuple[np.ndarray, np.ndarray]
              ) -> tuple[float | None, float | None, int]:
    """Where ``larger``'s loss is below ``smaller``'s, on the union of both curves' evaluation
    points inside their common range (each curve (C, loss) sorted by C, read linearly in log C):
    the first such compute, the compute from which it stays below to the end of that range
    (None for either if there is none), and how many times the order changes."""
    low, high = max(smaller[0][0], larger[0][0]), min(smaller[0][-1], larger[0][-1])
    grid = np.union1d(smaller[0], larger[0])
    grid = grid[(grid >= low) & (grid <= high)]
    if grid.size == 0:
        return None, None, 0
    gap = np.interp(np.log(grid), np.log(larger[0]), larger[1]) - np.interp(np.log(grid), np.log(smaller[0]), smaller[1])
    below = gap < 0
    changes = int(np.count_nonzero(below[1:] != below[:-1]))
    if not below.any():
        return None, None, changes
    above = np.flatnonzero(~below)
    stays = None if not below[-1] else float(grid[above[-1] + 1 if above.size else 0])
    return float(grid[np.argmax(below)]), stays, changes


def crossing_rows(curves: RunsTable, run_of: dict[str, str], sizes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For consecutive sizes by N_T (each with its best-rate constant run ``run_of[size]``), the
    compute C_T at which the larger first overtakes the smaller."""

    def curve(size: str) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(curves.run_id == run_of[size])
        rows = rows[np.argsort(curves.c[rows])]
        return curves.c[rows], curves.loss[rows]

    ordered = [s["name"] for s in sorted(sizes, key=lambda s: s["n_total"]) if s["name"] in run_of]
    rows = []
    for a, b in zip(ordered, ordered[1:]):
        first, stays, changes = crossings(curve(a), curve(b))
        rows.append({"smaller": a, "larger": b, "c_first_below": first, "c_below_from": stays, "order_changes": changes})
    return rows


def sweep_diagnostics(curves: RunsTable, sizes: list[dict[str, Any]], losses: dict[str, dict[float, float]],
                      best: dict[str, float], run_of: dict[str, str],
                      frontiers: dict[str, tuple[FrontierLaws, FrontierLaws]]) -> dict[str, Any]:
    """The three diagnostics of the module docstring, as plain data for ``summary.json``:
    ``sizes`` as :func:`jaxscale.lm.sweep.model_sizes` gives them, ``losses`` the final
    loss per size and rate, ``run_of`` each size's best-rate constant run, ``frontiers``
    experiment 1's (whole frontier, fit) per basis."""
    column = {"total": "n_total", "nonembedding": "n_nonembedding"}
    return {
        "learning_rates": learning_rate_rows(losses, best),
        "frontier": {basis: frontier_rows(whole, fit, {float(s[column[basis]]): s["name"] for s in sizes})
                     for basis, (whole, fit) in frontiers.items()},
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
        fitted = sum(r["fitted"] for r in rows)
        lines += ["", f"## Frontier of experiment 1, {basis} basis: {len(rows)} sizes, {fitted} fitted", "",
                  "| size | N | budgets C where it is N* | budgets (share) | fitted |", "|---|---|---|---|---|"]
        lines += [f"| {r['size']} | {r['n']:.4g} | {r['c_first']:.3g} – {r['c_last']:.3g} | {r['budgets']} "
                  f"({r['share']:.0%}) | {'yes' if r['fitted'] else 'no (edge size)'} |" for r in rows]
    lines += ["", "## Curve crossings (best-rate constant runs, C_T, within both curves' range)", "",
              "| smaller | larger | first C_T with the larger below | below from C_T on | order changes |",
              "|---|---|---|---|---|"]
    lines += [f"| {r['smaller']} | {r['larger']} | {_compute(r['c_first_below'])} | {_compute(r['c_below_from'])} | "
              f"{r['order_changes']} |" for r in report["crossings"]]
    return "\n".join(lines) + "\n"
