"""One recipe against another on a benchmark: the compute multiplier at equal accuracy.

As :mod:`jaxscale.planning.multiplier` does for the loss, recipe B trained with C FLOP scores
acc_B(C); the baseline A scores the same at C_A, acc_A(C_A) = acc_B(C), and

    k = C_A / C

is B's multiplier on the task (k > 1: B is worth k times its compute in A's recipe). Each form of
accuracy is monotone in compute, so C_A is its inverse at acc_B(C), in closed form per draw:

- two-step at the ladder's one D (C = 6 N D, so k = N_A / N): a = (acc - chance) / (1 - chance),
  L_A = (log B_A - logit a) / k_A from stage 2, N_A = (A_A / L_A)^(1 / alpha_A) from stage 1;
- sigmoid in log compute: log C_A = log C0_A + logit(a) / k_A;
- direct: C_A = (A_A / -log a)^(1 / alpha_A).

Where B's accuracy lies outside the range A's law reaches (at or below chance, or at or above its
ceiling) the multiplier is undefined (NaN), never a number. Over paired draws of both recipes'
fits (bootstrap refit i of each) the draws of k give its interval.
"""

from __future__ import annotations

import numpy as np

from jaxscale.laws import downstream_accuracy as laws
from jaxscale.laws.downstream_accuracy import above_chance


def _logit(a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(a) - np.log1p(-a)


def _inside(a: np.ndarray) -> np.ndarray:
    return (a > 0) & (a < 1)


def two_step_size(stage1: tuple, stage2: tuple, acc: np.ndarray, chance: float) -> np.ndarray:
    """N at which a two-step fit (``stage1`` = (A, alpha), ``stage2`` = (k, B) arrays) scores ``acc``."""
    a = above_chance(np.asarray(acc, np.float64), chance)
    (A, alpha), (k, B) = stage1, stage2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        loss = (np.log(B) - _logit(a)) / k
        n = np.exp((np.log(A) - np.log(loss)) / alpha)
    return np.where(_inside(a) & (loss > 0), n, np.nan)


def compute_at(law_name: str, params: tuple, acc: np.ndarray, chance: float) -> np.ndarray:
    """C at which a one-stage law of compute (``accuracy-of-log-compute`` or ``direct-accuracy``)
    with ``params`` scores ``acc``."""
    a = above_chance(np.asarray(acc, np.float64), chance)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if law_name == laws.LOG_COMPUTE_SIGMOID.name:
            k, C0 = params
            c = np.exp(np.log(C0) + _logit(a) / k)
        elif law_name == laws.DIRECT.name:
            A, alpha = params
            c = np.exp((np.log(A) - np.log(-np.log(a))) / alpha)
        else:
            raise ValueError(f"no inverse in compute for the {law_name} law")
    return np.where(_inside(a), c, np.nan)
