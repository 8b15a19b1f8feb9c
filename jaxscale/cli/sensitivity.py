"""``jaxscale sensitivity``: elasticities, delta-method uncertainty, run influence and the
reconciliation's sensitivity to its own choices, for a fitted law or a published parameter set
(:func:`jaxscale.sensitivity`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o

QUANTITIES_HELP = """quantities (each a positive function of the law's parameters):
  N*(C), D*(C)   compute-optimal size and tokens at each --compute budget C (C = 6ND)
  L(N, D)        the loss the law predicts for the --planned run
  a, b           the allocation exponents N* ~ C^a, D* ~ C^b (laws with closed forms: chinchilla)
  reconciled exponent
                 Pearce & Song's Kaplan-basis exponent (chinchilla law) under N_T = N + gamma N^delta,
                 the power law of N*(C) over the budgets where N* spans Kaplan's sizes 10^2.9-10^9.2

for each: elasticities d log q / d log theta (the tornado figure); with a table, the delta-method SD
of log q from the bootstrap covariance (sqrt(e' Sigma e), and ignoring correlations) beside the SD
of log q over the bootstrap refits; each run's influence on log q (implicit differentiation of the
Huber fit) against exact leave-one-out refits. For the chinchilla law, the reconciled exponent's
derivatives with respect to A, B, E, alpha, beta, gamma, delta and the size window's bounds, and
the factor on each that would move it to --target to first order."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sensitivity",
        help="autodiff sensitivity study: elasticities, delta method, run influence, reconciliation",
        description="Sensitivity study of a law fitted to a runs table (same table arguments as "
        "`jaxscale fit`, Approach 3) or of a published parameter set of --law (--published).",
        epilog=o.epilog("jaxscale sensitivity chinchilla_svg_extracted_data.csv --drop-highest 5 --out sensitivity\n"
                        "jaxscale sensitivity --published epoch --compute 1e22 1e24", QUANTITIES_HELP),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    o.add_table(p, required=False)
    o.add_law(p, what="the law to fit or whose --published parameters to study")
    o.add_published(p, "epoch or chinchilla for the chinchilla law, kaplan for kaplan (no covariance, no "
                       "influence), instead of a runs table")
    p.add_argument("--compute", type=o.positive, nargs="+", default=[1e24], metavar="C",
                   help="budgets (FLOP) of N*(C) and D*(C) (default: 1e24)")
    p.add_argument("--planned", type=o.positive, nargs=2, default=[7e10, 1.4e12], metavar=("N", "D"),
                   help="planned run whose loss is extrapolated (default: Chinchilla, 7e10 1.4e12)")
    o.add_bootstrap(p, default=1000, what="bootstrap refits for the parameter covariance")
    o.add_seed(p)
    p.add_argument("--table-embedding", action="store_true",
                   help="take gamma, delta from the table's own model sizes (it needs both parameter bases)")
    p.add_argument("--gamma", type=o.positive, default=None,
                   help="gamma of N_T = N + gamma N^delta (default: Pearce & Song's Table A9 fit, 47491)")
    p.add_argument("--delta", type=o.between(0, 1), default=None,
                   help="delta of the embedding relation, in (0, 1): the embedding grows slower than the model "
                   "(default: 1/3, fixed aspect ratio)")
    p.add_argument("--target", type=o.between(0, 1), default=None,
                   help="exponent a of N* ~ C^a, in (0, 1), that the reconciliation's first-order factors aim at "
                   "(default: Kaplan's 0.73)")
    p.add_argument("--top", type=o.at_least(1), default=5, help="runs listed per quantity (default: %(default)s)")
    o.add_out(p, "the figures")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import sensitivity

    if (args.runs is None) == (args.published is None):
        raise ValueError("give a runs table or --published NAME, not both and not neither")
    o.check_out(args.out)
    runs = None if args.runs is None else o.deferred_table(args)
    result = sensitivity(runs, published=args.published, law=args.law, compute=args.compute, planned=args.planned,
                         bootstrap=args.bootstrap, seed=args.seed, gamma=args.gamma, delta=args.delta,
                         table_embedding=args.table_embedding, target=args.target, top=args.top)
    return o.report(result, args)

