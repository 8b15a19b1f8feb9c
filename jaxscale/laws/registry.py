"""Every :class:`~jaxscale.laws.law.Law` by name, found in the modules of :mod:`jaxscale.laws`.

A module of this package that defines a ``Law`` at module level registers it: nothing else is
edited to add a law. Names must be unique; a clash is an error naming both modules.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from pathlib import Path

from jaxscale.laws.law import Law

_PACKAGE = __name__.rpartition(".")[0]  # jaxscale.laws, found without importing it from here


@functools.cache
def laws() -> dict[str, Law]:
    """All laws of :mod:`jaxscale.laws`, by name (modules imported on first call)."""
    found: dict[str, tuple[Law, str]] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        module = importlib.import_module(f"{_PACKAGE}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Law) and found.setdefault(value.name, (value, module.__name__))[0] is not value:
                raise ValueError(f"two laws named {value.name!r}: in {found[value.name][1]} and {module.__name__}")
    return {name: law for name, (law, _) in sorted(found.items())}


def law_by_name(name: str | Law) -> Law:
    """The law called ``name`` (a :class:`Law` is returned as it is)."""
    if isinstance(name, Law):
        return name
    try:
        return laws()[name]
    except KeyError:
        raise ValueError(f"unknown law {name!r}; choose one of {sorted(laws())}") from None
