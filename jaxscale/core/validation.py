"""Argument checks for public functions: applied to concrete inputs, skipped under tracing.

Public law functions are meant to be composed inside ``jax.jit``/``vmap``/``grad``; there the
values are tracers and cannot be inspected, so checks run only when a caller passes concrete
numbers (the boundary), never inside compiled code.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


def is_traced(x: Any) -> bool:
    """True if any leaf of ``x`` is a JAX tracer (we are inside jit/vmap/grad)."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(x))


def _as_float_array(name: str, x: Any) -> np.ndarray:
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric; got {x!r}") from None


def _first_bad(mask: np.ndarray, values: np.ndarray) -> str:
    idx = np.argwhere(mask)[0]
    where = "" if values.ndim == 0 else f" at index {tuple(int(i) for i in idx)}"
    return f"{values[tuple(idx)].item() if values.ndim else values.item()!r}{where}"


def check_finite(name: str, x: Any) -> None:
    """Raise ``ValueError`` naming ``name`` if ``x`` holds NaN or inf."""
    if is_traced(x):
        return
    a = _as_float_array(name, x)
    bad = ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"{name} must be finite; got {_first_bad(bad, a)}")


def check_positive(name: str, x: Any, zero: bool = False) -> None:
    """Raise ``ValueError`` naming ``name`` unless every value of ``x`` is finite and > 0
    (>= 0 with ``zero``)."""
    if is_traced(x):
        return
    check_finite(name, x)
    a = _as_float_array(name, x)
    bad = ~(a >= 0) if zero else ~(a > 0)
    if bad.any():
        raise ValueError(f"{name} must be {'>= 0' if zero else '> 0'}; got {_first_bad(bad, a)}")


def check_params_positive(params: Any) -> None:
    """Check every field of a NamedTuple of law parameters is finite and > 0."""
    for field, value in zip(params._fields, params):
        check_positive(f"{type(params).__name__}.{field}", value)
