"""docs/architecture.md names only what exists: every file path (``x/y.py``) and every dotted
name that starts at a part of the package (``fitting.approach3.fit_approach3``,
``jaxscale.tables.table``) in its code spans resolves to a module of the package and, past the
module, to a name that module defines. A page that still names a moved or deleted module fails
here rather than misleading a contributor."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "jaxscale"
PAGE = ROOT / "docs" / "architecture.md"
PARTS = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()} | {"jaxscale"}
#: Modules by their last name (``approach3`` -> fitting/approach3.py), for names the page gives short.
BASENAMES: dict[str, list[Path]] = {}
for _module in PACKAGE.rglob("*.py"):
    BASENAMES.setdefault(_module.stem, []).append(_module)
_SPAN = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"(?<![\w.])((?:[\w]+/)*[\w]+\.py)\b")
_DOTTED = re.compile(r"^([a-z_][\w]*)((?:\.[A-Za-z_]\w*)+)")


def _spans() -> list[str]:
    text = PAGE.read_text()
    blocks = re.findall(r"```.*?\n(.*?)```", text, flags=re.S)  # diagrams name modules too
    inline = _SPAN.findall(re.sub(r"```.*?```", "", text, flags=re.S))
    return inline + [word for block in blocks for word in re.findall(r"[\w./]+", block)]


def file_paths() -> list[str]:
    return sorted({m for span in _spans() for m in _PATH.findall(span)})


def dotted_names() -> list[str]:
    found = set()
    for span in _spans():
        for word in re.findall(r"[\w.]+", span):
            match = _DOTTED.match(word)
            known = match and (match.group(1) in PARTS or match.group(1) in BASENAMES)
            if known and not re.search(r"\.(py|csv|json|png|nc|md)$", word):
                found.add(match.group(0))
    return sorted(found)


def _file(path: str) -> Path | None:
    for base in (ROOT, PACKAGE, ROOT / "tests"):
        if (base / path).is_file():
            return base / path
    return None


@functools.cache
def _defined(module: Path) -> frozenset[str]:
    names = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.ClassDef):  # methods and fields, for names like `Law.given`
            names |= {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            names |= {n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


@functools.cache
def _public() -> frozenset[str]:
    """The lazily loaded public names of ``jaxscale/__init__.py`` (the keys of its ``_WHERE``)."""
    for node in ast.parse((PACKAGE / "__init__.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_WHERE" for t in node.targets):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def resolves(name: str) -> bool:
    """The longest prefix of ``name`` that is a module of the package, then a name it defines
    (a public name of ``jaxscale`` itself, loaded lazily, counts as defined there); a name that
    starts at a module's last name resolves in one of the modules of that name."""
    parts = name.split(".")
    if parts[0] not in PARTS:
        return any(len(parts) == 1 or parts[1] in _defined(m) for m in BASENAMES[parts[0]])
    parts = parts[1:] if parts[0] == "jaxscale" else parts
    if len(parts) == 1 and parts[0] in _public():
        return True
    for cut in range(len(parts), 0, -1):
        base = PACKAGE.joinpath(*parts[:cut])
        module = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if module.is_file():
            rest = parts[cut:]
            return not rest or rest[0] in _defined(module) or (base.is_dir() and (base / f"{rest[0]}.py").is_file())
    return False


def test_the_page_names_modules_at_all():
    assert len(file_paths()) > 5 and len(dotted_names()) > 10


@pytest.mark.parametrize("path", file_paths())
def test_every_file_the_page_names_exists(path):
    assert _file(path) is not None, f"docs/architecture.md names {path}, which does not exist"


@pytest.mark.parametrize("name", dotted_names())
def test_every_module_and_name_the_page_names_exists(name):
    assert resolves(name), f"docs/architecture.md names {name}, which is not a module of jaxscale or a name in one"
