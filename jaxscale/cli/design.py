"""``jaxscale design``: which runs to train next for a target quantity, within a compute budget
(:func:`jaxscale.design`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "design", "which runs to train next for a target, per FLOP, within a budget",
        "Propose the next runs (N, D) that shrink the uncertainty of what the study decides (N*(C), D*(C), the loss "
        "of a planned run, the allocation exponent a) most per FLOP: the runs so far are fitted by Approach 3, "
        "and each candidate is valued by the variance of the target it would remove under the robust belief at "
        "that fit (the sandwich covariance; a run's noise grows with its distance from the compute-optimal tokens "
        "per parameter), (g'Sg)^2 / (sigma_x^2 + j'Sj), divided by its cost 6ND; greedy selection within --budget. "
        "Without RUNS the plan starts from the law's priors. Candidates: a grid up to --max-cost per run, or "
        "--candidates CSV (columns N and D).",
        "jaxscale design runs.csv --drop-highest 5 --target N*:1e24 --budget 1e22 --max-cost 1e21 --out plan\n"
        "jaxscale design --target L:7e10,1.4e12 --budget 1e21 --json",
    )
    o.add_table(p, required=False)
    p.add_argument("--target", default="N*:1e24", metavar="SPEC",
                   help="N*:C, D*:C, a:C (C in FLOP) or L:N,D (default: %(default)s)")
    p.add_argument("--budget", type=o.positive, required=True, metavar="C", help="FLOP the new runs may spend together")
    p.add_argument("--max-cost", type=o.positive, default=None, metavar="C",
                   help="the most FLOP one run of the candidate grid may cost (default: --budget)")
    p.add_argument("--min-cost", type=o.positive, default=None, metavar="C", help="the least (default: none)")
    p.add_argument("--candidates", type=Path, default=None, metavar="CSV",
                   help="candidate runs instead of the grid: a CSV with columns N and D")
    p.add_argument("--max-runs", type=o.at_least(1), default=None, metavar="K", help="propose at most K runs")
    p.add_argument("--noise", type=o.positive, default=None, metavar="SIGMA",
                   help="residual scale of log loss of a new run near the optimal ratio (default: the sandwich's at the fit; "
                        "0.01 without RUNS)")
    p.add_argument("--belief", choices=("robust", "ensemble"), default="robust",
                   help="robust: the sandwich covariance at the fit (default); ensemble: the spread of 100 bootstrap "
                        "refits of the fit, of the target and of each candidate's predicted loss (needs RUNS)")
    o.add_law(p, what="the law of N and D the runs are fitted with")
    o.add_out(p, "the figure (design_candidates.png: the candidates coloured by value per FLOP, the chosen numbered)")
    o.add_json(p)
    p.set_defaults(run=run)


def _candidates(path: Path) -> tuple[Any, Any]:
    import pandas as pd

    frame = pd.read_csv(path)
    missing = [c for c in ("N", "D") if c not in frame.columns]
    if missing:
        raise ValueError(f"--candidates {path}: no column {missing[0]!r} (columns N and D are needed)")
    return frame["N"].to_numpy(float), frame["D"].to_numpy(float)


def run(args: argparse.Namespace) -> int:
    from jaxscale import design

    o.check_out(args.out)
    if args.candidates is not None and (args.max_cost is not None or args.min_cost is not None):
        raise ValueError("--max-cost and --min-cost shape the candidate grid; not with --candidates")
    candidates = None if args.candidates is None else _candidates(args.candidates)
    result = design(None if args.runs is None else o.deferred_table(args), target=args.target, budget=args.budget,
                    law=args.law, candidates=candidates, max_cost=args.max_cost, min_cost=args.min_cost,
                    max_runs=args.max_runs, noise=args.noise, belief=args.belief)
    return o.report(result, args)

