"""JAX's persistent compilation cache for jaxscale's commands and benchmarks.

A fresh ``jaxscale`` process spends most of its time compiling XLA programs it compiled on the
previous run. JAX can keep compiled programs on disk (``jax_compilation_cache_dir``) and load
them instead; :func:`enable_compilation_cache` turns that on in one place:

- the directory is ``$JAXSCALE_CACHE_DIR``, else ``~/.cache/jaxscale/xla``;
- ``JAXSCALE_NO_CACHE=1`` (or ``JAXSCALE_CACHE_DIR`` set to an empty string) turns it off;
- every program is cached, however small or quick to compile: jaxscale's programs compile in
  tenths of a second each but a command compiles several, and loading is faster still.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_CACHE_DIR = Path.home() / ".cache" / "jaxscale" / "xla"


def cache_dir(environ: dict[str, str] | None = None) -> Path | None:
    """The cache directory the environment asks for, or None when caching is off."""
    env = os.environ if environ is None else environ
    if env.get("JAXSCALE_NO_CACHE", "").strip() not in ("", "0"):
        return None
    chosen = env.get("JAXSCALE_CACHE_DIR")
    if chosen is None:
        return DEFAULT_CACHE_DIR
    return Path(chosen).expanduser() if chosen.strip() else None


def enable_compilation_cache(environ: dict[str, str] | None = None) -> Path | None:
    """Point JAX's persistent compilation cache at :func:`cache_dir` (no-op when it is None) and
    cache every program; returns the directory used. Call before the first compilation."""
    directory = cache_dir(environ)
    if directory is None:
        return None
    import jax

    from jaxscale.support.compiled_programs import use_directory

    jax.config.update("jax_compilation_cache_dir", str(directory))
    use_directory(directory / "programs")
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return directory
