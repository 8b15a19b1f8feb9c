"""JAX's persistent compilation cache for jaxscale: compiled XLA programs kept between processes.

A fit, bootstrap or sampler compiles its XLA programs on its first call in a process (1-2 s of
CPU each on a 2-core machine); with the cache on, a later process loads them from disk instead.
The cache is JAX's own (``jax_compilation_cache_dir``): entries are keyed on the program, the
JAX/XLA versions and the device, so a stale entry is never used. jaxscale never turns it on by
importing; call :func:`enable` (the benchmarks do).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Where the cache lives unless ``JAXSCALE_CACHE_DIR`` says otherwise (empty: off).
DEFAULT_DIR = Path.home() / ".cache" / "jaxscale" / "xla"


def cache_dir() -> str | None:
    """The cache folder: ``JAXSCALE_CACHE_DIR`` if set (None when it is empty), else
    :data:`DEFAULT_DIR`."""
    path = os.environ.get("JAXSCALE_CACHE_DIR", str(DEFAULT_DIR))
    return path or None


def enable(path: str | os.PathLike | None = None, min_compile_seconds: float = 0.0) -> str | None:
    """Turn JAX's persistent cache on at ``path`` (default :func:`cache_dir`) for programs that
    took at least ``min_compile_seconds`` to compile; returns the folder, None when turned off."""
    folder = str(path) if path is not None else cache_dir()
    if folder is None:
        return None
    import jax

    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_seconds)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder
