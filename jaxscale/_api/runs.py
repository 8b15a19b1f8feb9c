"""``load_runs``: the one door runs come in through, with the transformations every verb shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Union

import pandas as pd

from jaxscale.tables import table as runs_table
from jaxscale.tables.table import RunsTable

#: What the verbs take as runs: a validated table, a CSV's path, a DataFrame, or a function
#: returning a table (called once the verb has checked its options, so that a bad option is
#: reported before any file is read).
Runs = Union[RunsTable, str, Path, pd.DataFrame, Callable[[], RunsTable]]


def load_runs(source: Runs, *, n: str | None = None, d: str | None = None, c: str | None = None,
              loss: str | None = None, where: Mapping[str, str] | None = None,
              run_by: str | Sequence[str] | None = None, kind: str | None = None, metric: str | None = None,
              config: str | Path | None = None, loss_policy: str | None = None, final_only: bool = False,
              tuned_only: bool = False, drop_highest: int = 0, basis: str = "total",
              sizes_vary: bool = True) -> RunsTable:
    """Read and validate runs, then prepare them: the rows ``where`` selects, runs named by
    ``run_by``, each run's last checkpoint (``final_only``), the tuned run at each (N, D)
    (``tuned_only``), without the ``drop_highest`` highest-loss rows, on the parameter ``basis``.

    Columns are recognised by their common names (``N``, ``params``, ``tokens``, ``loss``, ...);
    name them where they are not. Bad input raises ``ValueError`` naming the row and column.

    Args:
        source: a CSV path, a pandas DataFrame, an experiment tracker's runs (a TensorBoard log
            directory, an MLflow store or URI, W&B exports: :mod:`jaxscale.trackers.sources`), or a
            :class:`~jaxscale.tables.table.RunsTable` (then only the transformations apply).
        n, d, c, loss: the columns of model size N, training tokens D, compute C and the loss
            (default: recognised by name; D or C may be missing, C = 6 N D fills it).
        where: keep the rows whose column equals the text, e.g. ``{"source": "epochai_chinchilla"}``.
        run_by: the columns that together name a run (a list, or a comma-separated string);
            default: a ``run_id`` column if there is one.
        kind: the source's kind, ``"table"``, ``"tensorboard"``, ``"mlflow"`` or ``"wandb"``
            (default: detected).
        metric: a tracker's logged metric read as the loss (default: the first of val_loss,
            eval/loss, ..., loss, train_loss).
        config: a W&B runs-table export with the runs' configurations.
        loss_policy: the loss each run contributes, ``"every"`` checkpoint, ``"final"``,
            ``"min"`` or ``"ema:SPAN"`` (:mod:`jaxscale.tables.policy`; default: every checkpoint).
        final_only: keep only the last checkpoint of each run (finished, annealed runs).
        tuned_only: at each (N, D), keep only the lowest-loss row (of a learning-rate sweep, the
            tuned run).
        drop_highest: drop this many highest-loss rows (Besiroglu et al. 2024 drop 5 of Epoch's).
        basis: ``"total"`` (Chinchilla's N_T, C_T) or ``"nonembedding"`` (Kaplan's N_E,
            C_E = 6 N_E D; needs a non-embedding size column).
        sizes_vary: refuse a table whose N, or whose D, is the same in every row (no law of N and
            D can be fitted to it); False for laws of one run's curve, fitted per model size.

    Returns:
        The validated table.
    """
    if drop_highest < 0:
        raise ValueError(f"drop_highest must be >= 0, got {drop_highest}")
    reading = {"n": n, "d": d, "c": c, "loss": loss, "where": where, "run_by": run_by, "kind": kind,
               "metric": metric, "config": config, "loss_policy": loss_policy}
    if isinstance(source, RunsTable):
        given = [name for name, value in reading.items() if value is not None]
        if given:
            raise ValueError(f"{', '.join(given)} apply when reading runs; this table is read already")
        table = source
    else:
        if isinstance(run_by, str):
            run_by = [name.strip() for name in run_by.split(",") if name.strip()]
        table = runs_table.read_runs_table(source, n_col=n, d_col=d, c_col=c, loss_col=loss, run_by=run_by,
                                           where=where or {}, source_kind=kind, metric=metric, config=config,
                                           loss_policy=loss_policy, sizes_vary=sizes_vary)
    if final_only:
        table = runs_table.final_checkpoints(table)
    if tuned_only:
        table = runs_table.best_per_size_and_tokens(table)
    return runs_table.drop_highest_loss(table, drop_highest).in_basis(basis)


def as_runs(runs: Runs, grouped_by: str | None = None) -> RunsTable:
    """``runs`` as a validated table (a path or DataFrame is read with :func:`load_runs`' defaults;
    a function is called). A verb that models the studies of column ``grouped_by`` apart reads
    them without the warning that advises fitting them one at a time by that column."""
    import re
    import warnings

    with warnings.catch_warnings():
        if grouped_by is not None:
            warnings.filterwarnings("ignore", message=rf".*fit one at a time with --where {re.escape(grouped_by)}=NAME")
        if callable(runs):
            runs = runs()
        return runs if isinstance(runs, RunsTable) else load_runs(runs)
