"""``jaxscale downstream``: a benchmark's accuracy at a larger model from a ladder's evaluations,
with intervals, the verdict on whether the ladder can tell, and the recipes' compute multipliers
(:func:`jaxscale.downstream`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o

FORMS = ("two-step", "log-compute", "direct", "direct-nd")


def _target(text: str) -> tuple[float, float]:
    """An argparse type: N,D, both positive numbers."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"must be N,D (e.g. 2.8e9,3e11), got {text!r}")
    return o.positive(parts[0]), o.positive(parts[1])


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "downstream", "a benchmark's accuracy at a larger model, from a ladder's evaluations",
        "Reads evaluations (long: task, metric, value, stderr per row, as pythia_evals.csv; or wide: one column per "
        "task) with each row's n_params and tokens. First a verdict per recipe: does the ladder carry signal above "
        "the evaluations' noise, and is the task off its chance floor? A task that fails is reported not predictable "
        "from this ladder, with the reason. Otherwise the form's fit (two-step: an intermediate loss of N on the "
        "final checkpoints, then accuracy as a sigmoid of that loss over every checkpoint past the warmup), the "
        "accuracy at --target with 90% intervals through both stages and the target evaluation's own noise, and "
        "each recipe's compute multiplier at equal accuracy against --baseline (95%).",
        "jaxscale downstream pythia_evals.csv --task arc_easy --target 2.8e9,3e11 --max-n 1.1e9 --baseline pile\n"
        "jaxscale downstream wide.csv --task my_task --chance 0.25 --target 7e9,2e12 --form log-compute --json",
    )
    p.add_argument("runs", metavar="RUNS", help="the evaluations: a CSV, long or wide")
    p.add_argument("--task", required=True, metavar="T", help="the task, e.g. arc_easy")
    p.add_argument("--target", required=True, type=_target, metavar="N,D",
                   help="the model to predict: N parameters trained on D tokens")
    p.add_argument("--metric", default="acc", metavar="M", help="the accuracy metric (default: %(default)s)")
    p.add_argument("--form", choices=FORMS, default="two-step", help="the law of accuracy (default: %(default)s)")
    p.add_argument("--data", default=None, metavar="RECIPES",
                   help="comma-separated recipes (column data) to forecast (default: every one)")
    p.add_argument("--baseline", default=None, metavar="RECIPE",
                   help="the recipe the multipliers are against (default: the first)")
    p.add_argument("--chance", type=o.fraction, default=None, metavar="P",
                   help="the task's chance accuracy, where it is not known (e.g. 0.25 for four choices)")
    p.add_argument("--intermediate", default="lambada_openai:ppl", metavar="TASK:METRIC",
                   help="the two-step form's intermediate loss (a perplexity is read as its log; default: %(default)s)")
    p.add_argument("--max-n", type=o.positive, default=None, metavar="N",
                   help="fit only the models of at most N parameters (default: all)")
    p.add_argument("--shots", type=o.at_least(0), default=0, metavar="K",
                   help="of a table with a shots column, the rows evaluated with K shots (default: %(default)s)")
    p.add_argument("--bayes", action="store_true",
                   help="also the joint posterior of both stages by NUTS (two-step form; 2 chains x 500 draws)")
    o.add_bootstrap(p, default=400, what="bootstrap resamples of every stage", minimum=2)
    o.add_seed(p)
    o.add_out(p, "the figures (downstream.png: accuracy against compute; downstream_stage2.png: accuracy against "
                 "the intermediate loss)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import downstream

    o.check_out(args.out)
    data = None if args.data is None else [r.strip() for r in args.data.split(",")]
    result = downstream(args.runs, args.task, target=args.target, metric=args.metric, form=args.form, data=data,
                        baseline=args.baseline, chance=args.chance, intermediate=args.intermediate, max_n=args.max_n,
                        bootstrap=args.bootstrap, seed=args.seed, bayes=args.bayes, shots=args.shots)
    return o.report(result, args)
