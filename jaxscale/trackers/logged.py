"""What an experiment tracker holds for a set of runs, in one shape for every reader, and what a
reader is.

Each reader (:mod:`.tensorboard`, :mod:`.mlflow`, :mod:`.wandb`) is a :class:`Reader`, defined in
its module and registered in :data:`jaxscale.trackers.sources.READERS`; it returns a :class:`Logged`:
the scalars every run logged, long (one row per run, tag and step, in the order they were
logged), each run's configuration (hyperparameters) as a mapping, and one line for each thing it
could not read. :mod:`.sources` turns it into a runs table.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Columns of :attr:`Logged.scalars`.
RUN, TAG, STEP, VALUE = "run_id", "tag", "step", "value"


@dataclass(frozen=True)
class Logged:
    """Scalars and configurations of the runs in one tracker store.

    Args:
        kind: the reader's kind (:attr:`Reader.kind`).
        origin: where they were read (a directory, a URI, a file), for messages.
        scalars: columns run_id, tag, step, value; a run's rows in logged order.
        configs: run id -> its hyperparameters (numbers as numbers, other values as text).
        places: run id -> where that run lives (its directory, its MLflow run id, its file).
        dropped: one line for each thing the reader found but could not read (a file skipped,
            a record cut short), naming it.
    """

    kind: str
    origin: str
    scalars: pd.DataFrame
    configs: Mapping[str, Mapping[str, Any]]
    places: Mapping[str, str] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()

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


def _claims_nothing(_: Path) -> bool:
    return False


@dataclass(frozen=True)
class Reader:
    """One kind of tracker store: how its sources are recognised and how they are read. Each
    reader's module defines one; :data:`jaxscale.trackers.sources.READERS` registers them, and
    detection, reading, the ``--source`` choices and the messages that list the kinds all come
    from that list.

    Args:
        kind: the kind's name (``load_runs(source_kind=KIND)``, ``--source KIND``, :attr:`Logged.kind`).
        read: ``read(source, **options) -> Logged``; raises ``ValueError`` (one line) for a
            source it cannot read.
        what: what a source of this kind is, for messages (``"TensorBoard event files"``).
        claims_file: True for a file of this kind; may raise ``ValueError`` for a file of this
            kind given where something else belongs (an event file for its log directory).
        claims_directory: True for a directory that holds runs of this kind.
        schemes: the URI schemes of its stores (``sqlite``, ``http``, ...).
        options: the keyword options ``read`` takes beyond the source (W&B's ``config``).
        modules: the packages ``read`` imports, checked before reading.
        extra: the extra of jaxscale that installs them.
    """

    kind: str
    read: Callable[..., Logged]
    what: str
    claims_file: Callable[[Path], bool] = _claims_nothing
    claims_directory: Callable[[Path], bool] = _claims_nothing
    schemes: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    extra: str = "trackers"

    def missing_module(self) -> str | None:
        """The first of :attr:`modules` not installed, or None."""
        return next((name for name in self.modules if importlib.util.find_spec(name) is None), None)
