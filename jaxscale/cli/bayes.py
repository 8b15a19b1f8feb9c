"""``jaxscale bayes``: the posterior of a law given a runs table (:func:`jaxscale.bayes`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "bayes", "Bayesian refit of a scaling law (NUTS) with posterior intervals",
        "Sample the posterior of L(N, D) given a runs table (same columns and checks as `jaxscale fit`): "
        "Student-t likelihood on log loss, weakly informative priors, NUTS from the Approach-3 optimum; "
        "convergence diagnostics; posterior of a = beta/(alpha+beta) and of Pearce & Song's reconciled "
        "(Kaplan-basis) exponent. With --out, writes posterior.nc (ArviZ InferenceData) and the figures.",
        "jaxscale bayes chinchilla_svg_extracted_data.csv --drop-highest 5 --chains 4 --out posterior\n"
        "jaxscale bayes isoflops_public.csv --group-by source --share alpha,beta --compare-sharing",
    )
    o.add_table(p)
    o.add_law(p)
    o.add_nuts(p)
    o.add_seed(p, "seed of the sampler")
    p.add_argument("--target-accept", type=o.between(0, 1), default=0.8,
                   help="NUTS target acceptance (default: %(default)s)")
    p.add_argument("--laplace", action="store_true",
                   help="fast path: Laplace approximation at the posterior mode instead of NUTS")
    p.add_argument("--gamma-uncertainty", action="store_true",
                   help="draw (gamma, delta) of Eq. 7 from a bootstrap of the Table A9 fit instead of "
                   "fixing the paper's gamma = 47491, delta = 1/3")
    p.add_argument("--compare", default=None, metavar="LAWS",
                   help="comma-separated laws (e.g. chinchilla,kaplan,kaplan-irreducible): sample each on the "
                   "same runs and rank them by PSIS-LOO (ArviZ compare), with Pareto-k diagnostics and a "
                   "posterior predictive figure per law in --out")
    p.add_argument("--group-by", default=None, metavar="COL",
                   help="the column naming each run's dataset (e.g. source): fit one law to every dataset at once, "
                   "the coordinates of --share common to all, the rest (and the noise) per dataset, and report "
                   "the posterior of their differences between datasets")
    p.add_argument("--share", default=None, metavar="COORDS",
                   help="with --group-by: comma-separated coordinates of the law's vector shared by every dataset, "
                   "e.g. alpha,beta or log_A,log_B,log_E (default: the law's exponents)")
    p.add_argument("--compare-sharing", action="store_true",
                   help="with --group-by: also sample the model that shares nothing (each dataset its own law) and "
                   "rank the two by PSIS-LOO: do the datasets share the --share coordinates?")
    p.add_argument("--table-embedding", action="store_true",
                   help="compute the reconciled exponent from the table's own gamma, delta (fitted to its model "
                   "sizes, which needs both parameter bases) over its own size range, instead of Table A9's")
    p.add_argument("--holdout-threshold", type=o.positive, default=None, metavar="X",
                   help="sample on runs with N (or C, see --holdout-by) below X only and report the errors and "
                   "the 50/80/90%% predictive-interval coverage on the rest")
    p.add_argument("--holdout-by", choices=("n", "c"), default="n", help="holdout split variable (default: %(default)s)")
    o.add_out(p, "posterior.nc (ArviZ InferenceData) and the figures")
    o.add_json(p)
    p.set_defaults(run=run, prepare=o.one_cpu_device_per_chain)


def run(args: argparse.Namespace) -> int:
    o.check_out(args.out)
    from jaxscale import bayes, bayes_grouped, loo

    _check_modes(args)
    table = o.deferred_table(args)
    nuts = dict(chains=args.chains, warmup=args.warmup, samples=args.samples, seed=args.seed,
                target_accept=args.target_accept, progress=not args.no_progress)
    if args.compare is not None:
        result = loo(table, args.compare, **nuts)
    elif args.compare_sharing:
        result = loo(table, group_by=args.group_by, share=args.share, law=args.law, **nuts)
    elif args.group_by is not None:
        result = bayes_grouped(table, args.group_by, args.law, share=args.share, **nuts)
    else:
        result = bayes(table, args.law, laplace=args.laplace, gamma_uncertainty=args.gamma_uncertainty,
                       table_embedding=args.table_embedding, holdout=args.holdout_threshold,
                       holdout_by=args.holdout_by, **nuts)
    return o.report(result, args)


def _check_modes(args: argparse.Namespace) -> None:
    """The options of one mode (one verb) given with another's, refused before any work."""
    grouped_only = [name for name, on in (("--share", args.share is not None),
                                          ("--compare-sharing", args.compare_sharing)) if on]
    if grouped_only and args.group_by is None:
        raise ValueError(f"{grouped_only[0]} needs --group-by")
    posterior_only = [name for name, on in (("--laplace", args.laplace),
                                            ("--holdout-threshold", args.holdout_threshold is not None),
                                            ("--table-embedding", args.table_embedding),
                                            ("--gamma-uncertainty", args.gamma_uncertainty)) if on]
    if args.group_by is not None and (args.compare is not None or posterior_only):
        raise ValueError("--group-by samples one grouped model with NUTS on all runs: not with --compare, --laplace, "
                         "--holdout-threshold, --table-embedding or --gamma-uncertainty")
    if args.compare is not None and posterior_only:
        raise ValueError("--compare samples every law with NUTS on all runs: not with --laplace, --holdout-threshold, "
                         "--table-embedding or --gamma-uncertainty")

