"""``jaxscale compare``: how much better one recipe is than another, as an effective compute
multiplier at equal loss with intervals (:func:`jaxscale.compare`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "compare", "effective compute multiplier between recipes, with intervals",
        "One law for two or more recipes (one runs table each, the first the baseline A; or one table with "
        "--group-by) with shared exponents and each recipe's own A, B, E. For each other recipe B: k(C) = C_A / C, "
        "the compute at which A's compute-optimal loss reaches B's at C, over C, at --compute, with a 95% "
        "stratified-bootstrap interval, and how k changes over the decade centred there. --bayes adds posterior "
        "intervals and the PSIS-LOO test of whether the shared exponents fit (two NUTS runs).",
        "jaxscale compare baseline.csv new_recipe.csv --compute 1e22 --out compare\n"
        "jaxscale compare isoflops_public.csv --group-by source --recipes epochai_chinchilla,ml_scalefit --bayes",
    )
    o.add_table(p, many=True)
    p.add_argument("--group-by", default=None, metavar="COL", help="the column naming each run's recipe in one table")
    p.add_argument("--recipes", default=None, metavar="NAMES",
                   help="comma-separated recipes to compare, the baseline first (with --group-by; default: all, "
                   "sorted)")
    p.add_argument("--compute", type=o.positive, default=1e22, metavar="C",
                   help="target compute (default: %(default)s)")
    p.add_argument("--bayes", action="store_true", help="also the grouped posterior and the PSIS-LOO test of sharing")
    o.add_law(p, what="the law (its exponents shared)")
    o.add_bootstrap(p, default=1000, what="stratified bootstrap resamples (within each recipe)", minimum=2)
    o.add_seed(p)
    o.add_out(p, "the figure (compare.png: the frontiers and k(C) with its bands)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import compare

    o.check_out(args.out)
    if args.group_by is None and len(args.runs) < 2:
        raise ValueError("compare needs two or more runs tables, or one with --group-by")
    if args.group_by is not None and len(args.runs) != 1:
        raise ValueError(f"--group-by reads one table; got {len(args.runs)}")
    if args.recipes is not None and args.group_by is None:
        raise ValueError("--recipes names groups of --group-by; several tables are named by their files")
    if args.group_by is None:
        names = [Path(path).stem for path in args.runs]
        if len(set(names)) != len(names):
            names = [str(path) for path in args.runs]
    else:
        names = None if args.recipes is None else [r.strip() for r in args.recipes.split(",")]
    tables = [o.deferred_table(args, path) for path in args.runs]
    options = dict(compute=args.compute, law=args.law, bootstrap=args.bootstrap, seed=args.seed, bayes=args.bayes)
    if args.group_by is not None:
        result = compare(tables[0], group_by=args.group_by, names=names, **options)
    else:  # the first table is the baseline; two or more others, each set against it
        result = compare(tables[0], tables[1] if len(tables) == 2 else tables[1:], names=names, **options)
    return o.report(result, args)

