"""Every module of the package compiles without a warning: an invalid escape in a docstring
(``"N_\\E"``) is a SyntaxWarning from Python 3.12 and an error in a later Python."""

from __future__ import annotations

import warnings
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "jaxscale"


def _warning_of(path: Path) -> str | None:
    """The first warning compiling ``path`` raises, as text, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except (SyntaxError, Warning) as raised:
            return f"{path.relative_to(PACKAGE.parent)}: {raised}"
    return None


def test_every_module_compiles_without_a_warning():
    offenders = [w for w in map(_warning_of, sorted(PACKAGE.rglob("*.py"))) if w is not None]
    assert offenders == []
