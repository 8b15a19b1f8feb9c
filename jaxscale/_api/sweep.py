"""The verbs of ``jaxscale sweep``: :func:`sweep` trains (or resumes) a family of transformers and
fits Pearce & Song's Section 3 on them (:mod:`jaxscale.lm.sweep`), its table of exponents, its
figures and its summary rendered once (:class:`SweepReport`); :func:`sweep_status` says what a
sweep has done and has left, training nothing (:class:`SweepProgress`)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxscale._api._results import Figures, Result, rows
from jaxscale.lm.presets import SweepConfig

if TYPE_CHECKING:
    import pandas as pd

    from jaxscale.lm.sweep import SweepResult
    from jaxscale.lm.sweep_status import SweepStatus

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
        result: what :func:`jaxscale.lm.sweep.run_sweep` returned; None in a process of a
            multi-process run other than process 0, which alone fits and reports.
        out: the sweep's directory, where its figures and ``summary.json`` are written.
    """

    config: SweepConfig
    result: SweepResult | None
    out: Path

    def _drawn(self) -> list[str]:
        """The experiments with two runs or more, whose curves are drawn."""
        from jaxscale.lm.sweep import select_runs

        if self.result is None:
            return []
        return [e for e in FIGURE_EXPERIMENTS
                if len(set(select_runs(self.config, self.result.curves, self.result.best_lr, e).run_id)) >= 2]

    def _report(self) -> dict[str, Any]:
        if self.result is None:
            return {"name": self.config.name, "out": str(self.out), "reported_by": "process 0"}
        return {**self.result.summary(),
                "figures": [str(self.out / f"{_figure_name(e)}.png") for e in self._drawn()]}

    def summary(self) -> pd.DataFrame:
        """a and b of N_opt ∝ C^a, D_opt ∝ C^b per experiment and basis, with their 95%
        intervals and the number of model sizes on the frontier (no rows where process 0 reports)."""
        table = () if self.result is None else self.result.table.itertuples()
        return rows({"quantity": f"{r.experiment}, {r.basis}: {name}", "estimate": getattr(r, name),
                     "lower": getattr(r, f"{name}_low"), "upper": getattr(r, f"{name}_high"),
                     "frontier_models": r.frontier_models}
                    for r in table for name in ("a", "b"))

    def plot(self) -> Figures:
        """``curves_EXPERIMENT``: the loss curves of each experiment with two runs or more, on both bases."""
        from jaxscale.lm.sweep import select_runs
        from jaxscale.plots.sweep import curves_figure
        from jaxscale.tables import schema as rs

        if self.result is None:
            return Figures()
        return Figures({_figure_name(e): curves_figure(
            select_runs(self.config, self.result.curves, self.result.best_lr, e).frame, rs.BASES,
            title=f"{self.config.name}: {e}") for e in self._drawn()})

    def _data_files(self, directory: Path) -> list[Path]:
        from jaxscale.lm.sweep import SUMMARY
        from jaxscale.support.json_native import write_json

        if self.result is None:
            return []
        write_json(directory / SUMMARY, self.to_dict())
        return [directory / SUMMARY]

    def _title(self) -> str:
        if self.result is None:
            return f"SweepReport: {self.config.name}, trained here; process 0 of the run reports"
        return f"SweepReport: {self.config.name}, {len(self.result.runs)} runs"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        from jaxscale.lm.sweep import format_table

        if self.result is None:
            return [self._title()]
        return [*format_table(self.result.table).rstrip("\n").split("\n"),
                f"runs table: {self.result.runs_table}   wall time: {self.result.wall_time_s:.0f} s"]


@dataclass(frozen=True, repr=False)
class SweepProgress(Result):
    """What a sweep has done and what it has left: per model size, the runs done of those
    planned, the updates done and left, and the device-minutes left at the rate the size last
    trained at (:mod:`jaxscale.lm.sweep_status`).

    Attributes:
        status: the sweep's :class:`~jaxscale.lm.sweep_status.SweepStatus`.
    """

    status: SweepStatus

    def _report(self) -> dict[str, Any]:
        return self.status.to_dict()

    def summary(self) -> pd.DataFrame:
        """The device-minutes left per model size and in all (NaN where no rate is measured yet;
        the total a lower bound, ``lower_bound``, where some sizes have none), with each size's
        runs done and planned and its updates left."""
        sizes = [{"quantity": f"{s.name}: minutes left", "estimate": s.minutes_left,
                  "runs_done": s.runs_finished + s.runs_diverged, "runs_planned": s.runs_planned,
                  "updates_left": s.updates_left} for s in self.status.sizes]
        total = self.status.minutes_left
        return rows([*sizes, {"quantity": "minutes left", "estimate": total,
                              "lower_bound": total is not None and bool(self.status.unmeasured)}])

    def _title(self) -> str:
        return f"SweepProgress: {self.status.name}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        return self.status.text().rstrip("\n").split("\n")


def _config(config: str | Path | SweepConfig | None, preset: str | None, corpus: str | Path | None) -> SweepConfig:
    """The sweep's configuration, from a file, a preset's name or a :class:`SweepConfig` itself,
    training on ``corpus`` if given (:func:`jaxscale.lm.presets.with_corpus`)."""
    from jaxscale.lm import presets

    if (config is None) == (preset is None):
        raise ValueError("give exactly one of config (a file or a SweepConfig) or preset (a name)")
    if isinstance(config, SweepConfig):
        chosen = config
    elif preset is not None:
        chosen = presets.preset(preset)
    elif isinstance(config, (str, Path)):
        chosen = presets.load_config(config)
    else:
        raise ValueError(f"config must be a .json or .toml file or a SweepConfig, got {type(config).__name__}")
    return presets.with_corpus(chosen, corpus)


def _out(cfg: SweepConfig, out: str | Path | None) -> Path:
    """``out``, or by default ``out/sweeps/NAME`` under the working directory."""
    return Path(out) if out is not None else Path("out") / "sweeps" / cfg.name


def sweep(config: str | Path | SweepConfig | None = None, *, preset: str | None = None,
          out: str | Path | None = None, corpus: str | Path | None = None, microbatches: int = 1,
          progress: bool = True, distributed: bool = False, coordinator: str | None = None,
          num_processes: int | None = None, process_id: int | None = None,
          heartbeat_timeout: int | None = None) -> SweepReport:
    """Train (or resume) the runs of a sweep (model sizes, learning-rate grid, budgets, schemes)
    and fit Chinchilla's Method 1 on both parameter bases (Pearce & Song 2024, Section 3).

    >>> report = js.sweep(preset="smoke", out="sweep/")   # doctest: +SKIP

    Runs are checkpointed: calling it again with the same ``out`` resumes a killed sweep. The
    runs table, the tables, the diagnostics, the figures and ``summary.json`` are written to
    ``out``, which this process holds while it writes (another process writing there is
    refused). In a multi-process run (``distributed``, or any of ``coordinator``,
    ``num_processes``, ``process_id``) every process calls it with the same arguments and an
    ``out`` they all see; process 0 alone writes and reports, and if another process dies the
    process ends at once with one line on stderr and status 1 (JAX's exit handler would wait
    for the dead one).

    Args:
        config: a sweep config file (``.json`` or ``.toml``) or a
            :class:`~jaxscale.lm.presets.SweepConfig` (a preset changed in code, e.g. by
            :func:`~jaxscale.lm.presets.first_sizes`); or give ``preset``.
        preset: a named configuration: ``smoke``, ``cpu`` or ``paper``.
        out: the sweep's directory (default: ``out/sweeps/NAME``).
        corpus: a text corpus (``.txt`` or ``.txt.gz``) to train on instead of the config's; a
            config without one takes ``$JAXSCALE_CORPUS``, else the shared corpus beside the clone.
        microbatches: each device's share of a batch computed in this many parts one after
            another (the same runs in less activation memory).
        progress: show progress bars (process 0 only).
        distributed: join a multi-process run (on Cloud TPU pods, SLURM and Open MPI JAX detects
            the rest).
        coordinator: process 0's ``HOST:PORT``.
        num_processes: the number of processes.
        process_id: this process's index, 0 to ``num_processes - 1``.
        heartbeat_timeout: seconds after which a silent process counts as dead (default 100).

    Returns:
        A :class:`SweepReport` (in a process other than process 0 of a multi-process run, one
        without a result: process 0 reports).

    Raises:
        ValueError: both or neither of ``config`` and ``preset``, an unknown preset,
            ``microbatches`` < 1, an ``out`` that cannot be a directory or that another process
            is writing, or process arguments that name no process.
    """
    from jaxscale.lm import distributed as processes
    from jaxscale.lm.sweep import run_sweep
    from jaxscale.support.atomic import OutputLock, check_writable

    if microbatches < 1:
        raise ValueError(f"microbatches must be >= 1, got {microbatches}")
    cfg = _config(config, preset, corpus)
    directory = _out(cfg, out)
    check_writable(directory, "out")
    several = distributed or (coordinator, num_processes, process_id) != (None, None, None)
    if several:
        processes.initialize(coordinator, num_processes, process_id, heartbeat_timeout)
    main = not several or processes.is_main_process()
    with OutputLock(directory) if main else contextlib.nullcontext():
        try:
            result = run_sweep(cfg, directory, progress=progress, microbatches=microbatches)
        except processes.ProcessLost as err:
            processes.exit_now(f"jaxscale sweep: error: {err}")
        report = SweepReport(cfg, result, directory)
        if result is not None:
            report.save(directory)  # the figures and summary.json (the object of to_dict())
    return report


def sweep_status(config: str | Path | SweepConfig | None = None, *, preset: str | None = None,
                 out: str | Path | None = None, corpus: str | Path | None = None) -> SweepProgress:
    """How far a sweep has come and the device-minutes it has left, from its directory alone:
    nothing is trained or loaded onto a device.

    >>> js.sweep_status(preset="paper", out="sweep/")   # doctest: +SKIP

    Args:
        config: the sweep's config file (``.json`` or ``.toml``) or
            :class:`~jaxscale.lm.presets.SweepConfig`, the one it was started with; or give
            ``preset``.
        preset: a named configuration: ``smoke``, ``cpu`` or ``paper``.
        out: the sweep's directory (default: ``out/sweeps/NAME``; need not exist yet: then
            nothing is done).
        corpus: the corpus it trains on, as given to :func:`sweep`.

    Returns:
        A :class:`SweepProgress`.

    Raises:
        ValueError: both or neither of ``config`` and ``preset``, an unknown preset, or an
            ``out`` that holds another sweep.
    """
    from jaxscale.lm.sweep_status import sweep_status as status_of

    cfg = _config(config, preset, corpus)
    return SweepProgress(status_of(cfg, _out(cfg, out)))
