"""What a sweep has done and what it has left, in device-minutes at the rate it was measured at.

A sweep advances from wherever it stopped (each run resumes from its own checkpoint), so several
short device windows complete it; this says, from its output directory alone (nothing is
trained or loaded onto a device), how far it is. The runs are those :func:`~jaxscale.lm.sweep.run_sweep`
plans: every size's learning-rate grid (constant schedule), then its cosine runs at its best
rate, one per budget fraction, whose lengths are known before the rate is. A rate tried beyond
a grid edge (``lr_extensions``) is counted once it exists; before, it is reported as possible.

For each size, updates done = the step of each run's latest checkpoint (a run resumes there;
finished and diverged runs count as done), and

    minutes left = updates left / r / 60,

with r the run-updates per second at which that size's runs last trained side by side
(compilation included), kept beside each run's checkpoint
(:data:`jaxscale.lm.train.RATE_FILE`). A size never trained has no rate: its time left is
undefined and the total is a lower bound.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from jaxscale.lm import train as lm
from jaxscale.lm.presets import ModelSize, SweepConfig
from jaxscale.lm.sweep import CONFIG, DIVERGED_FILE, constant_runs, cosine_runs, grid_rates

RUNS_DIR = "runs"


@dataclasses.dataclass(frozen=True)
class SizeStatus:
    """One model size's runs: how many are finished, updates done and left, the measured rate."""

    name: str
    runs_planned: int
    runs_finished: int
    runs_diverged: int
    updates_done: int
    updates_left: int
    run_updates_per_s: float | None  # None: never measured
    runs_together: int | None
    device: str | None

    @property
    def minutes_left(self) -> float | None:
        if self.updates_left == 0:
            return 0.0
        return None if not self.run_updates_per_s else self.updates_left / self.run_updates_per_s / 60.0


@dataclasses.dataclass(frozen=True)
class SweepStatus:
    """Every size's :class:`SizeStatus`, and the runs a grid edge may still add."""

    name: str
    out: str
    sizes: tuple[SizeStatus, ...]
    possible_extra_runs: int
    possible_extra_updates: int

    @property
    def minutes_left(self) -> float | None:
        """Device-minutes left for the sizes with a measured rate (a lower bound if any has none);
        None (undefined) where updates are left and no size that has them has a measured rate."""
        left = [s.minutes_left for s in self.sizes if s.updates_left]
        if left and all(m is None for m in left):
            return None
        return sum(m for m in left if m is not None)

    @property
    def unmeasured(self) -> list[str]:
        return [s.name for s in self.sizes if s.minutes_left is None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "out": self.out, "minutes_left": self.minutes_left, "unmeasured": self.unmeasured,
            "possible_extra_runs": self.possible_extra_runs, "possible_extra_updates": self.possible_extra_updates,
            "sizes": [{**dataclasses.asdict(s), "minutes_left": s.minutes_left} for s in self.sizes],
        }  # fmt: skip

    def text(self) -> str:
        done = sum(s.runs_finished + s.runs_diverged for s in self.sizes)
        planned = sum(s.runs_planned for s in self.sizes)
        if self.minutes_left is None:
            total = "time left undefined: no size with updates left has trained yet, so no rate is measured"
        elif self.unmeasured:
            total = (f"at least {self.minutes_left:.1f} device-minutes left at the measured rates "
                     f"(no rate yet for {', '.join(self.unmeasured)})")
        else:
            total = f"{self.minutes_left:.1f} device-minutes left at the measured rates"
        lines = [
            f"sweep {self.name} in {self.out}: {done} of {planned} runs done; {total}",
            "| size | runs done / planned | diverged | updates done | updates left | run-updates/s (runs together, device) | minutes left |",
            "|---|---|---|---|---|---|---|",
        ]
        for s in self.sizes:
            rate = "not measured" if not s.run_updates_per_s else f"{s.run_updates_per_s:,.1f} ({s.runs_together}, {s.device})"
            left = "undefined" if s.minutes_left is None else f"{s.minutes_left:.1f}"
            lines.append(f"| {s.name} | {s.runs_finished + s.runs_diverged} / {s.runs_planned} | {s.runs_diverged} | "
                         f"{s.updates_done:,} | {s.updates_left:,} | {rate} | {left} |")
        if self.possible_extra_runs:
            lines.append(f"a best rate on a grid edge may add up to {self.possible_extra_runs} constant runs "
                         f"({self.possible_extra_updates:,} updates), not counted above")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.text()


def _checkpoint_step(directory: Path) -> int:
    """The step of the run's latest checkpoint (0 if none): where it resumes."""
    steps = [int(p.name) for p in (directory / "checkpoints").glob("*") if p.name.isdigit()]
    return max(steps, default=0)


def _vocab_size(cfg: SweepConfig, runs: Path) -> int:
    """The vocabulary the sweep's models were built with (its tokenizer's), else the config's."""
    for spec in sorted(runs.glob(f"*/{lm.SPEC_FILE}")):
        return int(json.loads(spec.read_text())["model"]["vocab_size"])
    return cfg.vocab_size


def _size_status(cfg: SweepConfig, size: ModelSize, vocab: int, runs: Path) -> SizeStatus:
    grid = constant_runs(dataclasses.replace(cfg, sizes=(size,)), vocab, grid_rates(cfg, vocab))
    extended = {d.name for d in runs.glob(f"{size.name}_constant_x1_lr*")} - {s.run_id for s in grid}
    planned = [(s.run_id, s.schedule.total_steps) for s in grid]
    planned += [(name, grid[0].schedule.total_steps) for name in sorted(extended)]
    if {3, 4} & set(cfg.schemes):
        for spec in cosine_runs(cfg, size, vocab, cfg.single_lr):  # the length does not depend on the rate
            fraction = spec.run_id.split("_x")[1].split("_lr")[0]
            started = sorted(runs.glob(f"{size.name}_cosine_x{fraction}_lr*"))
            planned.append((started[0].name if started else spec.run_id + "?", spec.schedule.total_steps))
    finished = diverged = done = left = 0
    rates = []
    for name, steps in planned:
        directory = runs / name
        if (directory / DIVERGED_FILE).is_file():
            diverged += 1
            done += _checkpoint_step(directory)
            continue
        step = steps if (directory / lm.DONE_FILE).is_file() else _checkpoint_step(directory)
        finished += step == steps
        done, left = done + step, left + steps - step
        if (directory / lm.RATE_FILE).is_file():
            rates.append(json.loads((directory / lm.RATE_FILE).read_text()))
    rate = max(rates, key=lambda r: r["seconds"], default=None)  # the longest measurement
    return SizeStatus(size.name, len(planned), finished, diverged, done, left,
                      rate["run_updates_per_s"] if rate else None, rate["runs_together"] if rate else None,
                      rate["device"] if rate else None)


def sweep_status(cfg: SweepConfig, out: str | Path) -> SweepStatus:
    """How far the sweep ``cfg`` in ``out`` has come and the device-minutes it has left.

    Args:
        cfg: the sweep's config (the one it was started with).
        out: its output directory (need not exist yet: then nothing is done).

    Returns:
        A :class:`SweepStatus` (``text()`` for the table, ``to_dict()`` for JSON).

    Raises:
        ValueError: ``out`` holds another sweep (its ``config.json`` names another).
    """
    config = Path(out) / CONFIG
    held = json.loads(config.read_text()).get("name") if config.is_file() else cfg.name
    if held != cfg.name:
        raise ValueError(f"{out} holds the sweep {held!r}, not {cfg.name!r}: give its config or preset")
    runs = Path(out) / RUNS_DIR
    vocab = _vocab_size(cfg, runs)
    sizes = tuple(_size_status(cfg, size, vocab, runs) for size in cfg.sizes)
    # before the cosine runs start, a size whose grid has not been extended may still add lr_extensions constant runs
    cosine_started = any(runs.glob("*_cosine_*"))
    open_sizes = [s for s in sizes if not cosine_started and s.runs_planned - _cosine_count(cfg) <= len(cfg.learning_rates)]
    constant = {s.name: constant_runs(dataclasses.replace(cfg, sizes=(s,)), vocab, {s.name: [cfg.single_lr]})[0]
                for s in cfg.sizes}
    extra_runs = cfg.lr_extensions * len(open_sizes)
    extra_updates = cfg.lr_extensions * sum(constant[s.name].schedule.total_steps for s in open_sizes)
    return SweepStatus(cfg.name, str(out), sizes, extra_runs, extra_updates)


def _cosine_count(cfg: SweepConfig) -> int:
    """Cosine runs per size: one per budget fraction with scheme 4, one with scheme 3 alone."""
    if not {3, 4} & set(cfg.schemes):
        return 0
    return len(cfg.budget_fractions) if 4 in cfg.schemes else 1
