"""Whether a ladder can predict a task at all, judged before any number is printed.

A task is **predictable from this ladder** when both hold:

1. **Signal above the evaluation's noise.** Over the checkpoints stage 2 counts
   (:mod:`jaxscale.accuracy.counted_checkpoints`), accuracy regressed on the intermediate loss
   (on log compute where the table has no loss; weighted by the standard errors) falls as the
   loss rises, with t = -slope / se(slope) >= :data:`MIN_T`, se(slope) inflated by
   sqrt(max(1, reduced chi^2)) so that scatter beyond the noise does not count as signal.
2. **Off the chance floor at the largest rung.** The largest model's final accuracy exceeds
   chance by at least :data:`MIN_EXCESS_SE` standard errors and :data:`MIN_EXCESS` (2 points:
   an excess smaller than that is chance rounded, which no extrapolation can scale), or the final
   checkpoints rise in log N with t >= :data:`MIN_T` (a task climbing through its floor: ARC-
   Challenge's adversarial distractors put small models *below* chance).

A task that fails is "not predictable from this ladder", with the reason, and no form prints an
accuracy for it. Reported beside: the rise over the ladder's final checkpoints and the spread of
the largest model's last checkpoints (the noise of one model's score between neighbouring
checkpoints). At Pythia's sizes (<= 1B) MMLU sits at chance and LogiQA and WSC do not move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxscale.accuracy.ladder import TaskLadder

MIN_T = 3.0
MIN_EXCESS_SE = 2.0
MIN_EXCESS = 0.02


@dataclass(frozen=True)
class Verdict:
    """The verdict on one task: ``predictable``, ``reason`` (why not; empty if it is) and the
    statistics it rests on."""

    task: str
    data: str
    predictable: bool
    reason: str
    signal_t: float
    trend_t: float
    excess: float
    excess_se: float
    rise: float
    spread: float

    def to_dict(self) -> dict:
        return {k: (v if not isinstance(v, float) else round(v, 6)) for k, v in self.__dict__.items()}


def _slope_t(x: np.ndarray, y: np.ndarray, se: np.ndarray | None) -> float:
    """t of the slope of y on x by weighted least squares, se inflated by sqrt(max(1, chi^2_red))."""
    known = se is not None
    se = se if known else np.ones_like(y)
    w = 1.0 / se**2
    design = np.stack([np.ones_like(x), x], 1)
    cov = np.linalg.inv(design.T @ (design * w[:, None]))
    beta = cov @ design.T @ (w * y)
    chi2_red = float(np.sum(w * (y - design @ beta) ** 2) / max(len(y) - 2, 1))
    inflate = max(1.0, chi2_red) if known else chi2_red
    return float(beta[1] / np.sqrt(cov[1, 1] * max(inflate, 1e-300)))


def judge(ladder: TaskLadder) -> Verdict:
    """The :class:`Verdict` of ``ladder``'s task (module docstring)."""
    if ladder.map_acc.size > 2:
        signal_t = -_slope_t(ladder.map_loss, ladder.map_acc, ladder.map_se)
        against = "the intermediate loss over the ladder's checkpoints"
    else:
        signal_t = _slope_t(np.log(ladder.compute), ladder.final_acc, ladder.final_se)
        against = "log compute over the ladder's final checkpoints"
    trend_t = _slope_t(np.log(ladder.final_n), ladder.final_acc, ladder.final_se)
    top, top_se = ladder.final_acc[-1], (ladder.final_se[-1] if ladder.final_se is not None else 0.0)
    excess = float(top - ladder.chance)
    off_floor = excess >= max(MIN_EXCESS_SE * top_se, MIN_EXCESS) or trend_t >= MIN_T
    reasons = []
    if signal_t < MIN_T:
        reasons.append(f"no signal above the evaluations' noise: accuracy does not move with {against} "
                       f"(t = {signal_t:.1f} < {MIN_T:g})")
    if not off_floor:
        reasons.append(f"at or below chance at the largest rung: {top:.1%} against chance {ladder.chance:.1%} "
                       f"({100 * excess:+.1f} points; not {MIN_EXCESS_SE:g} standard errors and {100 * MIN_EXCESS:g} "
                       f"points above it) and no rise over the ladder (t = {trend_t:.1f} < {MIN_T:g})")
    return Verdict(ladder.task, ladder.data, not reasons, "; ".join(reasons), signal_t, trend_t, excess,
                   float(excess / top_se) if top_se else float("nan"),
                   float(ladder.final_acc[-1] - ladder.final_acc[0]), ladder.spread)
