"""One task on one ladder: the arrays every downstream fit and verdict reads, assembled once.

From the long table of :mod:`jaxscale.accuracy.evaluations`, for one task, metric and recipe
(``data``): the final checkpoint of each model (stage 1 and the one-stage laws, the finished runs
of :mod:`jaxscale.accuracy.counted_checkpoints`) and every checkpoint past the warmup joined with
the intermediate loss at the same checkpoint (stage 2). A perplexity is read as its log, the
loss it is (log-perplexity = mean negative log-likelihood), with standard error stderr / ppl.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from jaxscale.accuracy.counted_checkpoints import MAP_FIRST_STEP, finished_runs, floored_stderr, map_checkpoints
from jaxscale.accuracy.tasks import chance_level, check_accuracy_metric

#: The intermediate loss of the two-step form unless another is named: LAMBADA's perplexity.
INTERMEDIATE = "lambada_openai:ppl"
_PERPLEXITIES = ("ppl", "perplexity", "word_perplexity", "byte_perplexity")
#: The last checkpoints of the largest model whose spread :mod:`jaxscale.accuracy.verdict` reports.
SPREAD_CHECKPOINTS = 5


@dataclass(frozen=True)
class TaskLadder:
    """One task's evaluations on one ladder (module docstring). ``final_*``: one entry per model,
    by size; ``map_*``: every counted checkpoint with its intermediate loss (empty where the table
    has none); ``n_questions`` the task's size implied by its standard errors (p (1 - p) / s^2,
    median; NaN where unknown); ``spread`` the standard deviation of the largest model's last
    :data:`SPREAD_CHECKPOINTS` checkpoints (NaN with fewer than two); ``intermediate`` the
    intermediate loss's ``TASK:METRIC``."""

    task: str
    metric: str
    data: str
    chance: float
    models: tuple[str, ...]
    final_n: np.ndarray
    final_d: np.ndarray
    final_acc: np.ndarray
    final_se: np.ndarray | None
    final_loss: np.ndarray
    final_loss_se: np.ndarray | None
    map_loss: np.ndarray
    map_acc: np.ndarray
    map_se: np.ndarray | None
    n_questions: float
    spread: float
    intermediate: str = INTERMEDIATE

    @property
    def compute(self) -> np.ndarray:
        """C = 6 N D of each final checkpoint."""
        return 6.0 * self.final_n * self.final_d


def _known(stderr: np.ndarray) -> np.ndarray | None:
    stderr = np.asarray(stderr, np.float64)
    return floored_stderr(stderr) if np.all(np.isfinite(stderr)) and np.any(stderr > 0) else None


def _intermediate(frame: pd.DataFrame, intermediate: str) -> pd.DataFrame:
    task, _, metric = intermediate.partition(":")
    rows = frame[(frame["task"] == task) & (frame["metric"] == (metric or "loss"))]
    rows = rows[["model", "step", "value", "stderr"]].copy()
    if (metric or "loss") in _PERPLEXITIES:
        rows["stderr"] = rows["stderr"] / rows["value"]
        rows["value"] = np.log(rows["value"])
    return rows.rename(columns={"value": "loss", "stderr": "loss_se"})


def task_ladder(frame: pd.DataFrame, task: str, *, metric: str = "acc", data: str | None = None,
                chance: float | None = None, intermediate: str = INTERMEDIATE,
                models: list[str] | None = None, first_step: int = MAP_FIRST_STEP) -> TaskLadder:
    """The :class:`TaskLadder` of ``task`` in ``frame`` (the long table), restricted to recipe
    ``data`` (the only one if None) and to ``models`` (all if None).

    Raises:
        ValueError: for a metric that is a loss, an unknown chance level, a task, metric or recipe
            the table does not hold, or a ladder of fewer than three models.
    """
    check_accuracy_metric(metric)
    floor = chance_level(task, chance)
    recipes = sorted(frame["data"].unique())
    if data is None:
        if len(recipes) > 1:
            raise ValueError(f"the table holds the recipes {recipes}; choose one with data=")
        data = recipes[0]
    elif data not in recipes:
        raise ValueError(f"no recipe (column data) {data!r}; the table holds {recipes}")
    frame = frame[frame["data"] == data]
    if models is not None:
        frame = frame[frame["model"].isin(models)]
    rows = frame[(frame["task"] == task) & (frame["metric"] == metric)]
    if rows.empty:
        held = sorted(set(zip(frame["task"], frame["metric"])))
        raise ValueError(f"no evaluations of task {task!r} with metric {metric!r}; the table holds {held}")
    finals = finished_runs(rows).sort_values("n_params")
    if len(finals) < 3:
        raise ValueError(f"task {task!r} has {len(finals)} models on the ladder; a law needs three at least")
    loss = _intermediate(frame, intermediate)
    final_loss = finals[["model", "step"]].merge(loss, on=["model", "step"], how="left")
    mapped = map_checkpoints(rows, first_step).merge(loss, on=["model", "step"], how="inner")
    mapped = mapped[np.isfinite(mapped["loss"])]
    p, s = rows["value"].to_numpy(np.float64), rows["stderr"].to_numpy(np.float64)
    inside = (p > 0) & (p < 1) & (s > 0)
    largest = rows[rows["model"] == finals["model"].iloc[-1]].sort_values("step")["value"].to_numpy()[-SPREAD_CHECKPOINTS:]
    return TaskLadder(
        task=task, metric=metric, data=str(data), chance=floor, models=tuple(finals["model"]),
        final_n=finals["n_params"].to_numpy(np.float64), final_d=finals["tokens"].to_numpy(np.float64),
        final_acc=finals["value"].to_numpy(np.float64), final_se=_known(finals["stderr"]),
        final_loss=final_loss["loss"].to_numpy(np.float64), final_loss_se=_known(final_loss["loss_se"]),
        map_loss=mapped["loss"].to_numpy(np.float64), map_acc=mapped["value"].to_numpy(np.float64),
        map_se=_known(mapped["stderr"]),
        n_questions=float(np.median(p[inside] * (1 - p[inside]) / s[inside] ** 2)) if inside.any() else np.nan,
        spread=float(np.std(largest, ddof=1)) if largest.size > 1 else np.nan, intermediate=intermediate)


def evaluation_stderr(acc: np.ndarray, n_questions: float) -> np.ndarray:
    """The binomial standard error sqrt(p (1 - p) / n) of an accuracy p on ``n_questions``
    (0 where n is unknown)."""
    acc = np.clip(np.asarray(acc, np.float64), 0.0, 1.0)
    return np.sqrt(acc * (1 - acc) / n_questions) if np.isfinite(n_questions) else np.zeros_like(acc)
