"""JSON-native values: what every ``--json`` output and saved report is converted to first."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from jaxscale.support.atomic import write_text_atomic


def json_native(obj: Any) -> Any:
    """Convert numpy/JAX scalars and arrays to JSON-native values (NaN/inf become null)."""
    if isinstance(obj, dict):
        return {str(k): json_native(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_native(v) for v in obj]
    if hasattr(obj, "__array__") and not isinstance(obj, (str, bytes)):
        arr = np.asarray(obj)
        return json_native(arr.item()) if arr.ndim == 0 else [json_native(v) for v in arr.tolist()]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as strict JSON (no NaN tokens), indented."""
    write_text_atomic(path, json.dumps(json_native(obj), indent=1))
