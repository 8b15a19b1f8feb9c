"""``runs``: what a source of runs holds, one line per run with what its checks found, and
the tidy runs table read from it (``jaxscale runs``)."""

from __future__ import annotations

from dataclasses import dataclass
import pathlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxscale._api._results import Result, rows
from jaxscale.support.atomic import atomic_path
from jaxscale.support.significant import format_or_undefined as _number

if TYPE_CHECKING:
    import pandas
    import pandas as pd

    from jaxscale.trackers.sources import SourceReport
    from jaxscale.tables.table import RunsTable


@dataclass(frozen=True, repr=False)
class RunsReport(Result):
    """The runs of a source as read: the tidy table and, per run, what the checks found.

    Attributes:
        table: the tidy runs table (:class:`~jaxscale.tables.table.RunsTable`).
        report: the source's kind, origin, metric, loss policy and one line per run
            (:class:`~jaxscale.trackers.sources.SourceReport`).
    """

    table: RunsTable
    report: SourceReport

    def _report(self) -> dict[str, Any]:
        return {**self.report.to_dict(), "rows": len(self.table)}

    def summary(self) -> pd.DataFrame:
        """One row per run: its final loss as the estimate (no interval), its N, points, first
        and last step, minimum loss, flags and why it was left out (empty where it was kept)."""
        return rows({"quantity": r.run_id, "estimate": r.final_loss, "n_total": r.n_total, "points": r.points,
                     "first_step": r.first_step, "last_step": r.last_step, "min_loss": r.min_loss,
                     "flags": "; ".join(r.flags), "excluded": r.excluded or ""} for r in self.report.runs)

    def _data_files(self, directory: Path) -> list[Path]:
        path = directory / "runs.csv"
        with atomic_path(path) as tmp:
            self.table.frame.to_csv(tmp, index=False)
        return [path]

    def _title(self) -> str:
        return f"RunsReport: {self.report.kind} {self.report.origin}, {len(self.report.runs)} runs"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        runs = numbers["runs"]
        kept = sum(1 for r in runs if not r["excluded"])
        lines = [f"jaxscale runs: {numbers['kind']} {numbers['origin']}: {len(runs) or 'no'} runs"
                 + (f", {kept} kept" if runs else " named (no run_id column)") + f", {numbers['rows']} rows",
                 f"  loss: {numbers['metric']}; {numbers['loss_policy_text']}"]
        width = max(6, *(len(r["run_id"]) for r in runs)) if runs else 6
        if runs:
            lines.append(f"  {'run':<{width}} {'N':>10} {'tokens/step':>11} {'points':>6} {'first':>8} {'last':>8} "
                         f"{'final':>8} {'min':>8}  flags")
        for r in runs:
            flags = "; ".join([*r["flags"], *([f"left out: {r['excluded']}"] if r["excluded"] else [])])
            lines.append(f"  {r['run_id']:<{width}} {_number(r['n_total'], '10.4g')} "
                         f"{_number(r['tokens_per_step'], '11.4g')} {r['points']:>6} {_number(r['first_step'], '8g')} "
                         f"{_number(r['last_step'], '8g')} {_number(r['final_loss'], '8.4f')} "
                         f"{_number(r['min_loss'], '8.4f')}  {flags}")
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


def runs(source: str | pathlib.Path | pandas.DataFrame, *, kind: str | None = None, metric: str | None = None,
                 config: str | pathlib.Path | None = None, loss_policy: str | None = None) -> RunsReport:
    """Read the runs where they live and say what they hold: one line per run (its N, tokens per
    step, points, first and last step, final and minimum loss) with what the checks found
    (restarts, repeated steps, NaN, divergence, too few points, no size in its config), and the
    tidy runs table (:meth:`RunsReport.save` writes it as ``runs.csv``). Nothing is refused for
    holding a single model size or few rows: this is the look before a fit.

    Args:
        source: a runs table (CSV or DataFrame), a TensorBoard log directory, an MLflow store or
            URI, or W&B exports (:mod:`jaxscale.trackers.sources`).
        kind: the source's kind, ``"table"``, ``"tensorboard"``, ``"mlflow"`` or ``"wandb"``
            (default: detected).
        metric: a tracker's logged metric read as the loss (default: val_loss, eval/loss, ...,
            loss, train_loss).
        config: a W&B runs-table export with the runs' configurations.
        loss_policy: the loss each run contributes, ``"every"``, ``"final"``, ``"min"`` or
            ``"ema:SPAN"`` (default: every checkpoint).

    Returns:
        A :class:`RunsReport`.
    """
    from jaxscale.tables.policy import as_policy
    from jaxscale.trackers.sources import table_report
    from jaxscale.tables.table import read_runs_table

    policy = as_policy(loss_policy)  # checked before any reading
    table = read_runs_table(source, source_kind=kind, metric=metric, config=config, loss_policy=loss_policy,
                            sizes_vary=False, min_rows=1)
    if table.report is not None:  # a tracker's: every run as read, with its checks
        return RunsReport(table, table.report)
    origin = str(source) if isinstance(source, (str, Path)) else table.source
    read = table if loss_policy is None else read_runs_table(  # the same rows before the policy
        source, source_kind=kind, metric=metric, config=config, sizes_vary=False, min_rows=1)
    return RunsReport(table, table_report(read.frame, origin, policy if loss_policy else None))
