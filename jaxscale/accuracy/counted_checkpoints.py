"""Which checkpoints count, declared once, before any fit.

A run trained under a cosine (or any decaying) learning-rate schedule is finished only at its
last checkpoint: an intermediate checkpoint has not been annealed, so its loss and accuracy sit
above what a run of that many tokens would reach. Hence:

- **Stage 1** (a law of (N, D)) and every one-stage law of compute fit the **final checkpoint**
  of each model only (:func:`finished_runs`); an intermediate checkpoint is not a finished run of
  its token count.
- **Stage 2** (a map from the intermediate loss to accuracy, which holds whatever brought the
  model to that loss) uses **every checkpoint past the warmup** (:func:`map_checkpoints`), from
  :data:`MAP_FIRST_STEP` on: before it, Pythia's models sit at or near chance with LAMBADA
  perplexities of 1e3-1e6, where the map is flat (Pythia warms up over 1% of its 143,000 steps;
  its first checkpoint after that is step 3,000). A table without steps has only finished runs.
- An evaluation whose standard error is 0 (an accuracy of exactly 0 or 1: LAMBADA at the first
  checkpoints) takes the smallest non-zero standard error of its task (:func:`floored_stderr`):
  a likelihood with zero variance would pin the fit to that point.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: First checkpoint (in optimiser steps) that stage 2 uses: Pythia's first after its warmup.
MAP_FIRST_STEP = 3000


def finished_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The final checkpoint of each model (its largest ``step``): the finished runs."""
    last = frame.groupby("model")["step"].transform("max")
    return frame[frame["step"] == last]


def map_checkpoints(frame: pd.DataFrame, first_step: int = MAP_FIRST_STEP) -> pd.DataFrame:
    """Every checkpoint from ``first_step`` on, and each model's final one whatever its step."""
    last = frame.groupby("model")["step"].transform("max")
    return frame[(frame["step"] >= first_step) | (frame["step"] == last)]


def floored_stderr(stderr: np.ndarray) -> np.ndarray:
    """Standard errors with each 0 replaced by the smallest non-zero one of the same set (all
    left as they are if none is non-zero)."""
    stderr = np.asarray(stderr, np.float64)
    positive = stderr[stderr > 0]
    return stderr if positive.size == 0 else np.where(stderr > 0, stderr, positive.min())
