"""Type checkers and IDEs see the public API: ``jaxscale/__init__.py`` imports every public name
for them (``if TYPE_CHECKING:``) from the module its lazy loader loads it from, the package ships
``py.typed``, and mypy resolves every name of ``jaxscale.__all__`` in a user's script
(``typed_user_script.py``, beside this file)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import jaxscale as js

ROOT = Path(__file__).resolve().parents[2]
INIT = ROOT / "jaxscale" / "__init__.py"
USER_SCRIPT = Path(__file__).resolve().parent / "typed_user_script.py"

#: mypy's settings for the user's script: jaxscale's modules are read for their types, their own
#: errors silenced, except those of jaxscale/__init__.py, whose imports are what is checked here;
#: third-party packages without stubs are not followed (Any), since their types are not checked.
MYPY_CONFIG = """\
[mypy]
follow_imports = skip
ignore_missing_imports = True

[mypy-jaxscale.*]
follow_imports = silent

[mypy-jaxscale]
follow_imports = normal
"""

#: A script using names the package does not have: mypy must report each, so that a public name
#: missing from the TYPE_CHECKING imports cannot pass for Any.
CONTROL_SCRIPT = """\
import jaxscale as js

js.not_a_public_name
js.laws.not_a_function
report: js.FitReport
report.not_an_attribute
"""


def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """Each name the ``if TYPE_CHECKING:`` block of a module imports, and the module it imports it from."""
    blocks = [node for node in tree.body
              if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, "jaxscale/__init__.py needs exactly one top-level `if TYPE_CHECKING:` block"
    names: dict[str, str] = {}
    for node in blocks[0].body:
        if isinstance(node, ast.ImportFrom):
            names |= {alias.asname or alias.name: node.module or "" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.asname or alias.name: alias.name for alias in node.names}
    return names


def _names_used(tree: ast.Module, module: str) -> set[str]:
    """The attributes of ``module`` a script reads, by the name it imports the module as."""
    aliases = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name == module}
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases}


def test_type_checkers_import_each_public_name_from_where_it_loads():
    """The TYPE_CHECKING imports and the lazy loader's ``_WHERE`` name the same names from the same
    modules, each re-exported explicitly (``import X as X``, which strict checkers require)."""
    tree = ast.parse(INIT.read_text())
    seen = _type_checking_imports(tree)
    assert sorted(set(js._WHERE) - set(seen)) == [], "public names missing from the TYPE_CHECKING imports"
    assert sorted(set(seen) - set(js._WHERE)) == [], "TYPE_CHECKING imports names that are not public"
    assert {name: module for name, module in seen.items() if module != js._WHERE[name]} == {}, \
        "names imported for type checkers from another module than _WHERE's"
    implicit = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module in set(js._WHERE.values()) for alias in node.names if alias.asname != alias.name]
    assert implicit == [], "re-export each name as itself (`from m import X as X`)"


def test_the_user_script_uses_every_public_name():
    """A public name added without a use in the script fails here, so the type check below covers it."""
    used = _names_used(ast.parse(USER_SCRIPT.read_text()), "jaxscale")
    assert sorted(set(js.__all__) - used) == [], f"names of jaxscale.__all__ that {USER_SCRIPT.name} does not use"


def _mypy_errors(output: str) -> dict[Path, list[str]]:
    """mypy's error lines, by the file they are in (mypy names files relative to where it ran, ROOT)."""
    errors: dict[Path, list[str]] = {}
    for line in output.splitlines():
        match = re.match(r"(?P<path>[^:]+):\d+: error: ", line)
        if match:
            errors.setdefault((ROOT / match["path"]).resolve(), []).append(line)
    return errors


def test_mypy_resolves_every_public_name_in_a_user_script(tmp_path):
    """mypy reads the user's script and a control script that names what the package lacks.

    Checks: every public name resolves (no ``name-defined``, ``attr-defined``, ``import`` error, nor
    any other, in the user's script) to its real type (the control's unknown names are reported,
    so none would pass for Any), the verbs' signatures accept the script's calls and the results
    have the attributes and methods it reads; and jaxscale/__init__.py's imports type-check.
    Does not check: that the rest of the package type-checks (its modules' own errors are
    silenced), nor the types of third-party packages without stubs (pandas: Any)."""
    pytest.importorskip("mypy", reason="mypy comes with the [test] extra")
    config, control = tmp_path / "mypy.ini", tmp_path / "control_script.py"
    config.write_text(MYPY_CONFIG)
    control.write_text(CONTROL_SCRIPT)
    command = [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"),
               "--show-error-codes", "--no-pretty", str(USER_SCRIPT), str(control)]
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, "MYPYPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr  # 1: it checked and found errors (the control's)
    errors = _mypy_errors(done.stdout)
    in_script, in_init = errors.pop(USER_SCRIPT, []), errors.pop(INIT, [])
    assert in_script == [], "\n".join(in_script)
    assert in_init == [], "\n".join(in_init)
    reported = errors.pop(control.resolve(), [])
    assert errors == {}, done.stdout
    assert [line.rsplit("[", 1)[-1] for line in reported] == ["attr-defined]"] * 3, done.stdout


def test_the_package_ships_its_py_typed_marker():
    """PEP 561: without ``py.typed`` in the installed package, type checkers ignore its annotations."""
    assert (ROOT / "jaxscale" / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["jaxscale"]
