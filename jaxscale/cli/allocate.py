"""``jaxscale allocate``: the compute-optimal model size and epochs with a limited number of
unique tokens (the data-constrained law of Muennighoff et al. 2023), beside Chinchilla's answer."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

BASES = ("muennighoff", "chinchilla", "epoch")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "allocate",
        help="model size and epochs for a compute budget and a number of unique tokens",
        description="I have U_D unique tokens and C FLOP: what size, and how many epochs? The "
        "compute-optimal run (C = 6ND) under the data-constrained law of Muennighoff et al. (2023), "
        "L = E + A/N'^alpha + B/D'^beta with repeated tokens and excess parameters discounted, from "
        "jaxscale's generic solver, with its local exponents by implicit differentiation; beside it "
        "Chinchilla's allocation with unlimited data (same A, B, E, alpha, beta) and the loss that "
        "Chinchilla's run would reach on the U_D tokens.",
    )
    p.add_argument("--compute", type=float, nargs="+", required=True, metavar="C", help="budgets in FLOP")
    p.add_argument("--unique-tokens", type=float, required=True, metavar="U_D",
                   help="unique tokens available (repeated as many epochs as the optimum wants)")
    p.add_argument("--base", choices=BASES, default="muennighoff",
                   help="A, B, E, alpha, beta: Muennighoff et al.'s C4 refit (alpha = beta = 0.353), with which "
                   "R*_D, R*_N were fitted, or Hoffmann et al.'s / Besiroglu et al.'s Chinchilla values "
                   "(a what-if: R* were not fitted with them) (default: %(default)s)")
    p.add_argument("--r-star-d", type=float, default=None, metavar="R",
                   help="R*_D, repetitions after which repeated tokens keep 1/e of their value "
                   "(default: Muennighoff et al.'s fit)")
    p.add_argument("--r-star-n", type=float, default=None, metavar="R",
                   help="R*_N, the same for excess parameters (default: Muennighoff et al.'s fit)")
    p.add_argument("--plot", type=Path, default=None, metavar="PATH",
                   help="save the loss along each budget against epochs, both laws, optima marked")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(run=run)


def _params(args: argparse.Namespace):
    from jaxscale.core.validation import check_positive
    from jaxscale.laws import chinchilla
    from jaxscale.laws.data_constrained import MUENNIGHOFF, base_params

    r_d = MUENNIGHOFF.R_D_star if args.r_star_d is None else args.r_star_d
    r_n = MUENNIGHOFF.R_N_star if args.r_star_n is None else args.r_star_n
    for flag, value in (("--compute", args.compute), ("--unique-tokens", args.unique_tokens),
                        ("--r-star-d", r_d), ("--r-star-n", r_n)):
        check_positive(flag, value)
    base = base_params(MUENNIGHOFF) if args.base == "muennighoff" else chinchilla.preset(args.base)
    return MUENNIGHOFF._make((*base, r_d, r_n))


def _numbers(args: argparse.Namespace, params) -> tuple[dict[str, Any], Any, Any]:
    from jaxscale.laws import chinchilla, data_constrained
    from jaxscale.optimum.allocation import (
        optimal_allocation,
        optimal_allocation_given_unique_tokens,
    )

    base = data_constrained.base_params(params)
    u = args.unique_tokens
    best = optimal_allocation_given_unique_tokens(data_constrained.LAW, params, args.compute, u)
    unlimited = optimal_allocation(chinchilla.LAW, base, args.compute)
    chinchilla_on_u = data_constrained.loss(unlimited.n, unlimited.d, u, params)
    numbers = {
        "law": data_constrained.LAW.name, "citation": data_constrained.LAW.citation, "base": args.base,
        "params": params._asdict(), "unique_tokens": u,
        "loss_floor": float(data_constrained.loss_floor(u, params)),
        "budgets": [{
            "C": best.c[i],
            "data_constrained": {
                "N": best.n[i], "D": best.d[i], "epochs": best.epochs[i], "loss": best.loss[i],
                "dlogN_dlogC": best.n_exponent[i], "dlogD_dlogC": 1.0 - best.n_exponent[i],
                "dlogN_dlogU": best.n_unique_exponent[i], "dlogD_dlogU": -best.n_unique_exponent[i]},
            "chinchilla": {
                "N": unlimited.n[i], "D": unlimited.d[i], "epochs": unlimited.d[i] / u,
                "loss_unlimited_data": unlimited.loss[i], "loss_on_unique_tokens": chinchilla_on_u[i],
                "dlogN_dlogC": float(chinchilla.allocation_exponents(base)[0])},
        } for i in range(len(best.c))],
    }
    return numbers, best, unlimited


def _print(numbers: dict[str, Any]) -> None:
    p = numbers["params"]
    print(f"{numbers['law']} law ({numbers['citation']}), base {numbers['base']}: "
          f"A={p['A']:.4g} B={p['B']:.4g} E={p['E']:.4g} alpha={p['alpha']:.4g} beta={p['beta']:.4g} "
          f"R*_D={p['R_D_star']:.4g} R*_N={p['R_N_star']:.4g}")
    print(f"U_D = {numbers['unique_tokens']:.3g} unique tokens; the lowest loss they allow (N, D -> inf): "
          f"{numbers['loss_floor']:.4f}")

    def show(value: Any, fmt: str) -> str:
        return "undetermined" if value is None or value != value else format(value + 0.0, fmt)  # no "-0"

    for row in numbers["budgets"]:
        dc, ch = row["data_constrained"], row["chinchilla"]
        print(f"\nC = {row['C']:.3g} FLOP{'':14s}{'data-constrained':>18s}{'Chinchilla (unlimited data)':>30s}")
        for label, key, fmt in (("N* (parameters)", "N", ".4g"), ("D* (tokens)", "D", ".4g"),
                                ("epochs of U_D", "epochs", ".3g")):
            print(f"  {label:30s}{show(dc[key], fmt):>18s}{show(ch[key], fmt):>30s}")
        print(f"  {'loss with U_D unique tokens':30s}{show(dc['loss'], '.4f'):>18s}"
              f"{show(ch['loss_on_unique_tokens'], '.4f'):>30s}")
        print(f"  {'loss with unlimited data':30s}{'':>18s}{show(ch['loss_unlimited_data'], '.4f'):>30s}")
        print(f"  {'d log N*/d log C':30s}{show(dc['dlogN_dlogC'], '.4f'):>18s}{show(ch['dlogN_dlogC'], '.4f'):>30s}")
        print(f"  {'d log N*/d log U_D':30s}{show(dc['dlogN_dlogU'], '.4f'):>18s}")
        if dc["N"] is None or dc["N"] != dc["N"]:
            print("  (the loss along this budget is flat at the floor to float64 precision: more compute buys "
                  "nothing, and no single N* is optimal)")


def run(args: argparse.Namespace) -> int:
    from jaxscale.core.numerics import float64

    return float64(_run)(args)


def _run(args: argparse.Namespace) -> int:
    if args.plot is not None and args.plot.is_dir():
        raise IsADirectoryError(f"--plot {args.plot} is a directory: name the figure's file, "
                                f"e.g. {args.plot / 'allocation.png'}")
    if args.plot is not None and not args.plot.parent.is_dir():
        raise FileNotFoundError(f"--plot {args.plot}: directory {args.plot.parent} does not exist")
    params = _params(args)
    numbers, best, unlimited = _numbers(args, params)
    if args.plot is not None:
        from jaxscale.laws import chinchilla, data_constrained
        from jaxscale.plots.allocate import repeated_data_figure

        repeated_data_figure(data_constrained.LAW.given(U_D=args.unique_tokens), params, chinchilla.LAW,
                             data_constrained.base_params(params), best, unlimited).savefig(args.plot, dpi=110)
        numbers["plot"] = str(args.plot)
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print)
    return 0
