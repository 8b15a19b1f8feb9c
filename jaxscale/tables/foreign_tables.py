"""Other tools' runs tables, recognised by their columns, read as they are.

Each :class:`Layout` names a table format other tools publish or write, the columns that mark
it, and what a reader must know that its columns do not say: which columns together name a run,
and what to watch for. :func:`jaxscale.tables.table.read_runs_table` takes the layout's run identity
when the caller names none, and warns where a table mixes studies. Every one of these loads with
the column spellings of :data:`jaxscale.tables.schema.ALIASES`; no table is rewritten.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jaxscale.tables.schema import fold


@dataclass(frozen=True)
class Layout:
    """A known table format.

    Args:
        name: the tool or study.
        columns: folded column names that all appear in such a table (and, with ``exact``, only they).
        run_by: the columns that together name a run (None: one row per run, or no runs named).
        mixes: a column whose values are different studies that a fit should not pool.
        note: what the table is, for messages and docs.
    """

    name: str
    columns: frozenset[str]
    run_by: tuple[str, ...] | None = None
    mixes: str | None = None
    exact: bool = False
    note: str = ""


LAYOUTS = (
    Layout("misfitting", frozenset({"model", "peak_lr", "total_steps", "sweep", "current_steps", "n_no_emb"}),
           run_by=("model", "peak_lr", "total_steps", "sweep"),
           note="Li, Kudugunta & Zettlemoyer (2025), (Mis)Fitting: checkpoints of 11 models; N total, N_no_emb, "
                "D tokens so far"),
    Layout("steplaw", frozenset({"h", "ffnh", "numh", "numl", "lr", "bs", "ti", "loss", "exp_name", "d", "n"}),
           run_by=("exp_name",),
           note="Li et al. (2025), Step Law: one row per run (final loss) of a grid of learning rates and batch "
                "sizes (bs in sequences of 2,048 tokens); laws of N and D want the tuned run (--tuned-only)"),
    Layout("open-athena-isoflops", frozenset({"source", "dataset", "model", "tokens", "params", "budget", "loss"}),
           mixes="source",
           note="Open Athena's isoFLOP records: the isoFLOP points of several studies (the source column)"),
    Layout("kyo-takano-chinchilla", frozenset({"c", "n", "d", "loss"}), exact=True,
           note="kyo-takano/chinchilla: compute C, parameters N, tokens D, final loss"),
    Layout("ml-scalefit", frozenset({"model_size", "n_tokens", "loss"}), exact=True,
           note="ml-scalefit: model_size, n_tokens, loss"),
    Layout("epoch-chinchilla", frozenset({"model_size", "training_flop", "loss"}),
           note="Besiroglu et al. (2024): Chinchilla's Figure 4 runs as Epoch AI extracted them (final losses)"),
)


def layout_of(columns: Iterable[str]) -> Layout | None:
    """The first layout of :data:`LAYOUTS` whose columns a table with ``columns`` has."""
    folded = {fold(c) for c in columns}
    return next((layout for layout in LAYOUTS
                 if layout.columns <= folded and (not layout.exact or folded == layout.columns)), None)
