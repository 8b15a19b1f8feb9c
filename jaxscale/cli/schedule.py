"""``jaxscale schedule``: the learning-rate schedule a multi-power law predicts to end lowest."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "schedule", "the learning-rate schedule a multi-power law predicts to end lowest",
        "Optimise the non-increasing schedule of --steps steps (after a linear warmup of "
        "--warmup-steps to --peak-lr) through the multi-power law of Luo et al. (2025) by gradient descent, and "
        "compare its predicted final loss with cosine (to 0.1 x peak) and WSD (linear cooldown over the last 20%) "
        "of the same length and peak. The law is a published fit (--published luo-25m) or fitted here to every "
        "checkpoint of the runs --fit-runs of RUNS.",
        "jaxscale schedule --published luo-25m --steps 24000 --peak-lr 3e-4 --warmup-steps 2160 --out schedule\n"
        "jaxscale schedule curves.csv --fit-runs constant_24000,cosine_24000,wsdcon_9 --steps 24000 --peak-lr 3e-4 "
        "--warmup-steps 2160",
    )
    o.add_runs(p, required=False)
    p.add_argument("--published", choices=("luo-25m",), default=None, metavar="NAME",
                   help="a published multi-power law instead of RUNS: luo-25m (Luo et al. 2025's 25M model)")
    p.add_argument("--fit-runs", default=None, metavar="IDS", help="comma-separated runs of RUNS to fit the law to")
    p.add_argument("--lr-source", choices=("named", "recorded"), default="recorded",
                   help="per-step rates of the fitted runs: from their schedule columns, or interpolated from "
                   "their learning_rate column (default: %(default)s)")
    o.add_fit_rule(p)
    p.add_argument("--steps", type=o.at_least(1), required=True, metavar="T", help="length of the schedule in steps")
    p.add_argument("--peak-lr", type=o.positive, required=True, metavar="ETA", help="the peak learning rate")
    p.add_argument("--warmup-steps", type=o.at_least(0), default=0, metavar="W", help="linear warmup steps (default: 0)")
    p.add_argument("--iterations", type=o.at_least(1), default=3000, metavar="K",
                   help="gradient-descent steps (default: %(default)s)")
    o.add_out(p, "the figure (schedule.png: the schedules' rates and predicted loss curves)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import schedule

    if (args.runs is None) == (args.published is None):
        raise ValueError("give RUNS with --fit-runs, or --published luo-25m")
    if args.runs is not None and not args.fit_runs:
        raise ValueError("name the runs to fit with --fit-runs")
    if args.published is not None and args.fit_runs:
        raise ValueError("--fit-runs names runs of RUNS to fit; --published takes the published law as it is")
    o.check_out(args.out)
    params = None
    if args.runs is not None:
        from jaxscale import curve

        params = curve(args.runs, law="multipower", fit_runs=args.fit_runs, lr_source=args.lr_source,
                       fit_rule=args.fit_rule, reading=o.reading(args)).multipower.params
    result = schedule(params, published=args.published, steps=args.steps, peak_lr=args.peak_lr,
                      warmup_steps=args.warmup_steps, iterations=args.iterations)
    return o.report(result, args)

