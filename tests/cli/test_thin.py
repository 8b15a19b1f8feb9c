"""The command line parses and calls; it holds no science and renders no result itself.

Each module of ``jaxscale/cli`` is read with ``ast`` and judged on what it does: it prints only a
result's own rendering (``result.text(...)``), the JSON of ``print_json`` or a message on stderr;
it reads no result's dict by key to print it; it draws no figure; and it imports from jaxscale
only the public API, the CLI itself, the option choices of ``jaxscale.tables.schema`` and of the
readers' registry (``jaxscale.trackers.sources``: the ``--source`` kinds) and the support layer
(warnings, the compilation cache, JSON)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jaxscale.cli

CLI = Path(jaxscale.cli.__file__).parent
MODULES = sorted(p.name for p in CLI.glob("*.py"))

#: What a command may import from jaxscale: the public API, the CLI, option choices, support.
ALLOWED_IMPORTS = ("jaxscale", "jaxscale.cli", "jaxscale.tables.schema", "jaxscale.trackers.sources", "jaxscale.support")
#: Calls whose result is a result's data, not its rendering.
RESULT_DATA = ("to_dict", "summary", "_report", "_numbers")
#: Names a printer's argument took when it read a result's dict.
RESULT_DICT_NAMES = ("numbers", "report", "summary", "section", "result")

#: Commands that still do more than parse, call and print, each with why (none left: the wings'
#: commands call ``jaxscale.sweep`` and the word2vec verbs since their verbs joined the public API).
WINGS: dict[str, str] = {}


def _tree(name: str) -> ast.Module:
    return ast.parse((CLI / name).read_text(), filename=name)


def _is_stderr(call: ast.Call) -> bool:
    return any(k.arg == "file" and ast.unparse(k.value) == "sys.stderr" for k in call.keywords)


def _is_rendering(node: ast.expr) -> bool:
    """``X.text(...)`` or ``str(X)``: a result's own text."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "text") or (
        isinstance(func, ast.Name) and func.id == "str" and len(node.args) == 1)


def bad_prints(tree: ast.Module) -> list[str]:
    """Calls of ``print`` with anything but a result's rendering or a message on stderr."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            if _is_stderr(node) or (len(node.args) == 1 and _is_rendering(node.args[0])):
                continue
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


def _reads_result(node: ast.expr) -> bool:
    """``node`` is a result's data: a call of ``to_dict``/``summary``, or a name a printer used for it."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in RESULT_DATA
    if isinstance(node, ast.Attribute):
        return node.attr in RESULT_DATA
    return isinstance(node, ast.Name) and node.id in RESULT_DICT_NAMES


def key_reads(tree: ast.Module) -> list[str]:
    """``numbers["key"]``, ``result.to_dict()["key"]``, ``report.get("key")`` and the like."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and _reads_result(node.value):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and _reads_result(node.func.value)):
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


def _imported(tree: ast.Module) -> list[tuple[int, str]]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
    return names


def drawing(tree: ast.Module) -> list[str]:
    """Imports of matplotlib or jaxscale.plots, and calls that draw or save a figure."""
    found = [f"line {line}: import {name}" for line, name in _imported(tree)
             if name.split(".")[0] == "matplotlib" or name.startswith("jaxscale.plots")]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("savefig", "Figures", "subplots", "figure") or name.endswith("_figure"):
                found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


def science(tree: ast.Module) -> list[str]:
    """Imports from jaxscale beyond the public API, the CLI, option choices and support."""
    return [f"line {line}: import {name}" for line, name in _imported(tree)
            if name.split(".")[0] == "jaxscale"
            and not any(name == allowed or name.startswith(f"{allowed}.") and allowed != "jaxscale"
                        for allowed in ALLOWED_IMPORTS)]


CHECKS = {"prints other than a result's text": bad_prints, "reads a result's keys": key_reads,
          "draws figures": drawing, "does science (engine imports)": science}


@pytest.mark.parametrize("name", [pytest.param(m, marks=pytest.mark.xfail(reason=WINGS[m], strict=True))
                                  if m in WINGS else m for m in MODULES])
def test_a_command_parses_calls_and_prints_the_results_own_text(name):
    tree = _tree(name)
    problems = {what: found for what, check in CHECKS.items() if (found := check(tree))}
    assert problems == {}, f"jaxscale/cli/{name}: {problems}"


@pytest.mark.parametrize("source, check", [
    ("def show(numbers):\n    print(f\"{numbers['law']} law\")\n", "reads a result's keys"),
    ("def show(numbers):\n    print(numbers)\n", "prints other than a result's text"),
    ("def run(result):\n    law = result.to_dict().get('law')\n", "reads a result's keys"),
    ("def run(fits):\n    from jaxscale.plots.curves import curves_figures\n", "draws figures"),
    ("def run(fit, out):\n    fit.figure().savefig(out)\n", "draws figures"),
    ("def run(table):\n    from jaxscale.curves.multipower_fit import fit_multipower\n", "does science (engine imports)"),
])
def test_the_checks_catch_what_the_commands_did_before(source, check):
    """Each check finds the pattern it names (the printers, figures and fits cli/ held before
    issue 36), so that a pass above is not a check that cannot fail."""
    assert CHECKS[check](ast.parse(source))
    fine = "def run(result, args):\n    from jaxscale import fit\n    print(result.text(args.files))\n"
    assert not any(c(ast.parse(fine)) for c in CHECKS.values())
