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
        return o.report(result, args, _print)
    result = hparams(lambda: o.load_columns(args), lr_col=args.lr_col, batch_col=args.batch_col,
                     smoothed_col=args.smoothed_col, sequence_length=args.sequence_length, bootstrap=args.bootstrap,
                     seed=args.seed, joint=not args.no_joint, posterior=args.posterior, chains=args.chains,
                     warmup=args.warmup, samples=args.samples, progress=not args.no_progress)
    return o.report(result, args, _print)


def _num(value) -> str:
    return "undefined" if value is None else f"{value:.4g}"


def _interval(group: dict, name: str) -> str:
    lower, upper = group.get(f"{name}_lower"), group.get(f"{name}_upper")
    return "" if lower is None or upper is None else f" [{lower:.4g}, {upper:.4g}]"


def _print(numbers: dict) -> None:
    if "published" in numbers:
        inputs = ", ".join(f"{k} = {v:.4g}" for k, v in numbers["inputs"].items())
        print(f"jaxscale hparams: {numbers['published']} ({numbers['citation']})")
        print(f"  {inputs}")
        print(f"  peak learning rate eta* = {_num(numbers['learning_rate'])}   ({numbers['formulas'][0]})")
        print(f"  batch size B* = {_num(numbers['batch_tokens'])} tokens   ({numbers['formulas'][1]})")
        print("  intervals: undefined (the published law gives none)")
        if numbers["note"]:
            print(f"  note: {numbers['note']}")
        return
    per_group = numbers["per_group"]
    print(f"jaxscale hparams: {numbers['source']}: {numbers['runs']} runs in {numbers['groups']} (N, D) groups; "
          f"loss column {per_group['loss_column']!r}, window {per_group['window']:.0%}")
    print("| N | D | runs | window | eta* | B* (tokens) |\n|---|---|---|---|---|---|")
    for g in per_group["groups"]:
        print(f"| {g['N']:.4g} | {g['D']:.4g} | {g['runs']} | {g['window_runs']} | "
              f"{_num(g['lr_opt'])}{_interval(g, 'lr_opt')} | {_num(g['batch_opt'])}{_interval(g, 'batch_opt')} |")
    print(f"\npower laws through the optima (95% intervals from {per_group['resamples']} resamples of runs within "
          "groups):")
    for name, law in per_group["laws"].items():
        for q, v in law["params"].items():
            pub = per_group["published"].get(f"{name}.{q}")
            ci = "" if v["lower"] is None else f" [{v['lower']:.4g}, {v['upper']:.4g}]"
            print(f"  {name:<14} {q:<6} {_num(v['estimate'])}{ci}" + (f"   published {pub:g}" if pub is not None else ""))
    joint = numbers["joint"]
    if joint is not None:
        print(f"\njoint law ({joint['formula']}), {joint['n_points']} runs, {joint['n_converged']} of "
              f"{joint['n_starts']} starts converged; exponents by implicit differentiation:")
        for name, a in numbers["agreement"].items():
            ci = a["per_group_ci95"]
            where = "" if a["inside"] is None else (" inside" if a["inside"] else " outside")
            print(f"  {name:<11} {_num(a['joint'])}{where} the per-group interval"
                  + ("" if ci is None else f" [{ci[0]:.4g}, {ci[1]:.4g}]"))
    if numbers.get("posterior") is not None:
        _print_posterior(numbers["posterior"])
    for path in numbers.get("files", []):
        print(f"wrote {path}")


def _print_posterior(posterior: dict) -> None:
    agreement = posterior["agreement"]
    print(f"\njoint law's posterior (NUTS, {posterior['sampler_seconds']:.0f} s; {posterior['divergences']} divergent "
          f"transitions, largest R-hat {posterior['r_hat_max']:.3f}): medians, 95% intervals")
    for row in posterior["posterior"]:
        if row["quantity"] in agreement["exponents"]:
            a = agreement["exponents"][row["quantity"]]
            ci = a["per_group_ci95"]
            overlap = "" if a["overlap"] is None else (" overlaps" if a["overlap"] else " does not overlap")
            print(f"  {row['quantity']:<11} {_num(row['estimate'])} [{_num(row['lower'])}, {_num(row['upper'])}]"
                  f"{overlap} the per-group interval" + ("" if ci is None else f" [{ci[0]:.4g}, {ci[1]:.4g}]"))
    print(f"  eta*(N, D) of the joint law inside the group's own 95% interval: {agreement['groups_inside']} of "
          f"{agreement['groups_compared']} groups")
    for problem in posterior["problems"]:
        print(f"  warning: {problem}")
