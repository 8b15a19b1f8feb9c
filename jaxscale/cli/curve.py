"""``jaxscale curve``: laws of whole curves fitted to some runs, predicting others (:func:`jaxscale.curve`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "curve", "fit the learning-rate annealing law to whole curves and predict other schedules",
        "Fit L(s) = L0 + A S1^-alpha - C S2 (Tissue et al. 2024) per group of runs (a model size) "
        "on every checkpoint of the runs fitted, predict the runs of other schedules or lengths, and print "
        "the relative error of their final losses. RUNS is a CSV or a jaxscale sweep directory (its runs.csv; "
        "protocol sweep). Protocols: sweep (fit the constant run and the 1x cosine run of each size, predict "
        "the other cosine lengths); misfitting (the (Mis)Fitting table: fit the longest run of each size and "
        "peak rate, predict the shorter ones). Or name the runs: --fit-runs A,B --predict C,D.",
        "jaxscale curve out/sweeps/cpu --bootstrap 200 --out curves\n"
        "jaxscale curve misfitting_scaling_results.csv --protocol misfitting --json",
    )
    o.add_runs(p)
    p.add_argument("--law", default="lr-annealing", metavar="NAME",
                   help="the law of whole curves: lr-annealing (Tissue et al. 2024, a registry law of the schedule "
                   "areas) or multipower (Luo et al. 2025, a law of the whole schedule, fitted to every checkpoint "
                   "of the runs --fit-runs and predicting --predict) (default: %(default)s)")
    p.add_argument("--protocol", default=None, metavar="NAME",
                   help="how runs are grouped and split: sweep or misfitting (default: sweep for a sweep directory)")
    p.add_argument("--fit-runs", default=None, metavar="IDS", help="comma-separated run ids to fit")
    p.add_argument("--predict", default=None, metavar="IDS", help="comma-separated run ids to predict")
    p.add_argument("--group-by", default=None, metavar="COLS",
                   help="columns whose values make one group, one law each (default: the protocol's, else n_total)")
    p.add_argument("--decay", type=o.fraction, default=0.999, metavar="LAMBDA",
                   help="decay factor lambda of the annealing momentum (Tissue et al.: 0.999) (default: %(default)s)")
    p.add_argument("--fit-decay", action="store_true",
                   help="profile lambda over 0.9 ... 0.9995 and keep the best fit per group")
    p.add_argument("--skip-warmups", type=o.nonnegative, default=None, metavar="K",
                   help="fit each run's checkpoints from K times its warmup on, 0 for every checkpoint "
                   "(default: the declared rule, TRANSIENT_WARMUPS of jaxscale.curves.lr_annealing_fit)")
    p.add_argument("--lr-source", choices=("named", "recorded"), default="named",
                   help="per-step rates from the schedule the run's columns name, or interpolated from the "
                   "learning_rate column (default: %(default)s)")
    for flag, kind, what in (("--schedule", str, "constant, cosine or wsd"),
                             ("--warmup-steps", o.at_least(0), "warmup steps"),
                             ("--final-fraction", o.fraction, "final rate / peak rate")):
        p.add_argument(flag, type=kind, default=None, help=f"{what}, for tables without that column")
    p.add_argument("--every-checkpoint", action="store_true",
                   help="also fit Chinchilla's law with annealing to every checkpoint of the tuned runs and "
                   "compare its exponents with Approach 3 on their last checkpoints")
    o.add_bootstrap(p, what="moving-block resamples of each fitted run's checkpoints behind 95%% intervals of "
                    "alpha and of every prediction, and how many predicted final losses they cover")
    o.add_seed(p)
    o.add_fit_rule(p)
    o.add_out(p, "the figure of the fitted and predicted curves (curves.png)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import curve

    o.check_out(args.out)
    result = curve(args.runs, law=args.law, protocol=args.protocol, fit_runs=args.fit_runs, predict=args.predict,
                   group_by=args.group_by, decay=args.decay, fit_decay=args.fit_decay, skip_warmups=args.skip_warmups,
                   lr_source=args.lr_source, schedule=args.schedule, warmup_steps=args.warmup_steps,
                   final_fraction=args.final_fraction, every_checkpoint=args.every_checkpoint,
                   bootstrap=args.bootstrap, seed=args.seed, fit_rule=args.fit_rule, reading=o.reading(args))
    return o.report(result, args)
