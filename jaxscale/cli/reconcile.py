"""``jaxscale reconcile``: Pearce & Song's Section 2 on a published parameter set or on one's own
runs (:func:`jaxscale.reconcile`)."""

from __future__ import annotations

import argparse
from pathlib import Path

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
    return o.report(result, args)

