"""``jaxscale fit``: a scaling law fitted to a runs table (:func:`jaxscale.fit`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "fit", "fit a scaling law to a table of training runs",
        "Fit L(N, D) to a runs table (CSV with model size, tokens or compute, loss): Approach 3 (Huber loss, "
        "L-BFGS from Epoch AI's 4500-point grid, all starts at once), optionally bootstrapped; or Approach 1 "
        "(frontier of training curves) / 2 (isoFLOP parabolas). With --out, writes a residual plot, the isoFLOP "
        "figure and the bootstrap draws.",
        "jaxscale fit chinchilla_svg_extracted_data.csv --drop-highest 5 --bootstrap 4000 --out fit_results",
    )
    o.add_table(p)
    o.add_law(p)
    p.add_argument("--method", choices=("approach1", "approach2", "approach3", "vpnls"), default="approach3",
                   help="Hoffmann et al.'s approach, or vpnls: Approach 3's objective by variable projection "
                        "(default: %(default)s)")
    o.add_bootstrap(p, what="bootstrap resamples (Epoch: 4000)")
    o.add_seed(p)
    p.add_argument("--asymmetry", type=o.positive, default=None, metavar="W",
                   help="weigh over-predictions of the loss W times more (for under-tuned small runs)")
    p.add_argument("--likelihood", action="store_true",
                   help="also fit the Huber likelihood form (scale sigma) and test Chinchilla's published values")
    p.add_argument("--holdout-threshold", type=o.positive, default=None, metavar="X",
                   help="also fit on runs with N (or C, see --holdout-by) below X and report the error on the rest")
    p.add_argument("--holdout-by", choices=("n", "c"), default="n", help="holdout split variable (default: %(default)s)")
    p.add_argument("--holdout-rule", choices=("published", "nested"), default="published",
                   help="the fit that predicts the runs held out: Approach 3 as published, or the rule that nested "
                        "holdouts inside the fitting runs choose (default: %(default)s)")
    p.add_argument("--compute", type=o.positive, nargs="+", default=None, metavar="C",
                   help="budgets (FLOP) for the compute-optimal allocation (default: the largest in the table)")
    o.add_out(p, "the figures and the bootstrap draws (bootstrap_draws.csv)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import fit, frontier

    o.check_out(args.out)
    if args.method in ("approach1", "approach2"):
        _check_frontier_options(args)
        result = frontier(o.deferred_table(args), int(args.method[-1]), bootstrap=args.bootstrap, seed=args.seed)
    else:
        result = fit(o.deferred_table(args), args.law, bootstrap=args.bootstrap, seed=args.seed,
                     compute=args.compute, asymmetry=args.asymmetry, likelihood=args.likelihood,
                     holdout=args.holdout_threshold, holdout_by=args.holdout_by, method=args.method,
                     holdout_rule=args.holdout_rule)
    return o.report(result, args)


def _check_frontier_options(args: argparse.Namespace) -> None:
    """Approaches 1 and 2 fit no law: refuse the options of Approach 3 (:func:`jaxscale.frontier`)."""
    extra = [name for name, used in (("compute", args.compute is not None), ("asymmetry", args.asymmetry is not None),
                                      ("likelihood", args.likelihood),
                                      ("holdout", args.holdout_threshold is not None),
                                      ("holdout rule", args.holdout_rule != "published")) if used]
    if extra:
        raise ValueError(f"{', '.join(extra)} apply to approach3 and vpnls, not {args.method}")

