"""The ``jaxscale`` command line: parses arguments, calls the public API, prints.

No science and no report lives here: a command parses its options, calls a verb of
:mod:`jaxscale` and prints the result's ``to_dict()`` (``--json``) or its text, after writing the
result's files into ``--out``. Each command is one small module of this package exposing
``register(subparsers)``; it adds its parser (with the shared options of :mod:`._options`) and
sets ``run=`` to a function of the parsed arguments returning an exit status (and, optionally,
``prepare=``, run first, before JAX starts its backend). Bad input (``ValueError``, missing
files) is reported as one line on stderr with exit status 2, never a traceback; warnings as one
line each, ``jaxscale COMMAND: warning: MESSAGE``, without the source file and line.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import re
import sys
import warnings

from jaxscale.cli._options import release_outputs
from jaxscale.support.plausibility import PlausibilityWarning
from jaxscale.support.compilation_cache import enable_compilation_cache

#: Command modules, in the order ``jaxscale --help`` lists them.
COMMANDS: tuple[str, ...] = ("reconcile", "sweep", "fit", "curve", "word2vec", "bayes", "sensitivity", "allocate",
                             "runs", "params", "hparams", "schedule", "design", "compare", "isoflop", "downstream")


#: Packages that only the wings' extras install ([lm]: jaxscale sweep; [word2vec]: jaxscale word2vec).
WING_PACKAGES = ("flax", "orbax", "tokenizers", "gensim")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``PROG: error: MESSAGE (see PROG --help)``, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jaxscale", description="A differentiable scaling-law engine in JAX.",
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     epilog="Example:\n  jaxscale fit runs.csv --drop-highest 5 --bootstrap 1000 --json\n"
                            "  jaxscale COMMAND --help")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"jaxscale.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    own_process = argv is None  # the process's own command line: the process exits when it returns
    if own_process:
        gc.disable()  # starting imports JAX, ~100,000 objects and no garbage: no collection need look at them
    parser = build_parser()
    args = parser.parse_args(argv)
    if hasattr(args, "prepare"):  # settings a command needs before JAX starts its backend
        args.prepare(args)
    enable_compilation_cache()
    if own_process:
        gc.freeze()  # nor later (0.1 s of a `jaxscale fit`); the command's own garbage is collected as usual
        gc.enable()
    formatwarning = warnings.formatwarning
    warnings.formatwarning = lambda message, *_, **__: f"jaxscale {args.command}: warning: {message}\n"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("once", PlausibilityWarning)  # a fit and its refits warn of one table once
            return int(args.run(args) or 0)
    except (ValueError, OSError) as err:  # bad input, or a path that cannot be read or written
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"jaxscale {args.command}: error: {_in_option_names(message, parser, args)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:  # a wing's dependency, not installed
        if (err.name or "").split(".")[0] not in WING_PACKAGES:
            raise
        extra = "word2vec" if args.command == "word2vec" else "lm"
        print(f"jaxscale {args.command}: error: this command needs {err.name}: pip install 'jaxscale[{extra}]'",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"jaxscale {args.command}: interrupted", file=sys.stderr)
        return 130
    finally:
        warnings.formatwarning = formatwarning
        release_outputs()
        if own_process:
            gc.freeze()  # the interpreter's last collections at exit then skip every object (0.3 s of a fit)


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command that ``args`` were parsed by (``word2vec train``: two levels)."""
    while True:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or getattr(args, sub.dest, None) not in sub.choices:
            return parser
        parser = sub.choices[getattr(args, sub.dest)]


def _in_option_names(message: str, parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """``message`` with the Python names of the command's options (``min_cost``, ``drop_highest``:
    how the verbs name their arguments) written as the options a user typed (``--min-cost``).
    Only names with an underscore are replaced (a plain word such as ``law`` is also prose), not
    where quoted (a column of that name) nor where the message already names the option."""
    for action in _command_parser(parser, args)._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        names = {action.dest, *(o[2:].replace("-", "_") for o in longs)}
        if not longs or longs[0] in message:  # the message names the option already
            continue
        for name in (n for n in names if "_" in n):  # a quoted name is a column, not the option
            message = re.sub(rf"(?<![\w'-]){re.escape(name)}(?![\w'-])", longs[0], message)
    return message


if __name__ == "__main__":
    sys.exit(main())
