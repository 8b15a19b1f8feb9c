"""The one JSON printer of the CLI (a result's text is its own: :meth:`jaxscale._api._results.Result.text`)."""

from __future__ import annotations

import json
import sys
from typing import Any

from jaxscale.support.json_native import json_native


def print_json(obj: dict[str, Any]) -> None:
    """Print one JSON object on stdout (the contract of every ``--json`` flag)."""
    json.dump(json_native(obj), sys.stdout, indent=2)
    sys.stdout.write("\n")
    sys.stdout.flush()
