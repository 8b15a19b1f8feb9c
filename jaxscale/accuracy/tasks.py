"""Each task's chance level, and which metrics are losses rather than accuracies.

A multiple-choice task answered at random scores 1 / (number of choices); a cloze task whose
answer is a free word (LAMBADA) scores 0. The floor of every law of accuracy is the task's
chance level (:mod:`jaxscale.laws.downstream_accuracy`), never fitted. A task not listed here
has no known chance level: it is given by the caller (``--chance``), never guessed.
"""

from __future__ import annotations

#: Chance accuracy of the tasks of lm-evaluation-harness that ``pythia_evals.csv`` holds (and
#: common others), from their number of choices.
CHANCE = {
    "arc_easy": 0.25, "arc_challenge": 0.25, "sciq": 0.25, "logiqa": 0.25, "mmlu": 0.25, "hellaswag": 0.25,
    "openbookqa": 0.25, "piqa": 0.5, "winogrande": 0.5, "wsc": 0.5, "boolq": 0.5, "lambada_openai": 0.0,
    "lambada_standard": 0.0,
}
#: Metrics that are losses (lower is better), refused where an accuracy is expected.
LOSS_METRICS = ("ppl", "perplexity", "word_perplexity", "byte_perplexity", "bits_per_byte", "loss", "nll")


def chance_level(task: str, given: float | None = None) -> float:
    """The chance accuracy of ``task``: ``given`` if not None (checked in [0, 1)), else the listed
    level (:data:`CHANCE`).

    Raises:
        ValueError: if the task's chance level is unknown and none is given, or it is outside [0, 1).
    """
    if given is not None:
        if not 0.0 <= given < 1.0:
            raise ValueError(f"--chance must be in [0, 1), got {given}")
        return float(given)
    if task not in CHANCE:
        raise ValueError(f"task {task!r} has no known chance level; give it with --chance (chance=...), "
                         f"e.g. 0.25 for four choices")
    return CHANCE[task]


def check_accuracy_metric(metric: str) -> None:
    """Refuse a metric that is a loss where an accuracy is expected."""
    if metric.lower() in LOSS_METRICS:
        raise ValueError(f"--metric {metric!r} is a loss, not an accuracy; choose an accuracy metric (acc, acc_norm)")
