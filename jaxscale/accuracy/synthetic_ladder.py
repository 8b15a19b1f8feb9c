"""Ladders drawn from known laws of accuracy, with the binomial noise of real evaluations: what
the fits' recovery and their intervals' coverage are judged on.

A ladder has the sizes :data:`LADDER` (Pythia's 70M-1B) and the held-out :data:`HELD_OUT`
(1.4B, 2.8B), each trained on D = :data:`TOKENS` (300B) and evaluated at the fractions
:data:`FRACTIONS` of its run (15 checkpoints; the last is the finished run). The truths:

- **two-step**: the intermediate loss at t of D tokens is L(N, t) = A N^-alpha + G (t^-beta -
  D^-beta), so the finished runs lie exactly on stage 1's A N^-alpha and an unfinished checkpoint
  has more loss; it is measured with a relative standard error :data:`LOSS_SE` (Gaussian in log
  L); accuracy is chance + (1 - chance) sigma(log B - k L) (stage 2);
- **direct**: accuracy is chance + (1 - chance) exp(-A C^-alpha), C = 6 N t.

Each accuracy is measured on ``n_questions`` questions: the count right is Binomial(n, acc), the
value its fraction, and its standard error sqrt(p (1 - p) / n) as lm-evaluation-harness reports.
The result is a long table (:mod:`jaxscale.accuracy.evaluations`) with the task ``synthetic`` and
the intermediate ``loss:loss``, and the true accuracy of every finished run.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from jaxscale.laws.downstream_accuracy import accuracy

LADDER = (7.0e7, 1.6e8, 4.1e8, 1.0e9)
HELD_OUT = (1.4e9, 2.8e9)
TOKENS = 3.0e11
FRACTIONS = tuple(np.round(np.concatenate([[0.02], np.linspace(1 / 14, 1.0, 14)]), 6))
LOSS_SE = 0.01
TASK = "synthetic"
INTERMEDIATE = "loss:loss"
#: The truths: stage 1 (A, alpha), the checkpoints' excess (G, beta), stage 2 (k, B); direct (A, alpha).
TWO_STEP_TRUTH = {"A": 60.0, "alpha": 0.16, "G": 40.0, "beta": 0.16, "k": 2.0, "B": np.exp(4.5)}
DIRECT_TRUTH = {"A": 120.0, "alpha": 0.11}


class SyntheticLadder(NamedTuple):
    """A drawn ladder: ``frame`` (the long table of every model, held-out ones included), the
    true accuracy of each model's finished run (``truth``, by N) and the task's ``chance``."""

    frame: pd.DataFrame
    truth: dict[float, float]
    chance: float


def true_loss(n: np.ndarray, t: np.ndarray, p: dict = TWO_STEP_TRUTH) -> np.ndarray:
    """L(N, t) of the module docstring."""
    return p["A"] * n ** -p["alpha"] + p["G"] * (t ** -p["beta"] - TOKENS ** -p["beta"])


def true_accuracy(n: np.ndarray, t: np.ndarray, chance: float, form: str) -> np.ndarray:
    """The true accuracy of ``form`` (``two-step`` or ``direct``) at N and t tokens."""
    if form == "two-step":
        p = TWO_STEP_TRUTH
        loss = true_loss(n, t)
        return accuracy(1.0 / (1.0 + np.exp(p["k"] * loss - np.log(p["B"]))), chance)
    p = DIRECT_TRUTH
    return accuracy(np.exp(-p["A"] * (6.0 * n * t) ** -p["alpha"]), chance)


def draw_ladder(seed: int, form: str = "two-step", chance: float = 0.25, n_questions: int = 2000) -> SyntheticLadder:
    """A ladder of :data:`LADDER` and :data:`HELD_OUT` drawn from ``form``'s truth (module docstring)."""
    if form not in ("two-step", "direct"):
        raise ValueError(f"form must be two-step or direct, got {form!r}")
    rng = np.random.default_rng(seed)
    sizes = np.array(LADDER + HELD_OUT)
    n, f = (a.ravel() for a in np.meshgrid(sizes, np.array(FRACTIONS), indexing="ij"))
    t = f * TOKENS
    acc = true_accuracy(n, t, chance, form)
    measured = rng.binomial(n_questions, acc) / n_questions
    loss = true_loss(n, t) * np.exp(LOSS_SE * rng.standard_normal(n.size))
    step = np.round(f * 143_000).astype(int)
    common = {"model": [f"m{x:.3g}" for x in n], "data": "synthetic", "n_params": n, "tokens": t, "step": step}
    frame = pd.concat([
        pd.DataFrame({**common, "task": TASK, "metric": "acc", "value": measured,
                      "stderr": np.sqrt(measured * (1 - measured) / n_questions)}),
        pd.DataFrame({**common, "task": "loss", "metric": "loss", "value": loss, "stderr": LOSS_SE * loss}),
    ], ignore_index=True)
    truth = {float(x): float(true_accuracy(np.array(x), np.array(TOKENS), chance, form)) for x in sizes}
    return SyntheticLadder(frame, truth, chance)
