"""``jaxscale runs``: what a source of runs holds, one line per run, and the tidy runs table
(:func:`jaxscale.runs`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxscale.cli import _options as o

EXAMPLE = """Example:
  jaxscale runs logs/ --loss-policy final --out tidy/
  jaxscale runs sqlite:///mlflow.db --json"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "runs",
        help="show the runs a table or an experiment tracker holds, and write them as a runs table",
        description="Read runs where they live: a runs table (CSV), a TensorBoard log directory, an MLflow "
        "store (sqlite:///mlflow.db, a tracking server URI, an mlruns directory) or W&B exports (line-plot "
        "and runs-table CSV, history Parquet/JSON Lines). Prints one line per run: its id, N, tokens per "
        "step, points, first and last step, final and minimum loss, and what the checks found "
        "(restarts, repeated steps, NaN, divergence, too few points, no size in its config).",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("source", help="runs table, TensorBoard directory, MLflow URI or store, or W&B export(s)")
    o.add_source(p)
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="write DIR/runs.csv, the tidy runs table (default: write nothing)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the lines")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import runs

    o.check_out(args.out)
    result = runs(args.source, kind=args.source_kind, metric=args.metric, config=args.config,
                  loss_policy=args.loss_policy)
    return o.report(result, args)
