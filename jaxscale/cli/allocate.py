"""``jaxscale allocate``: the compute-optimal model size and tokens of a law at a published
parameter set; for the data-constrained law of Muennighoff et al. (2023), with a limited number of
unique tokens, beside Chinchilla's answer (:func:`jaxscale.allocate`)."""

from __future__ import annotations

import argparse
from typing import Any

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
        "jaxscale allocate --law chinchilla --published epoch --compute 1e24",
    )
    p.add_argument("--compute", type=o.positive, nargs="+", required=True, metavar="C", help="budgets in FLOP")
    p.add_argument("--unique-tokens", type=o.positive, default=None, metavar="U_D",
                   help="unique tokens available (repeated as many epochs as the optimum wants); the "
                   "data-constrained law needs it")
    o.add_law(p, default="data-constrained", what="the law")
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
    from jaxscale import allocate, allocate_data_constrained
    from jaxscale.laws.registry import law_by_name

    o.check_out(args.out)
    changed = {k: v for k, v in (("R_D_star", args.r_star_d), ("R_N_star", args.r_star_n)) if v is not None}
    if args.unique_tokens is not None or law_by_name(args.law).inputs[2:] == ("U_D",):
        if args.unique_tokens is None:
            raise ValueError(f"the {args.law} law needs unique_tokens, the unique tokens available")
        result = allocate_data_constrained(args.compute, args.unique_tokens, args.law, published=args.published,
                                           params=changed or None)
        return o.report(result, args, _print)
    result = allocate(args.law, args.compute, published=args.published, params=changed or None)
    return o.report(result, args, _print_table)


def _print_table(numbers: dict[str, Any]) -> None:
    print(f"{numbers['law']} law, {numbers['source']}: "
          + " ".join(f"{k}={v:.4g}" for k, v in numbers["params"].items()))
    print(f"{'C (FLOP)':>12} {'N*':>12} {'D*':>12} {'D*/N*':>8}")
    for c, n, d, ratio in zip(numbers["C"], numbers["N"], numbers["D"], numbers["tokens_per_param"]):
        print(f"{c:>12.3g} {_show(n, '.4g'):>12} {_show(d, '.4g'):>12} {_show(ratio, '.3g'):>8}")
    for path in numbers.get("files", []):
        print(f"wrote {path}")


def _show(value: Any, fmt: str) -> str:
    """A number, or "undetermined" where the optimum is not (None in JSON)."""
    return "undetermined" if value is None or value != value else format(value + 0.0, fmt)  # no "-0"


def _print(numbers: dict[str, Any]) -> None:
    p = numbers["params"]
    print(f"{numbers['law']} law ({numbers['citation']}), base {numbers['base']}: "
          f"A={p['A']:.4g} B={p['B']:.4g} E={p['E']:.4g} alpha={p['alpha']:.4g} beta={p['beta']:.4g} "
          f"R*_D={p['R_D_star']:.4g} R*_N={p['R_N_star']:.4g}")
    print(f"U_D = {numbers['unique_tokens']:.3g} unique tokens; the lowest loss they allow (N, D -> inf): "
          f"{numbers['loss_floor']:.4f}")

    for row in numbers["budgets"]:
        dc, ch = row["data_constrained"], row["chinchilla"]
        print(f"\nC = {row['C']:.3g} FLOP{'':14s}{'data-constrained':>18s}{'Chinchilla (unlimited data)':>30s}")
        for label, key, fmt in (("N* (parameters)", "N", ".4g"), ("D* (tokens)", "D", ".4g"),
                                ("epochs of U_D", "epochs", ".3g")):
            print(f"  {label:30s}{_show(dc[key], fmt):>18s}{_show(ch[key], fmt):>30s}")
        print(f"  {'loss with U_D unique tokens':30s}{_show(dc['loss'], '.4f'):>18s}"
              f"{_show(ch['loss_on_unique_tokens'], '.4f'):>30s}")
        print(f"  {'loss with unlimited data':30s}{'':>18s}{_show(ch['loss_unlimited_data'], '.4f'):>30s}")
        print(f"  {'d log N*/d log C':30s}{_show(dc['dlogN_dlogC'], '.4f'):>18s}{_show(ch['dlogN_dlogC'], '.4f'):>30s}")
        print(f"  {'d log N*/d log U_D':30s}{_show(dc['dlogN_dlogU'], '.4f'):>18s}")
        if dc["N"] is None or dc["N"] != dc["N"]:
            print("  (the loss along this budget is flat at the floor to float64 precision: more compute buys "
                  "nothing, and no single N* is optimal)")
    for path in numbers.get("files", []):
        print(f"wrote {path}")
