"""``jaxscale reconcile``: Pearce & Song's Section 2 on a published parameter set or on one's own
runs (:func:`jaxscale.reconcile`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxscale._api.reconcile import ROWS
from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "reconcile", "reproduce Pearce & Song's reconciliation of Kaplan and Chinchilla",
        "Fit Eq. 7 to Chinchilla's Table A9, solve the non-embedding optimum by implicit differentiation, "
        "simulate Kaplan-range training curves and fit the frontier (Pearce & Song 2024, Section 2), on a "
        "published parameter set; or, given RUNS with both parameter bases and run identity, the observed "
        "Approach-1 exponents on each basis against Section 2's prediction from the table's own law and "
        "embedding relation. The figures are this command's product: they are written to --out unless "
        "--no-figures.",
        "jaxscale reconcile --published chinchilla\n"
        "jaxscale reconcile runs.csv --run-by model,peak_lr,total_steps,sweep --bootstrap 200 --json",
    )
    o.add_runs(p, required=False)
    p.add_argument("--published", choices=("epoch", "chinchilla"), default=None,
                   help="the Chinchilla-law parameters of Besiroglu et al. (epoch, the default without RUNS) "
                   "or of Hoffmann et al. (chinchilla)")
    o.add_bootstrap(p, default=200, what="with RUNS: bootstrap resamples behind every interval", minimum=2)
    o.add_seed(p, "with RUNS: seed of the resamples")
    o.add_out(p, "the PNG figures", default=Path("reconcile_figures"))
    p.add_argument("--no-figures", action="store_true",
                   help="write no figures (this command writes them by default: they are its product)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import reconcile

    if args.no_figures:
        args.out = None
    o.check_out(args.out)
    runs = None if args.runs is None else o.load_columns(args)
    result = reconcile(args.published, runs=runs, bootstrap=args.bootstrap, seed=args.seed)
    return o.report(result, args, _print_table if runs is None else _print_table_runs)


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
    for f in numbers.get("files", []):
        print(f"figure: {f}")
    print(f"done in {numbers['seconds']:.1f} s")


def _print_table(numbers: dict) -> None:
    paper = numbers["paper"]
    print(f"Pearce & Song (2024) reconciliation, {numbers['spec']} parameters\n")
    print(f"{'quantity':<44} {'jaxscale':>12} {'paper':>10}")
    print("-" * 68)
    for key, label, fmt in ROWS:
        ours = fmt.format(numbers[key])
        theirs = fmt.format(paper[key]) if key in paper else ""
        print(f"{label:<44} {ours:>12} {theirs:>10}")
    print("-" * 68)
    for f in numbers.get("files", []):
        print(f"figure: {f}")
    print(f"done in {numbers['seconds']:.1f} s")
