"""``jaxscale isoflop``: each isoFLOP budget's optimum by every rule, refusals and the grid's
diagnostics (:func:`jaxscale.isoflop`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "isoflop", "each isoFLOP budget's optimum by parabola, Akima and the law; grid diagnostics",
        "Find each isoFLOP budget's optimum N* by the declared rules (parabola: Approach 2; akima: Porian et al. "
        "2024; law: the law refitted locally), refuse budgets whose minimum is at the grid's edge, fit N* ~ C^a "
        "with a resampling or seed-noise bootstrap, and report each budget's width and centring and the bias the "
        "fitted law implies on these grids (Open Athena).",
        "jaxscale isoflop isoflops_public.csv --where source=epochai_chinchilla --out isoflop_results",
    )
    o.add_table(p)
    p.add_argument("--rule", nargs="+", choices=("parabola", "akima", "law"), default=["parabola", "akima", "law"],
                   help="the per-budget rules (default: all three)")
    p.add_argument("--interval", choices=("resample", "seed-noise"), default="resample",
                   help="resample the points within each budget, or add seed noise to each loss (default: %(default)s)")
    o.add_bootstrap(p, what="resamples of the interval", default=200)
    p.add_argument("--sigma", type=o.positive, default=0.005, help="the seed noise on the loss (default: %(default)s)")
    o.add_seed(p)
    o.add_out(p, "the figure of the curves and minima")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import isoflop

    o.check_out(args.out)
    return o.report(isoflop(o.deferred_table(args), rules=args.rule, interval=args.interval,
                            resamples=args.bootstrap, sigma=args.sigma, seed=args.seed), args)
