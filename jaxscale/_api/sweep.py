"""The result of ``jaxscale sweep``: Pearce & Song's Section 3 on the transformers a sweep trained
(:mod:`jaxscale.lm.sweep`), its table of exponents, its figures and its summary, rendered once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxscale._api._results import Figures, Result, rows

if TYPE_CHECKING:
    import pandas as pd

    from jaxscale.lm.presets import SweepConfig
    from jaxscale.lm.sweep import SweepResult

#: The experiments whose loss curves are drawn (scheme 2 is experiment 1).
FIGURE_EXPERIMENTS = ("experiment 1", "scheme 1", "scheme 3", "scheme 4")


def _figure_name(experiment: str) -> str:
    return f"curves_{experiment.replace(' ', '')}"


@dataclass(frozen=True, repr=False)
class SweepReport(Result):
    """A finished sweep: the exponents of Method 1 on both bases per experiment, the runs, the
    best learning rates, and the loss curves of each experiment with two runs or more.

    Attributes:
        config: the sweep's configuration.
        result: what :func:`jaxscale.lm.sweep.run_sweep` returned.
        out: the sweep's directory, where its figures and ``summary.json`` are written.
    """

    config: SweepConfig
    result: SweepResult
    out: Path

    def _drawn(self) -> list[str]:
        """The experiments with two runs or more, whose curves are drawn."""
        from jaxscale.lm.sweep import select_runs

        return [e for e in FIGURE_EXPERIMENTS
                if len(set(select_runs(self.config, self.result.curves, self.result.best_lr, e).run_id)) >= 2]

    def _report(self) -> dict[str, Any]:
        return {**self.result.summary(),
                "figures": [str(self.out / f"{_figure_name(e)}.png") for e in self._drawn()]}

    def summary(self) -> pd.DataFrame:
        """a and b of N_opt ∝ C^a, D_opt ∝ C^b per experiment and basis, with their 95%
        intervals and the number of model sizes on the frontier."""
        return rows({"quantity": f"{r.experiment}, {r.basis}: {name}", "estimate": getattr(r, name),
                     "lower": getattr(r, f"{name}_low"), "upper": getattr(r, f"{name}_high"),
                     "frontier_models": r.frontier_models}
                    for r in self.result.table.itertuples() for name in ("a", "b"))

    def plot(self) -> Figures:
        """``curves_EXPERIMENT``: the loss curves of each experiment with two runs or more, on both bases."""
        from jaxscale.lm.sweep import select_runs
        from jaxscale.plots.sweep import curves_figure
        from jaxscale.tables import schema as rs

        return Figures({_figure_name(e): curves_figure(
            select_runs(self.config, self.result.curves, self.result.best_lr, e).frame, rs.BASES,
            title=f"{self.config.name}: {e}") for e in self._drawn()})

    def _data_files(self, directory: Path) -> list[Path]:
        from jaxscale.lm.sweep import SUMMARY
        from jaxscale.support.json_native import write_json

        write_json(directory / SUMMARY, self.to_dict())
        return [directory / SUMMARY]

    def _title(self) -> str:
        return f"SweepReport: {self.config.name}, {len(self.result.runs)} runs"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        from jaxscale.lm.sweep import format_table

        return [*format_table(self.result.table).rstrip("\n").split("\n"),
                f"runs table: {self.result.runs_table}   wall time: {self.result.wall_time_s:.0f} s"]
