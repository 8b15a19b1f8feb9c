"""Cross-references to real objects outside the API reference render as plain code.

The docstrings name internal modules and helpers with Sphinx roles (``:func:`...```,
``:class:`...```), and their type hints name classes of JAX, NumPy and pandas. The API reference
documents only jaxscale's public surface, and the build loads no other project's inventory (that
would need the network), so such a name has no page to link to. When the object it names exists (imported here, in the context of the module
or class where the role is written), the role is rendered as code without a link. When it does
not exist (a typo, a module that moved), Sphinx's own "reference target not found" warning
stands, and the build, which treats warnings as errors, fails.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from typing import Any

from docutils import nodes

_MISSING = object()


def _lookup(path: str) -> Any:
    """The object at a dotted path, importing the longest module prefix, or ``_MISSING``."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name, _MISSING)
            if obj is _MISSING:
                break
        if obj is not _MISSING:
            return obj
    return _MISSING


def _candidates(target: str, module: str | None, cls: str | None) -> list[str]:
    """Where a Python role's target may live: as written, in its class, module or their parents.

    A type hint may name a class by its public module and its private qualified name
    (``jax.jaxlib._jax.Array``: ``jax.Array`` defined in ``jaxlib._jax``), so the dotted tails of
    at least two parts are tried as well."""
    target = target.lstrip(".~")
    scopes = []
    if module:
        parts = module.split(".")
        scopes = [".".join(parts[:k]) for k in range(len(parts), 0, -1)]
        if cls:
            scopes.insert(0, f"{module}.{cls}")
    parts = target.split(".")
    tails = [".".join(parts[k:]) for k in range(1, len(parts) - 1)]
    return [target] + [f"{scope}.{target}" for scope in scopes] + tails


def _imported_for_typing(name: str, module: str | None) -> list[str]:
    """Where ``module`` imports ``name`` from, read from its source: annotations may name a class
    imported only under ``if TYPE_CHECKING:``, which the running module does not hold."""
    source = _lookup(module) if module else _MISSING
    try:
        tree = ast.parse(inspect.getsource(source))
    except (TypeError, OSError):
        return []
    package = module.rpartition(".")[0]
    return [f"{node.module if not node.level else package + '.' + (node.module or '')}.{name}".replace("..", ".")
            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names if (alias.asname or alias.name) == name and alias.name == name]


def _defining_module(module: str | None, cls: str | None) -> str | None:
    """The module that defines class ``cls`` when the page documents it under another module's
    name (``jaxscale.RunsTable``, defined in ``jaxscale.tables.table``); None otherwise."""
    defined_in = getattr(_lookup(f"{module}.{cls}"), "__module__", None) if module and cls else None
    return defined_in if isinstance(defined_in, str) and defined_in != module else None


def _resolve_in_defining_module(app, env, node, contnode, defined_in: str):
    """The reference resolved as if written in the module that defines its class: a docstring's
    names are those of its own module, whatever public name the class is documented under."""
    retry = node.deepcopy()
    retry["py:module"] = defined_in
    return env.get_domain("py").resolve_xref(env, node.get("refdoc", ""), app.builder, node["reftype"],
                                             node["reftarget"], retry, contnode)


def _resolve_existing(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target, module, cls = node["reftarget"], node.get("py:module"), node.get("py:class")
    modules = [module]
    if defined_in := _defining_module(module, cls):
        resolved = _resolve_in_defining_module(app, env, node, contnode, defined_in)
        if resolved is not None:
            return resolved
        modules.append(defined_in)
    paths = [path for where in modules for path in _candidates(target, where, cls)]
    if "." not in target.lstrip(".~"):
        paths += [path for where in modules for path in _imported_for_typing(target.lstrip(".~"), where)]
    found = any(_lookup(path) is not _MISSING for path in paths)
    return contnode if found else None


def setup(app):
    app.connect("missing-reference", _resolve_existing)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
