"""Shared printing helpers for CLI commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from jaxscale.support.json_native import json_native


def print_json(obj: dict[str, Any]) -> None:
    """Print one JSON object on stdout (the contract of every ``--json`` flag)."""
    json.dump(json_native(obj), sys.stdout, indent=2)
    sys.stdout.write("\n")
    sys.stdout.flush()


def emit(numbers: dict[str, Any], as_json: bool, print_table: Callable[[dict[str, Any]], None]) -> None:
    """Print a command's results: one JSON object with ``--json``, else its human-readable table."""
    if as_json:
        print_json(numbers)
    else:
        print_table(numbers)


def print_identifiability(section: dict[str, Any]) -> None:
    """The ``identifiability`` section of a fit or posterior (:mod:`jaxscale.determinacy.identifiability`) as text."""
    spans = ", ".join(f"{k} {v:.2f}" for k, v in section["decades"].items())
    print(f"  identifiability: condition number {section['condition_hessian']:.3g} (Hessian of the objective), "
          f"{section['condition_information']:.3g} (equilibrated information); decades spanned: {spans}")
    strongest = sorted(section["correlations"].items(), key=lambda kv: -abs(kv[1] if kv[1] is not None else 0))[:3]
    print(f"  correlations ({section['correlation_source']}): "
          + ", ".join(f"{k} {'undefined' if v is None else format(v, '+.2f')}" for k, v in strongest))
    for text in section["warnings"]:
        print(f"  WARNING: {text}")
    if section["suggested_runs"]:
        print("  runs that would settle it (jaxscale design): "
              + ", ".join(f"N={r['N']:.3g} D={r['D']:.3g}" for r in section["suggested_runs"]))
