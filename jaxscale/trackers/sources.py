"""Where runs live: detect a source's kind, read it, and turn its curves into a runs table.

``read_runs_table(source)`` (:func:`jaxscale.tables.table.read_runs_table`) takes a runs table (CSV) or a
tracker's store; for a store it calls :func:`read_source`, which

1. reads the store with its reader (:data:`READERS`: TensorBoard directories, MLflow stores, W&B
   exports), giving each run's scalars by step and its configuration;
2. takes the loss from the first logged metric of :data:`LOSS_TAGS` (validation before training
   loss) unless ``metric`` names one;
3. gives each run its model size N from its configuration: a size it logged (``n_total``,
   ``params``, ... as a runs table spells them), else the exact count of the architecture its
   hyperparameters describe (:func:`jaxscale.tables.model_config.run_architecture`,
   :func:`jaxscale.tables.accounting.param_counts`); and its tokens at each step from a logged
   tokens metric, else step x tokens per step (``tokens_per_step``, or batch size x sequence length);
4. leaves out checkpoints at zero tokens (the loss at initialisation: a law of D has no D = 0),
   then checks every curve and chooses the loss each run contributes (:mod:`jaxscale.tables.policy`).

Each run that cannot be used (no loss, no size, no tokens, or excluded by the checks) is left out
with a warning naming it, and listed with its reason in the :class:`SourceReport`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jaxscale.trackers import mlflow, tensorboard, wandb
from jaxscale.tables import schema as S
from jaxscale.tables.accounting import param_counts
from jaxscale.trackers.logged import RUN, STEP, TAG, VALUE, Logged, Reader
from jaxscale.tables.model_config import RUN_KEYS, run_architecture
from jaxscale.tables.policy import LossPolicy, apply_policy, as_policy, check_curve

#: Metric names read as the loss, in order of preference (compared after :func:`schema.fold`).
LOSS_TAGS = ("val_loss", "eval_loss", "validation_loss", "valid_loss", "loss_val", "val_lm_loss", "loss",
             "lm_loss", "train_loss", "training_loss")
#: Metric names read as the tokens seen so far.
TOKEN_TAGS = (*S.ALIASES[S.TOKENS], "tokens_seen", "num_tokens_seen", "consumed_tokens", "total_tokens")
#: What a report says of a table read without a loss policy (its rows as given).
NO_POLICY = "no loss policy: every row as given, no run checked or left out (loss_policy= / --loss-policy applies one)"
TOKENS_PER_STEP_KEYS = ("tokens_per_step", "batch_tokens", "tokens_per_batch")
BATCH_KEYS = ("batch_size", "global_batch_size", "train_batch_size", "batch")

#: The readers of tracker stores, in the order detection asks them. Adding one: its module
#: defines its :class:`~jaxscale.trackers.logged.Reader`, and it is registered here.
READERS: tuple[Reader, ...] = (tensorboard.READER, mlflow.READER, wandb.READER)


@dataclass(frozen=True)
class RunLine:
    """What was read of one run (one line of ``jaxscale runs``)."""

    run_id: str
    n_total: float | None
    tokens_per_step: float | None
    points: int
    first_step: float | None
    last_step: float | None
    final_loss: float | None
    min_loss: float | None
    flags: tuple[str, ...] = ()
    excluded: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class SourceReport:
    """What a source held and what was kept: its kind, where it is, the metric read as the loss,
    the loss policy (None: a table's rows taken as given, nothing checked or left out), one
    :class:`RunLine` per run, and what the reader could not read
    (:attr:`jaxscale.trackers.logged.Logged.dropped`)."""

    kind: str
    origin: str
    metric: str | None
    policy: LossPolicy | None
    runs: tuple[RunLine, ...] = field(default_factory=tuple)
    dropped: tuple[str, ...] = ()

    @property
    def excluded(self) -> dict[str, str]:
        return {r.run_id: r.excluded for r in self.runs if r.excluded}

    def to_dict(self) -> dict[str, Any]:
        policy = self.policy
        return {"kind": self.kind, "origin": self.origin, "metric": self.metric,
                "loss_policy": None if policy is None else policy.to_dict(),
                "loss_policy_text": NO_POLICY if policy is None else policy.describe(),
                "runs": [r.to_dict() for r in self.runs],
                "dropped": list(self.dropped)}


def source_kinds() -> tuple[str, ...]:
    """Every kind of source: ``"table"`` and each registered reader's kind (:data:`READERS`)."""
    return ("table", *(reader.kind for reader in READERS))


def reader_of(kind: str) -> Reader:
    """The registered reader of ``kind``.

    Raises:
        ValueError: no reader of that kind (naming every kind).
    """
    for reader in READERS:
        if reader.kind == kind:
            return reader
    raise ValueError(f"source kind must be one of {', '.join(source_kinds())}; got {kind!r}")


def detect_kind(source: str | Path) -> str:
    """The kind of ``source`` (one of :func:`source_kinds`) where its files tell unambiguously:
    a URI by its scheme, a file or a directory by the readers that claim it (:data:`READERS`),
    any other file is a runs table.

    Raises:
        FileNotFoundError: no such path.
        ValueError: an unknown URI scheme, a directory that holds no known store, or several
            kinds at once (name one).
    """
    text = str(source)
    if "://" in text:
        scheme = text.split("://", 1)[0].lower()
        owner = next((reader.kind for reader in READERS if scheme in reader.schemes), None)
        if owner is None:
            known = "; ".join(f"{reader.kind}: {', '.join(reader.schemes)}" for reader in READERS if reader.schemes)
            raise ValueError(f"{text}: unknown URI scheme {scheme!r} (URIs read: {known})")
        return owner
    path = Path(text)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or directory")
    if path.is_dir():
        kinds = [reader.kind for reader in READERS if reader.claims_directory(path)]
    else:
        kinds = [next((reader.kind for reader in READERS if reader.claims_file(path)), "table")]
    if len(kinds) == 1:
        return kinds[0]
    if not kinds:
        raise ValueError(f"{path}: a directory with no runs jaxscale reads "
                         f"({', '.join(reader.what for reader in READERS)})")
    raise ValueError(f"{path}: holds {' and '.join(kinds)} runs at once; name the kind (--source KIND)")


def read_logged(source: str | Path, kind: str | None = None, **options: Any) -> Logged:
    """The tracker store ``source`` as read by its reader (``kind`` detected unless given).

    Args:
        source: a store of one of the registered readers' kinds.
        kind: the reader's kind; detected when None.
        options: the reader's options, those given (not None); e.g. ``config``, a W&B
            runs-table export with the runs' configurations.

    Raises:
        ValueError: an unknown kind, an option the reader does not take, its package missing,
            or the reader's own refusal.
    """
    reader = reader_of(detect_kind(source) if kind is None else kind)
    given = {name: value for name, value in options.items() if value is not None}
    for name in given:
        if name not in reader.options:
            takers = [r.kind for r in READERS if name in r.options]
            raise ValueError(f"{name} is read for {' and '.join(takers) or 'no'} sources only, not {reader.kind}")
    missing = reader.missing_module()
    if missing is not None:
        raise ValueError(f"reading {reader.kind} runs needs {missing}: pip install 'jaxscale[{reader.extra}]'")
    return reader.read(source, **given)


def read_source(source: str | Path, kind: str | None = None, *, metric: str | None = None,
                config: str | Path | None = None,
                loss_policy: str | LossPolicy | None = None) -> tuple[pd.DataFrame, SourceReport]:
    """The runs of a tracker store as a tidy runs table and the report of what was read (module docstring).

    Args:
        source: a TensorBoard log directory, an MLflow tracking URI or store, W&B export files.
        kind: a registered reader's kind (:func:`source_kinds`); detected when None.
        metric: the logged metric to read as the loss (default: the first of :data:`LOSS_TAGS`).
        config: a W&B runs-table export holding the runs' configurations.
        loss_policy: which loss each run contributes (:func:`jaxscale.tables.policy.as_policy`).

    Returns:
        The table (columns run_id, step, tokens, n_total, loss, n_nonembedding and n_embedding
        where an architecture gave them, every other logged metric at the same step, and the
        runs' numeric hyperparameters) and the :class:`SourceReport`.

    Raises:
        ValueError: one line naming the source (or the run) when nothing usable is in it.
    """
    logged = read_logged(source, kind, config=config)
    policy = as_policy(loss_policy)
    where = f"{logged.kind} {logged.origin}"
    for line in logged.dropped:
        warnings.warn(f"{where}: {line}", stacklevel=2)
    loss_tag = _loss_tag(logged.scalars, metric, where)
    token_tag = _first_tag(logged.scalars, TOKEN_TAGS)
    curves = _curves(logged.scalars, loss_tag)
    logs_tokens = set() if token_tag is None else set(
        map(str, logged.scalars.loc[logged.scalars[TAG] == token_tag, RUN].unique()))
    no_curve = (np.zeros(0), np.zeros(0))
    lines, kept = [], []
    for run in logged.run_ids:
        config = logged.configs.get(run, {})
        steps, losses = curves.get(run, no_curve)
        sizes, per_step = _sizes(config, where, run), _tokens_per_step(config)
        missing = _missing(len(steps), sizes, per_step, run in logs_tokens, loss_tag, config)
        check = check_curve(steps, losses, policy) if not missing else None
        lines.append(_line(run, steps, losses, sizes, per_step, check, missing))
        if missing:
            warnings.warn(f"{where}: run {run} left out: {missing}", stacklevel=2)
            continue
        kept.append((run, steps, losses, sizes, per_step, config))
    if not kept:
        excluded = "; ".join(f"{line.run_id}: {line.excluded}" for line in lines[:3])
        raise ValueError(f"{where}: no run has a loss, a model size and tokens ({excluded})")
    rows = _with_metrics(_run_rows(kept), logged.scalars, loss_tag, token_tag)
    rows = rows[rows[S.TOKENS] > 0].reset_index(drop=True)  # the loss at initialisation is no run of any D
    table, checks = apply_policy(rows, policy, S.RUN_ID, S.STEP, S.LOSS, where)
    lines = [_with_exclusion(line, checks.get(line.run_id)) for line in lines]
    return table, SourceReport(logged.kind, logged.origin, loss_tag, policy, tuple(lines), logged.dropped)


def table_report(frame: pd.DataFrame, origin: str, policy: LossPolicy | None = None) -> SourceReport:
    """The report of a runs table already loaded (canonical columns of :mod:`jaxscale.tables.schema`):
    one line per run where the table names runs, none otherwise; ``policy`` the loss policy it is
    read under (None: its rows as given), whose checks (:func:`~jaxscale.tables.policy.check_curve`)
    give each run's flags and why it is left out, ``frame`` holding the table's rows before it."""
    lines = []
    if S.RUN_ID in frame.columns:
        order = S.STEP if S.STEP in frame.columns else S.TOKENS
        for run, rows in frame.groupby(S.RUN_ID, sort=False):
            steps, loss = rows[order].to_numpy(np.float64), rows[S.LOSS].to_numpy(np.float64)
            per_step = rows[S.TOKENS].to_numpy(np.float64) / steps if order == S.STEP else np.array([np.nan])
            positive = per_step[np.isfinite(per_step) & (per_step > 0)]
            check = None if policy is None else check_curve(steps, loss, policy)
            lines.append(RunLine(str(run), float(rows[S.N_TOTAL].iloc[0]),
                                 float(np.median(positive)) if positive.size else None, len(rows),
                                 float(steps[0]), float(steps[-1]), float(loss[-1]), float(loss.min()),
                                 () if check is None else check.findings, None if check is None else check.excluded))
    return SourceReport("table", origin, S.LOSS, policy, tuple(lines))


def _first_tag(scalars: pd.DataFrame, names: tuple[str, ...]) -> str | None:
    by_fold = {S.fold(t): t for t in scalars[TAG].unique()}
    return next((by_fold[n] for n in names if n in by_fold), None)


def _loss_tag(scalars: pd.DataFrame, metric: str | None, where: str) -> str:
    tags = sorted(map(str, scalars[TAG].unique()))
    if metric is not None:
        if metric not in tags:
            raise ValueError(f"{where}: no metric {metric!r}; logged metrics are {tags}")
        return metric
    tag = _first_tag(scalars, LOSS_TAGS)
    if tag is None:
        raise ValueError(f"{where}: no loss metric among {tags} (looked for {', '.join(LOSS_TAGS[:4])}, ...; "
                         "name it with metric=... / --metric)")
    return tag


def _usable_number(value: Any) -> bool:
    """True for a hyperparameter that is a finite number > 0 (a size, a count of tokens)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(np.isfinite(value)) and value > 0


def _config_number(config: Mapping[str, Any], names: tuple[str, ...]) -> float | None:
    by_fold = {S.fold(k): v for k, v in config.items()}
    for name in names:
        value = by_fold.get(name)
        if _usable_number(value):
            return float(value)
    return None


def _unusable(config: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    """The first hyperparameter of ``names`` (folded) logged with a value that is not a number > 0,
    as ``key = value``, or None."""
    return next((f"{key} = {value!r}" for key, value in config.items()
                 if S.fold(key) in names and not _usable_number(value)), None)


def _sizes(config: Mapping[str, Any], where: str, run: str) -> dict[str, float]:
    """N_T (and N_\\E, N_E where known) of a run: logged, else counted from its architecture."""
    n = _config_number(config, S.ALIASES[S.N_TOTAL])
    if n is not None:
        n_ne = _config_number(config, S.ALIASES[S.N_NONEMBEDDING])
        return {S.N_TOTAL: n} if n_ne is None else {S.N_TOTAL: n, S.N_NONEMBEDDING: n_ne}
    arch = run_architecture(config, f"{where}: run {run}")
    if arch is None:
        return {}
    counts = param_counts(arch)
    unusable = _unusable(config, S.ALIASES[S.N_TOTAL])
    if unusable is not None:
        warnings.warn(f"{where}: run {run}: its model size {unusable} is not a number of parameters > 0; "
                      "N counted from its architecture", stacklevel=3)
    return {S.N_TOTAL: float(counts.total), S.N_NONEMBEDDING: float(counts.nonembedding),
            S.N_EMBEDDING: float(counts.embedding)}


def _tokens_per_step(config: Mapping[str, Any]) -> float | None:
    """Tokens per optimiser step: logged, or batch size (sequences) x sequence length."""
    per_step = _config_number(config, TOKENS_PER_STEP_KEYS)
    if per_step is not None:
        return per_step
    batch, length = _config_number(config, BATCH_KEYS), _config_number(config, RUN_KEYS["n_ctx"])
    return None if batch is None or length is None else batch * length


def _missing(points: int, sizes: dict[str, float], per_step: float | None, logs_tokens: bool,
             loss_tag: str, config: Mapping[str, Any]) -> str | None:
    """Why a run (of ``points`` losses logged, its hyperparameters ``config``) cannot enter the
    table, or None; a size or tokens per step logged but not a number > 0 is named."""
    if not points:
        return f"no {loss_tag!r} metric logged"
    if S.N_TOTAL not in sizes:
        unusable = _unusable(config, S.ALIASES[S.N_TOTAL])
        if unusable is not None:
            return f"its model size {unusable} is not a number of parameters > 0"
        return ("no model size in its config (n_total, params, ... or an architecture: d_model, n_layer, n_head, "
                "vocab_size, n_ctx)")
    if per_step is None and not logs_tokens:
        unusable = _unusable(config, (*TOKENS_PER_STEP_KEYS, *BATCH_KEYS, *RUN_KEYS["n_ctx"]))
        if unusable is not None:
            return f"its tokens per step {unusable} is not a number > 0"
        return "no tokens per step in its config (tokens_per_step, or batch_size and seq_len) and no tokens metric"
    return None


def _line(run: str, steps: np.ndarray, losses: np.ndarray, sizes: dict[str, float], per_step: float | None,
          check: Any, missing: str | None) -> RunLine:
    kept = check.kept if check is not None else np.flatnonzero(np.isfinite(losses))
    return RunLine(
        run_id=run, n_total=sizes.get(S.N_TOTAL), tokens_per_step=per_step, points=len(steps),
        first_step=float(steps[0]) if len(steps) else None, last_step=float(steps[-1]) if len(steps) else None,
        final_loss=float(losses[kept][-1]) if len(kept) else None,
        min_loss=float(losses[kept].min()) if len(kept) else None,
        flags=check.findings if check is not None else (), excluded=missing or (check.excluded if check else None),
    )


def _with_exclusion(line: RunLine, check: Any) -> RunLine:
    return line if check is None or line.excluded else RunLine(**{**line.__dict__, "excluded": check.excluded})


#: Hyperparameters not copied into the table: their names would be read as a column the runs
#: table fills per checkpoint (a config's ``steps`` or ``compute`` is the run's total, not the
#: checkpoint's).
_PER_CHECKPOINT = {name for role in (S.N_TOTAL, S.TOKENS, S.COMPUTE_TOTAL, S.COMPUTE_NONEMBEDDING, S.LOSS,
                                     S.RUN_ID, S.STEP) for name in S.ALIASES[role]}


def _curves(scalars: pd.DataFrame, tag: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each run's steps and values of the metric ``tag``, in logged order."""
    rows = scalars[scalars[TAG] == tag]
    runs = pd.Categorical(rows[RUN])
    order = np.argsort(runs.codes, kind="stable")
    counts = np.bincount(runs.codes, minlength=len(runs.categories))
    ends = np.cumsum(counts)
    steps, values = rows[STEP].to_numpy(np.float64)[order], rows[VALUE].to_numpy(np.float64)[order]
    return {str(run): (steps[end - n:end], values[end - n:end])
            for run, n, end in zip(runs.categories, counts, ends) if n}


def _run_rows(kept: list[tuple[str, np.ndarray, np.ndarray, dict[str, float], float | None, Mapping[str, Any]]]
              ) -> pd.DataFrame:
    """The runs' loss curves (logged order), each row with its run's sizes, tokens (step x tokens
    per step) and numeric hyperparameters, built column by column for all runs at once."""
    columns: dict[str, list[Any]] = {}
    for i, (run, steps, losses, sizes, per_step, config) in enumerate(kept):
        fixed = {S.RUN_ID: run, S.STEP: None, S.LOSS: None, **sizes, S.TOKENS: None}
        hyper = {key: value for key, value in config.items()
                 if key not in fixed and S.fold(key) not in _PER_CHECKPOINT and not isinstance(value, bool)}
        for key, value in {**fixed, **hyper}.items():
            columns.setdefault(key, [np.nan] * len(kept))[i] = value
    lengths = [len(steps) for _, steps, *_ in kept]
    per_step = np.array([np.nan if k[4] is None else k[4] for k in kept], np.float64)
    steps = np.concatenate([k[1] for k in kept])
    exact = {S.STEP: steps, S.LOSS: np.concatenate([k[2] for k in kept]),
             S.TOKENS: steps * np.repeat(per_step, lengths)}
    return pd.DataFrame({key: exact[key] if key in exact else pd.Series(values).repeat(lengths).reset_index(drop=True)
                         for key, values in columns.items()})


def _with_metrics(rows: pd.DataFrame, scalars: pd.DataFrame, loss_tag: str, token_tag: str | None) -> pd.DataFrame:
    """Every other logged metric at each row's step (the last value logged there); a logged
    tokens metric, where there is one at a row's step, gives that row's tokens."""
    others = scalars[scalars[TAG] != loss_tag]
    if others.empty:
        return rows
    keys = [others[RUN].astype(str).rename(S.RUN_ID), others[STEP].rename(S.STEP), others[TAG].astype(str)]
    wide = others[VALUE].groupby(keys).last().unstack(TAG)
    logged_tokens = wide.pop(token_tag) if token_tag is not None else None
    rows = rows.join(wide.drop(columns=[c for c in wide.columns if c in rows.columns]), on=[S.RUN_ID, S.STEP])
    if logged_tokens is not None:
        at_row = rows[[S.RUN_ID, S.STEP]].join(logged_tokens.rename("logged"), on=[S.RUN_ID, S.STEP])["logged"]
        rows[S.TOKENS] = at_row.where(at_row.notna(), rows[S.TOKENS])
    return rows
