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
