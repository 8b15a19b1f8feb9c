"""Which loss a run contributes, and the checks a training curve passes first.

A tracker logs a curve per run; a scaling law wants, per run, either every checkpoint (the laws
of whole curves, ``jaxscale curve``) or one loss. Which one is a choice that moves fits, so it
is declared (:class:`LossPolicy`) and printed with every result:

- ``every``: every logged checkpoint (the default; ``--final-only`` then keeps the last);
- ``final``: the last checkpoint's loss;
- ``min``: the lowest loss of the run, at the step where it was logged;
- ``ema``: at the last checkpoint, the exponential moving average of the logged losses with span
  ``ema_span`` points (weight 2 / (span + 1) on the newest, pandas' ``ewm(span=...)``; default
  :data:`DEFAULT_EMA_SPAN`), which smooths the evaluation noise of a single checkpoint.

Before the choice, each run's curve is checked, and each finding names the run and the step
(:func:`check_curve`), decided before looking at any data:

- a restart (a step lower than the one before: the run resumed from a checkpoint) keeps the
  later segment: every earlier point at or after the step it resumed from is dropped, and a
  warning says where;
- a step logged twice keeps the last value, with a warning;
- NaN or infinite losses are dropped, with a warning naming their steps;
- checkpoints before ``warmup_steps`` are dropped (warm-up trimming; 0 keeps all);
- a run with fewer than ``min_points`` checkpoints left (default :data:`MIN_POINTS`) is excluded;
- a diverged run, whose loss after its minimum rises above ``divergence_factor`` times that
  minimum (default :data:`DIVERGENCE_FACTOR`), is excluded.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jaxscale.tables.schema import LOSS_POLICIES

#: Span of the EMA in logged points: the last ten checkpoints carry 86% of the weight.
DEFAULT_EMA_SPAN = 10.0
#: A run whose loss climbs past 1.5 x its own minimum after reaching it has diverged (evaluation
#: noise of a converging run is a few percent of its loss).
DIVERGENCE_FACTOR = 1.5
#: Fewer logged checkpoints than this is a run that died early.
MIN_POINTS = 3
#: Steps named in one warning at most.
_SHOWN = 5


@dataclass(frozen=True)
class LossPolicy:
    """Which loss each run contributes, and the thresholds of the curve checks (module docstring).

    Args:
        kind: one of :data:`LOSS_POLICIES`.
        ema_span: the EMA's span in logged points (``kind="ema"``).
        warmup_steps: checkpoints at earlier steps are dropped.
        divergence_factor: a run whose loss after its minimum exceeds this multiple of it is excluded.
        min_points: runs with fewer checkpoints left are excluded.
    """

    kind: str = "every"
    ema_span: float = DEFAULT_EMA_SPAN
    warmup_steps: float = 0.0
    divergence_factor: float = DIVERGENCE_FACTOR
    min_points: int = MIN_POINTS

    def __post_init__(self) -> None:
        if self.kind not in LOSS_POLICIES:
            raise ValueError(f"loss policy must be one of {', '.join(LOSS_POLICIES)}; got {self.kind!r}")
        if not self.ema_span >= 1:
            raise ValueError(f"the EMA span must be >= 1 point; got {self.ema_span}")
        if not self.warmup_steps >= 0:
            raise ValueError(f"warm-up steps must be >= 0; got {self.warmup_steps}")
        if not self.divergence_factor > 1:
            raise ValueError(f"the divergence factor must be > 1; got {self.divergence_factor}")
        if self.min_points < 1:
            raise ValueError(f"min_points must be >= 1; got {self.min_points}")

    def describe(self) -> str:
        """One line for every result: the choice and the thresholds of the checks."""
        choice = {"every": "every checkpoint", "final": "the final checkpoint's loss",
                  "min": "each run's minimum loss", "ema": f"the EMA (span {self.ema_span:g} points) at the last step"}
        trim = f"; steps < {self.warmup_steps:g} dropped" if self.warmup_steps else ""
        return (f"loss policy {self.kind}: {choice[self.kind]}{trim}; runs with < {self.min_points} points or "
                f"diverging past {self.divergence_factor:g}x their minimum excluded")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "ema_span": self.ema_span, "warmup_steps": self.warmup_steps,
                "divergence_factor": self.divergence_factor, "min_points": self.min_points}


def as_policy(policy: str | LossPolicy | None) -> LossPolicy:
    """A :class:`LossPolicy` from its name (``"final"``, or ``"ema:20"`` for a span of 20 points)."""
    if isinstance(policy, LossPolicy):
        return policy
    if policy is None:
        return LossPolicy()
    kind, _, span = str(policy).partition(":")
    if span and kind != "ema":
        raise ValueError(f"only the ema loss policy takes a span (ema:SPAN); got {policy!r}")
    try:
        return LossPolicy(kind, float(span)) if span else LossPolicy(kind)
    except ValueError as err:
        if span and "could not convert" in str(err):
            raise ValueError(f"the EMA span must be a number of points; got {policy!r}") from None
        raise


@dataclass(frozen=True)
class CurveCheck:
    """What the checks found in one run: the rows kept (positions in its logged order), the
    findings, one line each, and why the run was excluded (None if it was not)."""

    kept: np.ndarray
    findings: tuple[str, ...]
    excluded: str | None


def _steps_text(steps: np.ndarray) -> str:
    shown = ", ".join(f"{s:g}" for s in steps[:_SHOWN])
    return shown + (f" and {len(steps) - _SHOWN} more" if len(steps) > _SHOWN else "")


def _last_written(step: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Rows kept when later writes win: a row survives if every later row has a larger step.
    Findings name each restart (a step lower than its predecessor) and each duplicated step."""
    later_min = np.minimum.accumulate(np.append(step[1:], np.inf)[::-1])[::-1]
    keep = step < later_min
    findings = []
    back = np.flatnonzero(step[1:] < step[:-1]) + 1
    for i in back:
        findings.append(f"restart at step {step[i]:g} after step {step[i - 1]:g}: kept the later segment")
    same = np.flatnonzero(step[1:] == step[:-1]) + 1
    if same.size:
        findings.append(f"step {_steps_text(step[same])} logged twice: kept the last value")
    return keep, findings


def check_curve(step: np.ndarray, loss: np.ndarray, policy: LossPolicy) -> CurveCheck:
    """The checks of the module docstring on one run's curve (``step`` and ``loss`` in logged order)."""
    step, loss = np.asarray(step, np.float64), np.asarray(loss, np.float64)
    keep, findings = _last_written(step)
    bad = keep & ~np.isfinite(loss)
    if bad.any():
        findings.append(f"non-finite loss at step {_steps_text(step[bad])}: dropped")
    keep &= np.isfinite(loss) & (step >= policy.warmup_steps)
    kept = np.flatnonzero(keep)
    if len(kept) < policy.min_points:
        return CurveCheck(kept, tuple(findings), f"too few points ({len(kept)} < {policy.min_points})")
    curve = loss[kept]
    low = int(np.argmin(curve))
    worst = low + int(np.argmax(curve[low:]))
    if curve[worst] > policy.divergence_factor * curve[low]:
        return CurveCheck(kept, tuple(findings), (
            f"diverged: loss {curve[worst]:.4g} at step {step[kept[worst]]:g} is above {policy.divergence_factor:g} "
            f"x its minimum {curve[low]:.4g} (step {step[kept[low]]:g})"))
    return CurveCheck(kept, tuple(findings), None)


def chosen_rows(loss: np.ndarray, kept: np.ndarray, policy: LossPolicy) -> tuple[np.ndarray, np.ndarray]:
    """The rows (positions) a run contributes under ``policy`` and their losses: all ``kept``
    rows (every), the last (final, ema: the EMA over the kept losses) or the lowest (min)."""
    curve = np.asarray(loss, np.float64)[kept]
    if policy.kind == "every":
        return kept, curve
    if policy.kind == "min":
        i = int(np.argmin(curve))
        return kept[i:i + 1], curve[i:i + 1]
    if policy.kind == "final":
        return kept[-1:], curve[-1:]
    ema = pd.Series(curve).ewm(span=policy.ema_span, adjust=True).mean().to_numpy()
    return kept[-1:], ema[-1:]


def apply_policy(frame: pd.DataFrame, policy: LossPolicy, run_col: str, step_col: str, loss_col: str,
                 where: str = "runs") -> tuple[pd.DataFrame, dict[str, CurveCheck]]:
    """Every run of a long table (rows of a run in logged order) checked and reduced under
    ``policy``: the rows contributed (their loss column replaced by the policy's loss) and each
    run's :class:`CurveCheck`. Each finding and exclusion is a warning naming the run."""
    rows, losses, checks = [], [], {}
    for run, group in frame.groupby(run_col, sort=False):
        positions = group.index.to_numpy()
        check = check_curve(group[step_col].to_numpy(np.float64), group[loss_col].to_numpy(np.float64), policy)
        checks[str(run)] = check
        for finding in check.findings:
            warnings.warn(f"{where}: run {run}: {finding}", stacklevel=3)
        if check.excluded:
            warnings.warn(f"{where}: run {run} left out: {check.excluded}", stacklevel=3)
            continue
        chosen, loss = chosen_rows(group[loss_col].to_numpy(np.float64), check.kept, policy)
        rows.append(positions[chosen])
        losses.append(loss)
    if not rows:
        raise ValueError(f"{where}: no run passed the checks ({policy.describe()})")
    out = frame.loc[np.concatenate(rows)].copy()
    out[loss_col] = np.concatenate(losses)
    return out.reset_index(drop=True), checks
