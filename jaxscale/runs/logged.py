"""What an experiment tracker holds for a set of runs, in one shape for every reader.

Each reader (:mod:`.tensorboard`, :mod:`.mlflow`, :mod:`.wandb`) returns a :class:`Logged`: the
scalars every run logged, long (one row per run, tag and step, in the order they were logged),
and each run's configuration (hyperparameters) as a mapping. :mod:`.sources` turns it into a runs
table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

#: Columns of :attr:`Logged.scalars`.
RUN, TAG, STEP, VALUE = "run_id", "tag", "step", "value"


@dataclass(frozen=True)
class Logged:
    """Scalars and configurations of the runs in one tracker store.

    Args:
        kind: the reader (``"tensorboard"``, ``"mlflow"``, ``"wandb"``).
        origin: where they were read (a directory, a URI, a file), for messages.
        scalars: columns run_id, tag, step, value; a run's rows in logged order.
        configs: run id -> its hyperparameters (numbers as numbers, other values as text).
        places: run id -> where that run lives (its directory, its MLflow run id, its file).
    """

    kind: str
    origin: str
    scalars: pd.DataFrame
    configs: Mapping[str, Mapping[str, Any]]
    places: Mapping[str, str] = field(default_factory=dict)

    @property
    def run_ids(self) -> list[str]:
        """Every run, in the order first seen (scalars first, then runs that logged only a config)."""
        seen = dict.fromkeys(self.scalars[RUN].unique().tolist())
        seen.update(dict.fromkeys(self.configs))
        return [str(r) for r in seen]


def scalars_frame(runs: list[str], tags: list[str], steps: list[float], values: list[float]) -> pd.DataFrame:
    """The long scalars table from four parallel lists (categoricals keep a million rows small)."""
    return pd.DataFrame({
        RUN: pd.Categorical(runs), TAG: pd.Categorical(tags),
        STEP: np.asarray(steps, np.float64), VALUE: np.asarray(values, np.float64),
    })


def config_value(value: Any) -> Any:
    """A hyperparameter as logged, numbers parsed: trackers that store text (MLflow params,
    CSV cells) give back ``"0.001"``; bools and other text stay as they are."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return value.item() if isinstance(value, np.generic) else value
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
