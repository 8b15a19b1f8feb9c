"""``jaxscale hparams``: the optimal learning rate and batch size, from hyperparameter grids or a published law."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "hparams", "the optimal learning rate and batch size: fitted to hyperparameter grids, or published",
        "From a CSV of hyperparameter grids (runs at many peak learning rates and batch sizes for each "
        "(N, D)): each group's optimum by the declared rule of jaxscale.hyperparameters.per_group (a quadratic in "
        "(log eta, log B) over the runs within 1% of the group's smoothed-loss minimum), Step Law's eta*(N, D) = "
        "A N^-alpha D^beta and B*(D) = A D^beta through the optima with 95% bootstrap intervals (runs resampled "
        "within groups), and the joint law L(N, D, eta, B) whose optimum comes from the implicit-differentiation "
        "solver. Or, with --published, eta* and B* of a planned run under Step Law (--n, --tokens) or DeepSeek "
        "(--compute).",
        "jaxscale hparams ../shared/data/steplaw_dense_lr_bs_loss.csv --sequence-length 2048 --out hparams_figures\n"
        "jaxscale hparams --published steplaw --n 7e9 --tokens 1.4e12\n"
        "jaxscale hparams --published deepseek --compute 1e24",
    )
    o.add_runs(p, required=False)
    p.add_argument("--published", choices=("steplaw", "deepseek"), default=None, metavar="NAME",
                   help="a published law instead of RUNS: steplaw (Li et al. 2025) or deepseek (DeepSeek-AI 2024)")
    p.add_argument("--n", type=o.positive, default=None, metavar="N", help="model parameters of the planned run")
    p.add_argument("--tokens", type=o.positive, default=None, metavar="D", help="training tokens of the planned run")
    p.add_argument("--compute", type=o.positive, default=None, metavar="C", help="training FLOPs of the planned run")
    p.add_argument("--lr-col", default=None, metavar="NAME", help="column of the peak learning rate (default: "
                   "peak_lr, lr or learning_rate)")
    p.add_argument("--batch-col", default=None, metavar="NAME", help="column of the batch size (default: "
                   "batch_tokens, batch_size, bs or batch)")
    p.add_argument("--smoothed-col", default=None, metavar="NAME", help="column of the smoothed loss the rule "
                   "reads (default: 'smooth loss' or smoothed_loss if present, else the loss)")
    p.add_argument("--sequence-length", type=o.positive, default=1.0, metavar="L",
                   help="tokens per unit of the batch column (Step Law's bs counts sequences of 2048) "
                   "(default: %(default)g: the column is in tokens)")
    o.add_bootstrap(p, default=1000, what="resamples of runs within groups for 95%% intervals")
    o.add_seed(p)
    p.add_argument("--no-joint", action="store_true", help="skip the joint law L(N, D, eta, B)")
    p.add_argument("--posterior", action="store_true", help="also sample the joint law's posterior by NUTS: 95%% "
                   "intervals on eta*, B* of every group and on their exponents (minutes on a CPU)")
    o.add_nuts(p)
    o.add_out(p, "the figures (landscapes.png: each group's loss over (eta, B); lr_law.png: eta*(N, D) with its band; "
              "with --posterior, agreement.png: both routes' eta* group by group)")
    o.add_json(p)
    p.set_defaults(run=run, prepare=_prepare)


def _prepare(args: argparse.Namespace) -> None:
    if args.posterior:
        o.one_cpu_device_per_chain(args)


def _check(args: argparse.Namespace) -> None:
    if args.published is None and args.runs is None:
        raise ValueError("give RUNS (a CSV of hyperparameter grids) or --published steplaw|deepseek")
    if args.published is not None and args.runs is not None:
        raise ValueError("give RUNS or --published, not both")
    if args.published is None and any(v is not None for v in (args.n, args.tokens, args.compute)):
        raise ValueError("--n, --tokens and --compute go with --published")
    if args.posterior and (args.published is not None or args.no_joint):
        raise ValueError("--posterior samples the joint law fitted to RUNS: not with --published or --no-joint")
    o.check_out(args.out)


def run(args: argparse.Namespace) -> int:
    from jaxscale import hparams, published_hparams

    _check(args)
    if args.published is not None:
        result = published_hparams(args.published, n=args.n, tokens=args.tokens, compute=args.compute)
        return o.report(result, args)
    result = hparams(lambda: o.load_columns(args), lr_col=args.lr_col, batch_col=args.batch_col,
                     smoothed_col=args.smoothed_col, sequence_length=args.sequence_length, bootstrap=args.bootstrap,
                     seed=args.seed, joint=not args.no_joint, posterior=args.posterior, chains=args.chains,
                     warmup=args.warmup, samples=args.samples, progress=not args.no_progress)
    return o.report(result, args)

