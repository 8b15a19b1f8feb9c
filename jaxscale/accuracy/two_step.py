"""The two-step prediction of a task's accuracy, with an interval carried through both stages.

Bhagia et al. (2024), Section 3: stage 1 predicts an intermediate loss of the target model from
the ladder's finished runs, stage 2 maps that loss to the task's accuracy::

    stage 1:  L(N) = A N^-alpha                        (:mod:`jaxscale.laws.intermediate_loss`,
                                                        final checkpoints; the ladder's one D)
    stage 2:  acc(L) = chance + (1 - chance) sigma(-k (L - L0))     (:mod:`jaxscale.laws.downstream_accuracy`,
                                                        every counted checkpoint)
    prediction: acc(L(N_target)).

Each stage is a weighted least-squares fit with its own parametric bootstrap
(:mod:`jaxscale.accuracy.weighted_fit`); draw i of the prediction puts stage 1's refit i through
stage 2's refit i, so the interval holds both stages' uncertainty. A measured accuracy of the
target is itself a binomial draw: :func:`predictive_draws` adds that noise (the task's
standard error at the predicted accuracy) for an interval that a measurement should fall in.

The ladder's finished runs all see one D (Pythia's 300B tokens), so stage 1 is a law of N at
that D; a target at another D is undefined for this ladder and refused.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxscale.accuracy import weighted_fit
from jaxscale.accuracy.ladder import TaskLadder, evaluation_stderr
from jaxscale.laws import downstream_accuracy, intermediate_loss


class TwoStepFit(NamedTuple):
    """Both stages of one task: ``stage1`` (loss of N), ``stage2`` (accuracy of loss), the
    ladder's one ``tokens`` and its ``n_questions``."""

    stage1: weighted_fit.WeightedFit
    stage2: weighted_fit.WeightedFit
    tokens: float
    n_questions: float

    def predict(self, n: np.ndarray) -> np.ndarray:
        """The accuracy at model sizes ``n`` (the ladder's D)."""
        return self.stage2.predict(self.stage1.predict(np.asarray(n, np.float64)))

    def draws(self, n: np.ndarray) -> np.ndarray:
        """[S, len(n)] accuracies, draw i through both stages' refit i (NaN where either did
        not converge; S = 0 without a bootstrap)."""
        n = np.atleast_1d(np.asarray(n, np.float64))
        loss = self.stage1.predict(n, draws=True)
        size = min(len(loss), len(self.stage2.valid))
        stage2 = type(self.stage2.draws)(*(np.asarray(v)[:size, None] for v in self.stage2.draws))
        ok = self.stage2.valid[:size, None] & np.isfinite(loss[:size])
        acc = weighted_fit.predict(self.stage2.law, stage2, self.stage2.chance, np.where(ok, loss[:size], 1.0))
        return np.where(ok, acc, np.nan)


def fit_two_step(ladder: TaskLadder, *, resamples: int = weighted_fit.RESAMPLES, seed: int = 0) -> TwoStepFit:
    """Both stages on ``ladder`` (module docstring).

    Raises:
        ValueError: if the ladder has no intermediate loss at its final checkpoints or its
            checkpoints, or its finished runs differ in D.
    """
    if ladder.map_acc.size <= 2 or not np.all(np.isfinite(ladder.final_loss)):
        raise ValueError(f"the two-step form needs the intermediate loss {ladder.intermediate!r} at every final "
                         f"checkpoint and at the checkpoints past the warmup; the table has it at "
                         f"{ladder.map_acc.size} checkpoints (name another with --intermediate TASK:METRIC, or use "
                         f"--form log-compute)")
    if np.ptp(np.log(ladder.final_d)) > 1e-9:
        raise ValueError("the ladder's finished runs differ in D; stage 1 here is a law of N at one D")
    log_loss_se = None if ladder.final_loss_se is None else ladder.final_loss_se / ladder.final_loss
    stage1 = weighted_fit.fit(intermediate_loss.LAW, (ladder.final_n,), np.log(ladder.final_loss),
                              log_loss_se, resamples=resamples, seed=seed)
    stage2 = weighted_fit.fit(downstream_accuracy.ACCURACY_OF_LOSS, (ladder.map_loss,), ladder.map_acc,
                              ladder.map_se, chance=ladder.chance, resamples=resamples, seed=seed + 1)
    return TwoStepFit(stage1, stage2, float(ladder.final_d[0]), ladder.n_questions)


def predictive_draws(draws: np.ndarray, n_questions: float, seed: int = 0) -> np.ndarray:
    """``draws`` of an accuracy plus the binomial noise of measuring it on ``n_questions``
    (:func:`jaxscale.accuracy.ladder.evaluation_stderr`): draws of what an evaluation will read."""
    rng = np.random.default_rng(seed)
    return draws + evaluation_stderr(np.nan_to_num(draws), n_questions) * rng.standard_normal(draws.shape)
