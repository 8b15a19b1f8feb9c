"""The runs table: the one door through which training results enter the fits.

A runs table has one row per evaluation point of a training run: model size N (total
parameters; optionally non-embedding N_\\E), training tokens D and/or training compute C, and
the loss. Whichever of D and C is missing is filled from Hoffmann et al. (2022)'s
approximation (Pearce & Song 2024, Eq. 3), and with N_\\E given, the non-embedding compute
(Eq. 4) too unless the table has it::

    C = 6 N D,   C_\\E = 6 N_\\E D

Columns are found by name, case-insensitively, under common spellings (Epoch AI's
``Model Size``, ``Training FLOP``, ``loss``; the canonical names of
:mod:`jaxscale.tables.schema`; ``N``, ``D``, ``C``, ``params``, ``flops``, ...) or given
explicitly. Every defect of a table raises ``ValueError`` with one line naming the row and the
column, so the CLI can report it and exit with status 2.
"""

from __future__ import annotations

import csv
import io
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from jaxscale.support.plausibility import PlausibilityWarning
from jaxscale.tables import schema as S
from jaxscale.tables.policy import LossPolicy, apply_policy, as_policy
from jaxscale.tables.schema import ALIASES, fold
from jaxscale.tables.foreign_tables import layout_of
from jaxscale.support.memory import check_memory

if TYPE_CHECKING:
    from jaxscale.trackers.sources import SourceReport

#: Law inputs beyond the model size and the tokens, and the column of a runs table that holds each:
#: the unique tokens (a validated field of the table) and a run's hyperparameters (read from its frame).
FURTHER_INPUTS = {"U_D": S.UNIQUE_TOKENS, "eta": S.PEAK_LR, "batch": S.BATCH_TOKENS}
#: Law inputs computed from each run's schedule (``jaxscale curve`` adds them), read as columns.
SCHEDULE_INPUTS = (S.FORWARD_AREA, S.ANNEALING_AREA, S.FORWARD_TOKENS, S.ANNEALING_STEPS)

#: A loss above this many nats per token is more likely a perplexity or a sum over tokens
#: (the loss of a uniform guess over a 1M-token vocabulary is 13.8 nats).
MAX_PLAUSIBLE_LOSS = 20.0

_ROLE_NAMES = {
    S.N_TOTAL: "model size N",
    S.N_NONEMBEDDING: "non-embedding model size",
    S.TOKENS: "training tokens D",
    S.COMPUTE_TOTAL: "training compute C",
    S.COMPUTE_NONEMBEDDING: "non-embedding compute",
    S.LOSS: "loss",
    S.UNIQUE_TOKENS: "unique tokens U_D",
}


@dataclass(frozen=True)
class RunsTable:
    """A validated runs table: float64 arrays, one entry per row.

    ``frame`` is the source table with the recognised columns renamed to the canonical names
    of :mod:`jaxscale.tables.schema` (other columns kept as they were), D and C (and ``C_\\E`` where
    ``N_\\E`` is known) filled in. ``report`` says what a tracker source held and what was kept
    (:class:`jaxscale.trackers.sources.SourceReport`; None for a table). ``source`` names where the
    rows came from (the file's path, or ``"table"`` for a DataFrame); ``dropped_highest`` counts
    the highest-loss rows dropped from it (:func:`drop_highest_loss`); ``columns`` which column of
    the source gave N, D, C and the loss (a formula where one was computed, e.g. ``"6 N D"``).
    """

    n: np.ndarray
    d: np.ndarray
    c: np.ndarray
    loss: np.ndarray
    frame: pd.DataFrame
    n_nonembedding: np.ndarray | None = None
    c_nonembedding: np.ndarray | None = None
    run_id: np.ndarray | None = None
    step: np.ndarray | None = None
    unique_tokens: np.ndarray | None = None
    report: SourceReport | None = None
    source: str = "table"
    dropped_highest: int = 0
    columns: Mapping[str, str] | None = None

    def __len__(self) -> int:
        return len(self.loss)

    def law_inputs(self, inputs: tuple[str, ...]) -> tuple[np.ndarray, ...]:
        """The columns a law of ``inputs`` reads, one per input: the model size (the
        non-embedding one when the law's first input is ``N_nonembedding``), the tokens column
        (which holds the law's second input, e.g. steps or words, for laws of other inputs) and
        each further input's column (:data:`FURTHER_INPUTS`: the unique tokens U_D); for a law of
        quantities of the schedule (:data:`SCHEDULE_INPUTS`, e.g. the areas S1, S2), the columns
        it names, which :mod:`jaxscale.curves.lr_annealing_fit` adds."""
        if set(inputs) & set(SCHEDULE_INPUTS):
            return self._columns(inputs)
        return (*self._size_and_tokens(inputs[:2]), *(self._further_input(name) for name in inputs[2:]))

    def _columns(self, inputs: tuple[str, ...]) -> tuple[np.ndarray, ...]:
        missing = [c for c in inputs if c not in self.frame.columns]
        if missing:
            raise ValueError(f"this law reads the schedule areas {', '.join(missing)} of every checkpoint, which the "
                             "table lacks: fit it with `jaxscale curve`, which computes them from the runs' schedules")
        return tuple(self.frame[c].to_numpy(dtype=np.float64) for c in inputs)

    def _further_input(self, name: str) -> np.ndarray:
        column = FURTHER_INPUTS.get(name)
        if column is None:
            raise ValueError(f"this law also needs {name}, which a runs table does not hold")
        values = getattr(self, column, None)
        if values is None and column in self.frame.columns and column not in ALIASES:
            values = _numeric(self.frame, column, "table", positive=True)
        if values is None:
            spellings = f" (or {', '.join(ALIASES[column][1:3])})" if column in ALIASES else ""
            raise ValueError(f"this law needs {name} for every run: a column {column!r}{spellings} in the runs table")
        return values

    def _size_and_tokens(self, inputs: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        if inputs[0] != "N_nonembedding":
            return self.n, self.d
        if self.n_nonembedding is None:
            raise ValueError("this law needs non-embedding model sizes; the table has no n_nonembedding column")
        return self.n_nonembedding, self.d

    def select(self, mask: np.ndarray) -> "RunsTable":
        """The rows where ``mask`` (boolean, or integer indices) selects them."""
        idx = np.arange(len(self))[np.asarray(mask)]
        return replace(
            self,
            n=self.n[idx], d=self.d[idx], c=self.c[idx], loss=self.loss[idx],
            frame=self.frame.iloc[idx].reset_index(drop=True),
            **{k: None if getattr(self, k) is None else getattr(self, k)[idx]
               for k in ("n_nonembedding", "c_nonembedding", "run_id", "step", "unique_tokens")},
        )

    def in_basis(self, basis: str) -> "RunsTable":
        """The table with ``n`` and ``c`` on a parameter basis (see :meth:`on_basis`), so that
        any fitter works on the non-embedding basis unchanged."""
        n, c = self.on_basis(basis)
        return replace(self, n=n, c=c)

    def on_basis(self, basis: str) -> tuple[np.ndarray, np.ndarray]:
        """(model size, compute) on a parameter basis of Pearce & Song (2024), Eqs. 1-4:
        ``"total"`` gives (N_T, C_T), ``"nonembedding"`` gives (N_\\E, C_\\E = 6 N_\\E D)."""
        if basis not in S.BASES:
            raise ValueError(f"basis must be one of {tuple(S.BASES)}; got {basis!r}")
        if basis == "total":
            return self.n, self.c
        if self.n_nonembedding is None:
            raise ValueError(f"the non-embedding basis needs a column {S.N_NONEMBEDDING!r} in the runs table")
        return self.n_nonembedding, self.c_nonembedding


#: Byte-order marks of UTF-16 and UTF-32 text (a spreadsheet's "Unicode text" export).
WIDE_TEXT_MARKS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe": "UTF-16",
                   b"\xfe\xff": "UTF-16"}


def _wide_text(head: bytes) -> str | None:
    """UTF-16 or UTF-32 by the byte-order mark, or UTF-16 without one (ASCII characters whose
    every other byte is NUL); None for anything else."""
    marked = next((name for mark, name in WIDE_TEXT_MARKS.items() if head.startswith(mark)), None)
    if marked is not None:
        return marked
    even, odd = head[: len(head) // 2 * 2 : 2], head[1 : len(head) // 2 * 2 : 2]
    return "UTF-16" if len(head) >= 4 and (set(odd) == {0} or set(even) == {0}) else None


def _check_text(path: Path) -> None:
    """A CSV is UTF-8 text: UTF-16/32 text (by its byte-order mark) is named as such; NUL bytes
    or undecodable bytes in the first 64 KiB name a binary file; a JSON document is not a table."""
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    wide = _wide_text(head)
    if wide is not None:
        raise ValueError(f"{path}: {wide} text; save the table as UTF-8 (CSV UTF-8 in a spreadsheet)")
    if head.lstrip()[:1] in (b"{", b"["):
        raise ValueError(f"{path}: a JSON document, not a CSV table (W&B history exports are read as .jsonl)")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head) - 4:  # not merely a character cut at the end of the chunk
            raise ValueError(f"{path}: a binary file, not a CSV table (undecodable byte at offset {err.start})") from None
    if b"\0" in head:
        raise ValueError(f"{path}: a binary file, not a CSV table (NUL bytes)")


#: Column separators a runs table may use: commas (CSV), tabs (TSV, spreadsheet copies) or
#: semicolons (spreadsheets in locales that write decimal commas).
DELIMITERS = (",", "\t", ";")


def _header_of(path: Path) -> tuple[list[str], str]:
    """The header's column names and the separator it uses: of :data:`DELIMITERS`, the one it
    holds most often (a comma for a one-column header)."""
    _check_text(path)
    with path.open(newline="") as fh:
        first = fh.readline()
        blank = 0
        while first and not first.strip():
            first, blank = fh.readline(), blank + 1
    if not first:
        raise ValueError(f"{path}: empty file (no header line)")
    if blank:
        raise ValueError(f"{path}: {blank} blank line{'s' if blank > 1 else ''} before the header; the header must "
                         "be the first line")
    delimiter = max(DELIMITERS, key=first.count)
    return next(csv.reader(io.StringIO(first), delimiter=delimiter)), delimiter


def _check_header(columns: list[str], where: str) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(columns):
        key = fold(name)
        if key in seen:
            raise ValueError(
                f"{where}: duplicate column {name!r} in header (columns {seen[key] + 1} and {i + 1})"
            )
        seen[key] = i


def _read(source: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, str]:
    if isinstance(source, pd.DataFrame):
        _check_header(list(source.columns), "table")
        return source.reset_index(drop=True), "table"
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory, expected a CSV file")
    header, delimiter = _header_of(path)
    _check_header(header, str(path))
    size = path.stat().st_size
    check_memory(LOAD_BYTES_PER_BYTE * size, f"{path}: loading {size / 2**20:.0f} MiB of CSV")
    frame = _arrow_read(path, delimiter) if size > ARROW_READ_BYTES else None
    try:
        frame = pd.read_csv(path, sep=delimiter, dtype=str, keep_default_na=False) if frame is None else frame
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a readable CSV ({str(err).splitlines()[0]})") from None
    return frame, str(path)


#: Files larger than this are read by pyarrow's multithreaded parser (2.5x faster than pandas' C
#: parser on a 63 MB table of 1M rows, the same strings); smaller ones, and any file pyarrow
#: cannot read, by the C parser, whose errors the messages quote.
ARROW_READ_BYTES = 2**23
#: Peak memory of loading a CSV per byte of the file: 1M rows of 5 columns, 63 MB (run_id, step,
#: N, D, loss), took 441 bytes per row above the interpreter, 7 per byte of the file; rounded up.
LOAD_BYTES_PER_BYTE = 8


def _arrow_read(path: Path, delimiter: str) -> pd.DataFrame | None:
    """The table as text cells by pyarrow's parser, or None where it cannot read it."""
    try:
        return pd.read_csv(path, sep=delimiter, dtype=str, keep_default_na=False, engine="pyarrow")
    except (ImportError, ValueError, TypeError, pd.errors.ParserError):  # pyarrow's errors derive from these
        return None


def _find(frame: pd.DataFrame, role: str, explicit: str | None, where: str) -> str | None:
    folded = {fold(c): c for c in frame.columns}
    if explicit is not None:
        if fold(explicit) not in folded:
            raise ValueError(
                f"{where}: column {explicit!r} for {_ROLE_NAMES.get(role, role)} not found; "
                f"columns are {list(map(str, frame.columns))}"
            )
        return folded[fold(explicit)]
    hits = [folded[a] for a in ALIASES[role] if a in folded]
    return hits[0] if hits else None


def _row_label(i: int, where: str) -> str:
    # CSV rows are counted like a spreadsheet would: data row 1 is line 2 of the file.
    return f"row {i + 1}" + ("" if where == "table" else f" (line {i + 2})")


def _cell_text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value).strip()


def _floats(column: pd.Series) -> np.ndarray:
    """The cells of ``column`` as float64, NaN where a cell is not a number."""
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return column.to_numpy(dtype=float, na_value=np.nan)
    parsed = _arrow_floats(column)
    if parsed is not None:
        return parsed
    text = column.map(_cell_text)
    return pd.to_numeric(text.where(text != "", "nan"), errors="coerce").to_numpy(float)


def _arrow_floats(column: pd.Series) -> np.ndarray | None:
    """Text cells parsed all at once by Arrow's cast (8x faster than cell by cell on 1M rows;
    correctly rounded, as Python's float() is), or None when a cell is not a plain number (a
    space, a comma, an empty cell): those are parsed, and named, cell by cell."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        return pc.cast(pa.array(column.array), pa.float64()).to_numpy(zero_copy_only=False)
    except (ImportError, ValueError, TypeError):  # pyarrow's ArrowInvalid and ArrowTypeError derive from these
        return None


def _numeric(frame: pd.DataFrame, col: str, where: str, *, positive: bool) -> np.ndarray:
    column = frame[col]
    values = _floats(column)
    bad = ~np.isfinite(values) | ((values <= 0) if positive else (values < 0))
    if not bad.any():
        return values
    i = int(np.argmax(bad))
    v, t = values[i], _cell_text(column.iloc[i])
    prefix = f"{where}: {_row_label(i, where)}, column {col!r}"
    if np.isinf(v):
        raise ValueError(f"{prefix}: infinite value ({t!r})")
    if not np.isnan(v):
        raise ValueError(f"{prefix}: must be {'> 0' if positive else '>= 0'}, got {t!r}")
    if t.lower() in ("", "nan", "na", "none", "null"):
        raise ValueError(f"{prefix}: missing value (NaN)")
    if fold(t) == fold(col):
        raise ValueError(f"{prefix}: the header is repeated inside the table")
    comma = "; write numbers without thousands separators or decimal commas" if "," in t else ""
    raise ValueError(f"{prefix}: not a number ({t!r}){comma}")


def _check_varies(values: np.ndarray, col: str, where: str, symbol: str) -> None:
    if len(values) > 1 and np.all(values == values[0]):
        raise ValueError(
            f"{where}: column {col!r}: all {len(values)} rows have {symbol} = {values[0]:g}; "
            f"{symbol} must vary to fit a scaling law"
        )


def _run_ids(frame: pd.DataFrame, columns: Sequence[str], where: str) -> np.ndarray:
    """One identifier per row from the columns that together name a run, e.g.
    ``model, peak_lr, total_steps, sweep``: "model=m|peak_lr=0.002|..."."""
    found = [_find(frame, S.RUN_ID, name, where) for name in columns]
    parts = [frame[col].map(lambda v, col=col: f"{col}={_cell_text(v)}") for col in found]
    return pd.concat(parts, axis=1).agg("|".join, axis=1).to_numpy()


def _warn_units(loss: np.ndarray, col: str, where: str) -> None:
    high = loss > MAX_PLAUSIBLE_LOSS
    if high.any():
        warnings.warn(
            f"{where}: column {col!r}: {int(high.sum())} of {len(loss)} losses are above "
            f"{MAX_PLAUSIBLE_LOSS:g} (largest {loss.max():g}); scaling laws expect the mean cross-entropy "
            "per token in nats: is this a perplexity, a sum over tokens, or in another unit?",
            PlausibilityWarning, stacklevel=3,
        )


def read_runs_table(
    source: str | Path | pd.DataFrame,
    *,
    n_col: str | None = None,
    d_col: str | None = None,
    c_col: str | None = None,
    loss_col: str | None = None,
    n_nonembedding_col: str | None = None,
    run_by: Sequence[str] | None = None,
    where: Mapping[str, str] | None = None,
    min_rows: int = 5,
    sizes_vary: bool = True,
    source_kind: str | None = None,
    metric: str | None = None,
    config: str | Path | None = None,
    loss_policy: str | LossPolicy | None = None,
) -> RunsTable:
    """Load and validate a runs table from a CSV path or a DataFrame, or the runs of an experiment
    tracker: a TensorBoard log directory, an MLflow store (``sqlite:///...``, a server URI) or W&B
    exports (:mod:`jaxscale.trackers.sources`, which this calls when ``source`` is not a table; the
    kind is detected, or named by ``source_kind``, one of
    :func:`jaxscale.trackers.sources.source_kinds`: ``"table"`` and each registered reader's;
    ``metric`` names the logged loss, ``config`` a W&B runs-table export).
    ``loss_policy`` (:mod:`jaxscale.tables.policy`: ``"every"``, ``"final"``, ``"min"``, ``"ema"``)
    chooses the loss each run contributes after its curve is checked; on a table it needs runs
    (a run_id column or ``run_by``). What was read is :attr:`RunsTable.report`.

    Column names are optional; by default the common spellings in :data:`ALIASES` are
    recognised. At least N, the loss and one of D or C are required; C = 6 N D fills the
    other. A run is named by a ``run_id`` column or by the columns ``run_by`` (e.g. ``("model",
    "peak_lr", "total_steps", "sweep")``); checkpoints of a run are ordered by its ``step``
    column (or tokens). ``where`` keeps the rows whose column equals the given text (e.g.
    ``{"source": "ml_scalefit"}``). ``min_rows`` is the least number of rows accepted (default
    5, the parameter count of the Chinchilla law). ``sizes_vary`` (default) refuses a table
    whose N, or whose D, is the same in every row: no law of N and D can be fitted to it; a
    law of one run's curve (the annealing law, one fit per model size) passes False. Columns are
    separated by commas, tabs or semicolons (:data:`DELIMITERS`). Raises ``ValueError`` (one line
    naming row and column) for a binary file, NaN, inf, values <= 0, missing or non-numeric
    columns, an empty table, fewer than ``min_rows`` rows, all-equal N or D (see ``sizes_vary``)
    and duplicate headers; warns when losses look like another unit than nats per token.
    """
    report = None
    if _is_tracker(source, source_kind):
        from jaxscale.trackers.sources import read_source

        frame, report = read_source(source, source_kind, metric=metric, config=config, loss_policy=loss_policy)
        origin = f"{report.kind} {report.origin}"
    else:
        if metric is not None or config is not None:
            raise ValueError("metric and config name a tracker's loss metric and W&B runs table; a runs table "
                             "names its columns (loss_col, ...)")
        frame, origin = _read(source)
        if len(frame) == 0:
            raise ValueError(f"{origin}: the table has a header but no rows")
        run_by = _layout_runs(frame, origin, run_by, where or {})
    frame = _rows_where(frame, where or {}, origin)
    table = _validated(frame, origin, n_col, d_col, c_col, loss_col, n_nonembedding_col, run_by, min_rows,
                       sizes_vary)
    if report is None and loss_policy is not None:
        table = _with_policy(table, as_policy(loss_policy), origin)
    return replace(table, report=report)


def _layout_runs(frame: pd.DataFrame, origin: str, run_by: Sequence[str] | None,
                 where: Mapping[str, str]) -> Sequence[str] | None:
    """``run_by``, or the run identity of a known table's layout (:mod:`jaxscale.tables.foreign_tables`)
    when the caller names none and the table has no run_id column; warns when the table mixes
    studies that ``where`` does not separate."""
    layout = layout_of(frame.columns)
    if layout is None:
        return run_by
    if layout.mixes and layout.mixes not in {fold(k) for k in where}:
        studies = frame[_find(frame, S.RUN_ID, layout.mixes, origin)].map(_cell_text).unique()
        if len(studies) > 1:
            warnings.warn(f"{origin}: {layout.name}: rows of {len(studies)} studies ({', '.join(sorted(studies))}); "
                          f"fit one at a time with --where {layout.mixes}=NAME", stacklevel=3)
    if run_by or _find(frame, S.RUN_ID, None, origin) is not None:
        return run_by
    return layout.run_by


def _is_tracker(source: str | Path | pd.DataFrame, kind: str | None) -> bool:
    """True when ``source`` is a tracker's store rather than a runs table."""
    if kind is not None:
        return kind != "table"
    if isinstance(source, pd.DataFrame):
        return False
    from jaxscale.trackers.sources import detect_kind

    return detect_kind(source) != "table"


def _with_policy(table: RunsTable, policy: LossPolicy, origin: str) -> RunsTable:
    """The table's runs checked and reduced under ``policy`` (:func:`jaxscale.tables.policy.apply_policy`),
    checkpoints ordered by step (or tokens)."""
    if table.run_id is None:
        raise ValueError(f"{origin}: a loss policy needs runs: a run_id column or the columns that name a run "
                         "(--run-by)")
    frame = pd.DataFrame({"run": table.run_id, "order": table.d if table.step is None else table.step,
                          "loss": table.loss, "row": np.arange(len(table))})
    chosen, _ = apply_policy(frame, policy, "run", "order", "loss", origin)
    out = table.select(chosen["row"].to_numpy())
    loss = chosen["loss"].to_numpy(np.float64)
    return replace(out, loss=loss, frame=out.frame.assign(**{S.LOSS: loss}))


def _rows_where(frame: pd.DataFrame, where: Mapping[str, str], origin: str) -> pd.DataFrame:
    for name, value in where.items():
        col = _find(frame, f"--where {name}={value}", name, origin)
        frame = frame[frame[col].map(_cell_text) == str(value)]
        if len(frame) == 0:
            raise ValueError(f"{origin}: no row has {col} = {value!r}")
    return frame.reset_index(drop=True)


def _validated(frame: pd.DataFrame, where: str, n_col: str | None, d_col: str | None, c_col: str | None,
               loss_col: str | None, n_nonembedding_col: str | None, run_by: Sequence[str] | None,
               min_rows: int, sizes_vary: bool) -> RunsTable:
    cols = {
        role: _find(frame, role, explicit, where)
        for role, explicit in (
            (S.N_TOTAL, n_col), (S.TOKENS, d_col), (S.COMPUTE_TOTAL, c_col),
            (S.LOSS, loss_col), (S.N_NONEMBEDDING, n_nonembedding_col), (S.COMPUTE_NONEMBEDDING, None),
            (S.RUN_ID, None), (S.STEP, None), (S.UNIQUE_TOKENS, None),
        )
    }
    for role, flag in ((S.N_TOTAL, "--n-col"), (S.LOSS, "--loss-col")):
        if cols[role] is None:
            raise ValueError(
                f"{where}: no column for {_ROLE_NAMES[role]} (looked for {', '.join(ALIASES[role][:4])}, ...; "
                f"name it with {flag}); columns are {list(map(str, frame.columns))}"
            )
    if cols[S.TOKENS] is None and cols[S.COMPUTE_TOTAL] is None:
        raise ValueError(
            f"{where}: no column for training tokens D or compute C (use --d-col or --c-col); "
            f"columns are {list(map(str, frame.columns))}"
        )
    if len(frame) < min_rows:
        raise ValueError(
            f"{where}: {len(frame)} rows, fewer than the {min_rows} parameters to fit"
        )
    get = {
        role: _numeric(frame, col, where, positive=True)
        for role, col in cols.items()
        if col is not None and role in _ROLE_NAMES
    }
    n = get[S.N_TOTAL]
    d = get[S.TOKENS] if S.TOKENS in get else get[S.COMPUTE_TOTAL] / (6.0 * n)
    c = get[S.COMPUTE_TOTAL] if S.COMPUTE_TOTAL in get else 6.0 * n * d
    if sizes_vary:
        _check_varies(n, cols[S.N_TOTAL], where, "N")
        _check_varies(d, cols[S.TOKENS] or cols[S.COMPUTE_TOTAL], where, "D")
    step = None if cols[S.STEP] is None else _numeric(frame, cols[S.STEP], where, positive=False)
    n_ne = get.get(S.N_NONEMBEDDING)
    c_ne = None if n_ne is None else get.get(S.COMPUTE_NONEMBEDDING, 6.0 * n_ne * d)
    _warn_units(get[S.LOSS], cols[S.LOSS], where)

    canonical = frame.rename(columns={col: role for role, col in cols.items() if col is not None})
    for role, values in ((S.N_TOTAL, n), (S.TOKENS, d), (S.COMPUTE_TOTAL, c), (S.LOSS, get[S.LOSS])):
        canonical[role] = values
    if n_ne is not None:
        canonical[S.N_NONEMBEDDING], canonical[S.COMPUTE_NONEMBEDDING] = n_ne, c_ne
    if step is not None:
        canonical[S.STEP] = step
    if run_by:
        canonical[S.RUN_ID] = _run_ids(frame, run_by, where)
    has_runs = bool(run_by) or cols[S.RUN_ID] is not None
    return RunsTable(
        n=n, d=d, c=c, loss=get[S.LOSS], frame=canonical,
        n_nonembedding=n_ne, c_nonembedding=c_ne,
        run_id=canonical[S.RUN_ID].to_numpy() if has_runs else None,
        step=step,
        unique_tokens=get.get(S.UNIQUE_TOKENS),
        source=where,
        columns={"N": cols[S.N_TOTAL], "D": cols[S.TOKENS] or f"{cols[S.COMPUTE_TOTAL]} / (6 N)",
                 "C": cols[S.COMPUTE_TOTAL] or "6 N D", "loss": cols[S.LOSS]},
    )


def from_arrays(n: np.ndarray, d: np.ndarray, loss: np.ndarray, *, n_nonembedding: np.ndarray | None = None,
                min_rows: int = 5) -> RunsTable:
    """A runs table from arrays of N, D and loss (and optionally N_\\E): the door for data
    made in Python, with the same checks as a CSV (:func:`read_runs_table`)."""
    columns = {S.N_TOTAL: n, S.TOKENS: d, S.LOSS: loss}
    if n_nonembedding is not None:
        columns[S.N_NONEMBEDDING] = n_nonembedding
    return read_runs_table(pd.DataFrame({k: np.asarray(v).ravel() for k, v in columns.items()}), min_rows=min_rows)


def without_highest(loss: np.ndarray, k: int) -> np.ndarray:
    """Indices (ascending) of all rows but the ``k`` of highest loss."""
    if not 0 <= k < len(loss):
        raise ValueError(f"drop_highest must be in [0, {len(loss) - 1}], got {k}")
    return np.sort(np.argsort(np.asarray(loss), kind="stable")[: len(loss) - k])


def final_checkpoints(table: RunsTable) -> RunsTable:
    """The last checkpoint of every run (largest step, or most tokens when there is no step
    column): the finished, annealed runs that Approach 3 and the Chinchilla law describe."""
    if table.run_id is None:
        raise ValueError("final checkpoints need run identity: a run_id column, or the columns that name a "
                         "run (--run-by, e.g. model,peak_lr,total_steps,sweep)")
    order = table.d if table.step is None else table.step
    last = pd.DataFrame({"run": table.run_id, "order": order}).groupby("run", sort=False)["order"].idxmax()
    return table.select(np.sort(last.to_numpy()))


def best_per_size_and_tokens(table: RunsTable) -> RunsTable:
    """At each (N, D), only the row of lowest loss: of runs that differ only in a hyperparameter
    swept (a learning-rate sweep), the tuned one. Laws like Chinchilla's describe tuned runs;
    the mis-tuned rest of a sweep lies above them and pulls a fit off the law."""
    best = pd.DataFrame({"n": table.n, "d": table.d, "loss": table.loss}).groupby(["n", "d"])["loss"].idxmin()
    return table.select(np.sort(best.to_numpy()))


def drop_highest_loss(table: RunsTable, k: int) -> RunsTable:
    """The table without its ``k`` highest-loss rows (Besiroglu et al. 2024 drop 5)."""
    return replace(table.select(without_highest(table.loss, k)), dropped_highest=table.dropped_highest + k)


def group_index(table: RunsTable, column: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each row's group (0 .. k - 1) and the k group names in sorted order, from the column
    ``column`` that names a row's dataset (found case-insensitively, like every column).
    Raises ``ValueError`` naming the column when it is missing, or the row whose cell is empty."""
    folded = {fold(c): c for c in table.frame.columns}
    if fold(column) not in folded:
        raise ValueError(f"no column {column!r} to group by; columns are {list(map(str, table.frame.columns))}")
    text = table.frame[folded[fold(column)]].map(_cell_text).to_numpy()
    empty = np.flatnonzero(text == "")
    if empty.size:
        raise ValueError(f"{_row_label(int(empty[0]), 'table')}: no group in column {column!r}")
    labels, index = np.unique(text, return_inverse=True)
    return index, tuple(str(label) for label in labels)
