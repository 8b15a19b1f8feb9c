"""``jaxscale allocate``: the compute-optimal model size and tokens of a law at a published
parameter set; for the data-constrained law of Muennighoff et al. (2023), with a limited number of
unique tokens, beside Chinchilla's answer (:func:`jaxscale.allocate`)."""

from __future__ import annotations

import argparse
from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "allocate", "model size and tokens (and epochs of limited data) for a compute budget",
        "I have C FLOP (and U_D unique tokens): what size, and how many tokens or epochs? The compute-optimal "
        "run (C = 6ND) of --law at a published parameter set, from jaxscale's generic solver. For the "
        "data-constrained law of Muennighoff et al. (2023), L = E + A/N'^alpha + B/D'^beta with repeated tokens "
        "and excess parameters discounted (the default), with its local exponents by implicit differentiation, "
        "and beside it Chinchilla's allocation with unlimited data (same A, B, E, alpha, beta) and the loss "
        "that Chinchilla's run would reach on the U_D tokens.",
        "jaxscale allocate --compute 1e22 1e24 --unique-tokens 1e11 --out allocation\n"
        "jaxscale allocate --law chinchilla --published epoch --compute 1e24\n"
        "jaxscale allocate runs.csv --drop-highest 5 --compute 1e24",
    )
    o.add_table(p, required=False)
    p.add_argument("--compute", type=o.positive, nargs="+", required=True, metavar="C", help="budgets in FLOP")
    p.add_argument("--unique-tokens", type=o.positive, default=None, metavar="U_D",
                   help="unique tokens available (repeated as many epochs as the optimum wants); the "
                   "data-constrained law needs it")
    p.add_argument("--law", default=None, metavar="NAME",
                   help=f"the law: {o.LAW_HELP} (default: data-constrained at a published set; chinchilla fitted to RUNS)")
    o.add_published(p, "for data-constrained, muennighoff (Muennighoff et al.'s C4 refit, alpha = beta = 0.353, "
                       "with which R*_D, R*_N were fitted) or chinchilla / epoch (Hoffmann et al.'s / Besiroglu et "
                       "al.'s A, B, E, alpha, beta: a what-if, R* were not fitted with them); for chinchilla, epoch "
                       "or chinchilla (default: the law's first)")
    p.add_argument("--r-star-d", type=o.positive, default=None, metavar="R",
                   help="R*_D, repetitions after which repeated tokens keep 1/e of their value "
                   "(default: Muennighoff et al.'s fit)")
    p.add_argument("--r-star-n", type=o.positive, default=None, metavar="R",
                   help="R*_N, the same for excess parameters (default: Muennighoff et al.'s fit)")
    o.add_out(p, "the figure (allocation.png: the loss along each budget against epochs, both laws, optima "
                 "marked; optimal_bands.png for other laws)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import allocate, allocate_data_constrained, fit, laws

    o.check_out(args.out)
    if args.runs is not None:  # the law fitted to the runs (js.fit), then allocated with its bands
        given = [name for name, value in (("--published", args.published), ("--r-star-d", args.r_star_d),
                                          ("--r-star-n", args.r_star_n), ("--unique-tokens", args.unique_tokens))
                 if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)} set a published law's parameters; with RUNS the law is fitted to them")
        return o.report(allocate(fit(o.deferred_table(args), args.law or "chinchilla"), args.compute), args)
    changed = {k: v for k, v in (("R_D_star", args.r_star_d), ("R_N_star", args.r_star_n)) if v is not None}
    law = args.law or "data-constrained"
    if args.unique_tokens is not None or laws.get(law).inputs[2:] == ("U_D",):
        if args.unique_tokens is None:
            raise ValueError(f"the {law} law needs unique_tokens, the unique tokens available")
        result = allocate_data_constrained(args.compute, args.unique_tokens, law, published=args.published,
                                           params=changed or None)
        return o.report(result, args)
    return o.report(allocate(law, args.compute, published=args.published, params=changed or None), args)
