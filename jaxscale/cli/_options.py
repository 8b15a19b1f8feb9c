"""The options every command shares, defined once, and how a command reports its result.

One spelling per idea: the runs table is the positional argument; ``--out DIR`` is the one
option for the files a command writes (none without it, except where files are the command's
product); ``--published NAME`` names a published parameter set; ``--law NAME`` takes any name of
the registry (:func:`jaxscale.laws.names`); ``--bootstrap R`` and ``--seed S`` mean resamples and
their seed; ``--json`` prints the result's :meth:`to_dict`. A new command builds its parser with
:func:`command` and adds the groups it needs::

    p = command(subparsers, "NAME", "one line", "what it does", "jaxscale NAME runs.csv --json")
    add_table(p)        # RUNS, columns, --where, --run-by, --drop-highest, --final-only, ...
    add_law(p); add_bootstrap(p); add_seed(p); add_out(p); add_json(p)
    ...
    def run(args):
        table = load_table(args)                    # jaxscale.load_runs with those options
        report(verb(table, ...), args)  # result.text() or --json; --out gets the files
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from jaxscale.support.atomic import OutputLock, check_writable

if TYPE_CHECKING:  # the CLI imports its heavy modules only when a command runs
    from jaxscale import RunsTable

LAW_HELP = ("any law of jaxscale.laws, e.g. chinchilla (E + A/N^alpha + B/D^beta), chinchilla-tied, kaplan, "
            "kaplan-irreducible, pearce-song, data-constrained; an unknown name lists them")


def command(subparsers: argparse._SubParsersAction, name: str, help: str, description: str,
            example: str) -> argparse.ArgumentParser:
    """A command's parser, its ``--help`` ending with ``Example:`` and ``example`` (one command
    per line; text above a blank line in ``example`` is kept before it)."""
    return subparsers.add_parser(name, help=help, description=description, epilog=epilog(example),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)


def epilog(example: str, before: str = "") -> str:
    """``before``, then ``Example:`` and each line of ``example`` indented."""
    lines = "\n".join(f"  {line}" for line in example.strip().splitlines())
    return f"{before.rstrip()}\n\nExample:\n{lines}".lstrip()


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None


def positive(text: str) -> float:
    """An argparse type: a finite number > 0."""
    value = _number(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def nonnegative(text: str) -> float:
    """An argparse type: a finite number >= 0."""
    value = _number(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def fraction(text: str) -> float:
    """An argparse type: a number in [0, 1]."""
    value = _number(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text}")
    return value


def between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number strictly between ``low`` and ``high`` (argparse names the option
    in its message: ``argument --delta: must be a number in (0, 1), got 5``)."""

    def parse(text: str) -> float:
        value = _number(text)
        if not low < value < high:
            raise argparse.ArgumentTypeError(f"must be a number in ({low:g}, {high:g}), got {text}")
        return value

    return parse


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text}")
        return value

    return parse


class _SourceKind(argparse.Action):
    """``--source KIND``: one of the registered readers' kinds
    (:data:`jaxscale.trackers.sources.READERS`), looked up only when the option is given or the
    help is shown, so that building the parser loads no reader (nor pandas)."""

    @property
    def help(self) -> str:
        return f"the runs' source, one of {', '.join(_kinds())} (default: detected)"

    @help.setter
    def help(self, _: str | None) -> None:  # argparse sets it; the property above answers
        pass

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if values not in _kinds():
            parser.error(f"argument --source: invalid choice: {values!r} (choose from {', '.join(_kinds())})")
        setattr(namespace, self.dest, values)


def _kinds() -> tuple[str, ...]:
    from jaxscale.trackers.sources import source_kinds

    return tuple(source_kinds())


def add_source(p: argparse.ArgumentParser) -> None:
    """How to read runs that live in an experiment tracker (:mod:`jaxscale.trackers.sources`): its
    kind, the metric read as the loss, a W&B runs-table export, and the loss policy."""
    from jaxscale.tables.schema import LOSS_POLICIES

    p.add_argument("--source", dest="source_kind", action=_SourceKind, default=None, metavar="KIND")
    p.add_argument("--metric", default=None, metavar="NAME",
                   help="a tracker's logged metric read as the loss (default: val_loss, eval/loss, ..., loss, "
                   "train_loss)")
    p.add_argument("--config", type=Path, default=None, metavar="CSV",
                   help="a W&B runs-table export with the runs' configurations")
    p.add_argument("--loss-policy", default=None, metavar="POLICY",
                   help=f"the loss each run contributes: {', '.join(LOSS_POLICIES)} or ema:SPAN "
                   "(default: every checkpoint)")


def add_runs(p: argparse.ArgumentParser, required: bool = True, many: bool = False) -> None:
    """The runs and how to read them: RUNS (positional; optional unless ``required``; one or more
    with ``many``, each read the same way), the column names, ``--where``, ``--run-by`` and a
    tracker's options (:func:`add_source`); read them with :func:`load_columns`."""
    p.add_argument("runs", nargs="+" if many else None if required else "?", default=None, metavar="RUNS",
                   help="the runs: a CSV (e.g. Epoch's chinchilla_svg_extracted_data.csv), a TensorBoard log "
                   "directory, an MLflow store or URI, or W&B exports" + ("; one or more" if many else ""))
    for role, flag in (("model size N", "--n-col"), ("training tokens D", "--d-col"),
                       ("training compute C", "--c-col"), ("loss", "--loss-col")):
        p.add_argument(flag, default=None, metavar="NAME", help=f"column of {role} (default: recognised by name)")
    p.add_argument("--where", action="append", default=[], metavar="COL=VALUE",
                   help="keep only rows whose COL equals VALUE (repeatable), e.g. source=ml_scalefit")
    p.add_argument("--run-by", default=None, metavar="COLS",
                   help="comma-separated columns that together name a run, e.g. model,peak_lr,total_steps,sweep "
                   "(default: a run_id column if there is one)")
    add_source(p)


def add_table(p: argparse.ArgumentParser, required: bool = True, many: bool = False) -> None:
    """:func:`add_runs`, and how to prepare the table: ``--drop-highest``, ``--final-only``,
    ``--tuned-only``, ``--basis`` (read it with :func:`load_table`)."""
    add_runs(p, required, many)
    p.add_argument("--drop-highest", type=at_least(0), default=0, metavar="K",
                   help="drop the K highest-loss runs first (Epoch drops 5; default: %(default)s)")
    p.add_argument("--final-only", action="store_true",
                   help="keep only the last checkpoint of each run (finished, annealed runs, as Approach 3 wants)")
    p.add_argument("--tuned-only", action="store_true",
                   help="at each (N, D) keep only the lowest-loss row: of runs that differ only in a swept "
                   "hyperparameter (a learning-rate sweep), the tuned one")
    p.add_argument("--basis", choices=("total", "nonembedding"), default="total",
                   help="parameter basis of N and C: total (Chinchilla's N_T, C_T) or nonembedding (Kaplan's "
                   "N_\\E, C_\\E = 6 N_\\E D; needs a non-embedding size column) (default: %(default)s)")


def add_law(p: argparse.ArgumentParser, default: str = "chinchilla", what: str = "the law to fit") -> None:
    p.add_argument("--law", default=default, metavar="NAME", help=f"{what}: {LAW_HELP} (default: %(default)s)")


def add_published(p: argparse.ArgumentParser, what: str, default: str | None = None) -> None:
    p.add_argument("--published", default=default, metavar="NAME",
                   help=f"a published parameter set of --law: {what}" + (" (default: %(default)s)" if default else ""))


def resamples(text: str) -> int:
    """An argparse type: a number of bootstrap resamples, 0 (none) or at least 2."""
    value = at_least(0)(text)
    if value == 1:
        raise argparse.ArgumentTypeError("must be 0 (none) or >= 2, got 1")
    return value


def add_bootstrap(p: argparse.ArgumentParser, default: int = 0, what: str = "bootstrap resamples",
                  minimum: int = 0) -> None:
    """``--bootstrap R``: 0 (none) or at least 2 resamples; at least ``minimum`` where a command
    needs them."""
    kind, none = (resamples, "0: none; ") if minimum == 0 else (at_least(minimum), f">= {minimum}; ")
    p.add_argument("--bootstrap", type=kind, default=default, metavar="R",
                   help=f"{what} ({none}default: %(default)s)")


def add_seed(p: argparse.ArgumentParser, what: str = "seed of the resamples") -> None:
    p.add_argument("--seed", type=int, default=0, metavar="S", help=f"{what} (default: %(default)s)")


def add_out(p: argparse.ArgumentParser, what: str, default: Path | None = None) -> None:
    after = " (default: %(default)s)" if default is not None else " (default: write no files)"
    p.add_argument("--out", type=Path, default=default, metavar="DIR", help=f"directory for {what}{after}")


def add_nuts(p: argparse.ArgumentParser) -> None:
    """--chains, --warmup, --samples and --no-progress of a command that samples by NUTS (its
    ``prepare`` is :func:`one_cpu_device_per_chain`)."""
    p.add_argument("--chains", type=at_least(1), default=4, help="NUTS chains (default: %(default)s)")
    p.add_argument("--warmup", type=at_least(0), default=1000, help="warmup steps per chain (default: %(default)s)")
    p.add_argument("--samples", type=at_least(1), default=1000, help="draws per chain (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def one_cpu_device_per_chain(args: argparse.Namespace) -> None:
    """Before JAX starts its backend: one CPU device per chain, so that NumPyro runs the chains
    in parallel (``chain_method="auto"``, :mod:`jaxscale.inference.sample`; no effect on GPU or
    TPU), through JAX's ``jax_num_cpu_devices``. A device count already chosen (the XLA flag
    ``--xla_force_host_platform_device_count`` or ``JAX_NUM_CPU_DEVICES``) is kept; once a backend
    is running (``main`` called from Python after JAX computed), JAX refuses the setting
    (RuntimeError) and this process keeps its devices."""
    import jax

    chosen = "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "")
    if chosen or jax.config.jax_num_cpu_devices >= 0:
        return
    try:
        jax.config.update("jax_num_cpu_devices", max(args.chains, 1))
    except RuntimeError:  # the backend is running already
        pass


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def where_conditions(items: list[str]) -> dict[str, str]:
    """``--where COL=VALUE`` arguments as a mapping."""
    pairs = [item.split("=", 1) for item in items]
    bad = [item for item, pair in zip(items, pairs) if len(pair) != 2 or not pair[0]]
    if bad:
        raise ValueError(f"--where takes COL=VALUE; got {bad[0]!r}")
    return dict(pairs)


def _run_by(args: argparse.Namespace) -> list[str] | None:
    return [c.strip() for c in args.run_by.split(",")] if args.run_by else None


def reading(args: argparse.Namespace) -> dict[str, Any]:
    """:func:`add_runs`' options, as :func:`jaxscale.load_runs` names them."""
    return {"n": args.n_col, "d": args.d_col, "c": args.c_col, "loss": args.loss_col,
            "where": where_conditions(args.where), "run_by": _run_by(args), "kind": args.source_kind,
            "metric": args.metric, "config": args.config, "loss_policy": args.loss_policy}


def load_columns(args: argparse.Namespace, path: str | Path | None = None) -> RunsTable:
    """The validated runs table of :func:`add_runs`' options (from ``path`` if given), read by
    :func:`jaxscale.load_runs`."""
    from jaxscale import load_runs

    return load_runs(args.runs if path is None else path, **reading(args))


def load_table(args: argparse.Namespace, path: str | Path | None = None) -> RunsTable:
    """The runs table of :func:`add_table`'s options (from ``path`` if given), prepared by
    :func:`jaxscale.load_runs`."""
    from jaxscale import load_runs

    return load_runs(args.runs if path is None else path, **reading(args), final_only=args.final_only,
                     tuned_only=args.tuned_only, drop_highest=args.drop_highest, basis=args.basis)


def deferred_table(args: argparse.Namespace, path: str | Path | None = None) -> Callable[[], RunsTable]:
    """:func:`load_table` of ``args`` (and ``path``) as a function, for a verb to call once it has
    checked its options (a bad option is reported before any file is read)."""
    return lambda: load_table(args, path)


def check_out(out: str | Path | None, option: str = "--out", hold: bool = True) -> None:
    """``out`` can take the command's files: a directory, or a path that can be made one (its
    nearest existing ancestor is a writable directory), that no other process is writing. Called
    before any work, so that no sampling, training or fitting is lost to a path that cannot be
    written; raises ValueError naming ``option`` as the user typed it, or naming the process that
    holds the directory. With ``hold``, the command holds it until it ends (:func:`hold_out`,
    :func:`release_outputs`)."""
    if out is None:
        return
    check_writable(out, option)
    if hold:
        hold_out(out)


def hold_out(out: str | Path) -> None:
    """Hold ``out`` until the command ends: another process writing there is refused, naming this
    one (:class:`~jaxscale.support.atomic.OutputLock`). A multi-process sweep's processes share
    their ``--out``: only its process 0 holds it."""
    _held.append(OutputLock(Path(out)).acquire())


#: The output directories this command holds (:func:`check_out`), released by :func:`release_outputs`.
_held: list[OutputLock] = []


def release_outputs() -> None:
    """Release the output directories :func:`check_out` took (at the end of every command)."""
    while _held:
        _held.pop().release()


def report(result: Any, args: argparse.Namespace) -> int:
    """Print ``result.to_dict()`` (``--json``) or ``result.text()``, after writing its files into
    ``--out`` (listed under ``files``)."""
    from jaxscale.cli._output import print_json

    files = None if getattr(args, "out", None) is None else result.save(args.out)
    if args.json:
        print_json(result.to_dict() if files is None else {**result.to_dict(), "files": files})
    else:
        print(result.text(files or ()))
    return 0


def add_fit_rule(p: argparse.ArgumentParser) -> None:
    """--fit-rule: how the multi-power law is fitted (``jaxscale curve``, ``jaxscale schedule``)."""
    p.add_argument("--fit-rule", choices=("held-out", "optimum"), default="held-out",
                   help="multi-power law: held-out (its penalty on the loss drop's shape chosen by holding one "
                   "fitted run out at a time, with 90%% predictive intervals; needs two fitted runs) or optimum "
                   "(the Huber objective's minimum) (default: %(default)s)")
