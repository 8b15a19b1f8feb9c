"""``jaxscale reconcile``: Pearce & Song's Section 2 on embedded defaults."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROWS = (
    # (key, label, format)
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


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "reconcile",
        help="reproduce Pearce & Song's reconciliation of Kaplan and Chinchilla",
        description="Fit Eq. 7 to Chinchilla's Table A9, solve the non-embedding optimum by "
        "implicit differentiation, simulate Kaplan-range training curves and fit the frontier "
        "(Pearce & Song 2024, Section 2). Runs on embedded published inputs.",
    )
    p.add_argument("--spec", choices=("epoch", "chinchilla"), default="epoch",
                   help="published law parameters: Besiroglu et al. (epoch) or Hoffmann et al. (chinchilla)")
    p.add_argument("--runs", type=Path, default=None, metavar="CSV",
                   help="instead of published inputs, a runs table with both parameter bases and run identity: "
                   "observed Approach-1 exponents on each basis against Section 2's prediction from the "
                   "table's own law and embedding relation")
    p.add_argument("--run-by", default=None, metavar="COLS",
                   help="with --runs: columns that together name a run (e.g. model,peak_lr,total_steps,sweep)")
    p.add_argument("--where", action="append", default=[], metavar="COL=VALUE",
                   help="with --runs: keep only rows whose COL equals VALUE (repeatable)")
    p.add_argument("--bootstrap", type=int, default=200, metavar="R",
                   help="with --runs: bootstrap resamples behind every interval (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="with --runs: bootstrap seed (default: %(default)s)")
    p.add_argument("--out", type=Path, default=Path("reconcile_figures"),
                   help="directory for the PNG figures (default: %(default)s)")
    p.add_argument("--no-figures", action="store_true", help="skip writing figures")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.runs is not None:
        return run_on_table(args)
    start = time.perf_counter()
    from jaxscale.reconciliation.pipeline import PAPER_VALUES, reconcile_spec, summary

    result = reconcile_spec(args.spec)
    numbers = summary(result)
    figures = [] if args.no_figures else _write_figures(result, args.out)
    numbers["seconds"] = time.perf_counter() - start
    numbers["figures"] = [str(f) for f in figures]
    numbers["paper"] = PAPER_VALUES[args.spec]

    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print_table)
    return 0


def run_on_table(args: argparse.Namespace) -> int:
    """``jaxscale reconcile --runs TABLE``: :mod:`jaxscale.reconciliation.on_runs` on the table."""
    start = time.perf_counter()
    from jaxscale.cli.fit import where_conditions
    from jaxscale.reconciliation.on_runs import reconcile_runs, summary
    from jaxscale.runs.table import load_runs

    if args.bootstrap < 2:
        raise ValueError(f"--bootstrap must be >= 2, got {args.bootstrap}")
    run_by = [c.strip() for c in args.run_by.split(",")] if args.run_by else None
    table = load_runs(args.runs, run_by=run_by, where=where_conditions(args.where))
    result = reconcile_runs(table, bootstrap_resamples=args.bootstrap, seed=args.seed)
    numbers = {"runs": str(args.runs), **summary(result)}
    if not args.no_figures:
        from jaxscale.plots.runs_reconciliation import FIGURES

        numbers["figures"] = [str(p) for p in _write_figures(result, args.out, FIGURES, "runs")]
    numbers["seconds"] = time.perf_counter() - start
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print_table_runs)
    return 0


def _write_figures(result, out: Path, figures: dict | None = None, suffix: str | None = None) -> list[Path]:
    from jaxscale.plots.reconcile import FIGURES

    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out {out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in (figures or FIGURES).items():
        path = out / f"{name}_{suffix or result.spec}.png"
        make(result).savefig(path, dpi=110)
        paths.append(path)
    return paths


def _interval_text(entry: dict) -> str:
    if entry["a"] is None:
        return "undefined"
    ci = entry.get("ci95")
    return f"{entry['a']:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def _print_table_runs(numbers: dict) -> None:
    law = numbers["law"]
    print(f"Pearce & Song (2024) Section 2 on {numbers['runs']} ({numbers['models']} model sizes)\n")
    print(f"Step 1 on the table: gamma = {numbers['gamma']:.4g}, delta = {numbers['delta']:.4f}")
    print(f"Chinchilla law on the last checkpoints of the tuned runs ({law['n_points']}): "
          f"alpha = {law['alpha']:.3f}, beta = {law['beta']:.3f}, E = {law['E']:.3f}, a = {law['a']:.3f}\n")
    print(f"{'N* ∝ C^a':<28} {'observed (Approach 1)':>26} {'predicted (Step 4)':>26}")
    for key, label in (("total", "total basis, N_T vs C_T"), ("nonembedding", "non-embedding, N_\\E vs C_\\E"),
                       ("shift", "shift a_\\E - a_T")):
        print(f"{label:<28} {_interval_text(numbers['observed'][key]):>26} {_interval_text(numbers['predicted'][key]):>26}")
    for f in numbers.get("figures", []):
        print(f"figure: {f}")
    print(f"done in {numbers['seconds']:.1f} s")


def _print_table(numbers: dict) -> None:
    paper = numbers["paper"]
    print(f"Pearce & Song (2024) reconciliation, {numbers['spec']} specification\n")
    print(f"{'quantity':<44} {'jaxscale':>12} {'paper':>10}")
    print("-" * 68)
    for key, label, fmt in ROWS:
        ours = fmt.format(numbers[key])
        theirs = fmt.format(paper[key]) if key in paper else ""
        print(f"{label:<44} {ours:>12} {theirs:>10}")
    print("-" * 68)
    for f in numbers["figures"]:
        print(f"figure: {f}")
    print(f"done in {numbers['seconds']:.1f} s")
