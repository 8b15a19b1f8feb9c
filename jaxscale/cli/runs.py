"""``jaxscale runs``: what a source of runs holds, one line per run, and the tidy runs table."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

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
    from jaxscale.cli._output import emit
    from jaxscale.runs.policy import as_policy
    from jaxscale.runs.sources import table_report
    from jaxscale.runs.table import read_runs_table

    policy = as_policy(args.loss_policy)  # checked before any reading
    o.check_out(args.out)
    table = read_runs_table(args.source, source_kind=args.source_kind, metric=args.metric, config=args.config,
                      loss_policy=args.loss_policy, sizes_vary=False, min_rows=1)
    report = table.report or table_report(table.frame, args.source, policy if args.loss_policy else None)
    numbers: dict[str, Any] = {**report.to_dict(), "rows": len(table)}
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / "runs.csv"
        table.frame.to_csv(path, index=False)
        numbers["files"] = [str(path)]
    emit(numbers, args.json, _print)
    return 0


def _number(value: float | None, spec: str) -> str:
    return "undefined" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _print(numbers: dict[str, Any]) -> None:
    runs = numbers["runs"]
    kept = sum(1 for r in runs if not r["excluded"])
    print(f"jaxscale runs: {numbers['kind']} {numbers['origin']}: {len(runs) or 'no'} runs"
          + (f", {kept} kept" if runs else " named (no run_id column)") + f", {numbers['rows']} rows")
    print(f"  loss: {numbers['metric']}; {numbers['loss_policy_text']}")
    if runs:
        width = max(6, *(len(r["run_id"]) for r in runs))
        print(f"  {'run':<{width}} {'N':>10} {'tokens/step':>11} {'points':>6} {'first':>8} {'last':>8} "
              f"{'final':>8} {'min':>8}  flags")
    for r in runs:
        flags = "; ".join([*r["flags"], *([f"left out: {r['excluded']}"] if r["excluded"] else [])])
        print(f"  {r['run_id']:<{width}} {_number(r['n_total'], '10.4g')} {_number(r['tokens_per_step'], '11.4g')} "
              f"{r['points']:>6} {_number(r['first_step'], '8g')} {_number(r['last_step'], '8g')} "
              f"{_number(r['final_loss'], '8.4f')} {_number(r['min_loss'], '8.4f')}  {flags}")
    for path in numbers.get("files", []):
        print(f"wrote {path}")
