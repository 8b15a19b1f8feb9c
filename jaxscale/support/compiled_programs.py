"""Compiled programs kept on disk and loaded instead of traced: a fresh process that fits runs
skips tracing and lowering, which JAX's persistent compilation cache cannot skip.

JAX's cache (:mod:`jaxscale.support.compilation_cache`) saves the compilation of a program, but a
fresh process still traces the Python function to a jaxpr and lowers it to StableHLO before it
can look the program up: for a fit of 124 runs that was ~1.2 s of the command's ~2 s (the L-BFGS
pool alone 0.56 s), against ~0.05 s of running the compiled programs. :func:`persistent_jit`
wraps a function like :func:`jax.jit`; while a directory is set (:func:`use_directory`, which
:func:`~jaxscale.support.compilation_cache.enable_compilation_cache` calls, so every ``jaxscale``
command has it) and JAX's persistent cache is enabled (``jax_enable_compilation_cache``, which the
test suite turns off for its own process), the first call of each argument signature compiles
ahead of time (``lower(...).compile()``) and writes the executable
(:func:`jax.experimental.serialize_executable.serialize`) under a file named by the hash of its
key; a later process loads that file instead of tracing. Otherwise it is :func:`jax.jit` itself.
The files are pickles of executables, as JAX's own cache holds: like it, the directory must be
the user's own (loading a file runs its code).

**The key** says everything the compiled program depends on, so that a file is never used for
another program:

- the program: what :func:`describe` makes of ``key`` (default: the function itself) and of
  the static arguments: module-level functions of jaxscale by name, ``functools.partial`` by its
  function and arguments, numbers, strings, tuples and frozen dataclasses by value, objects with
  a ``__program_key__`` method by what it returns (a law: its registered name);
- the source of jaxscale (a digest of every ``.py`` file of the package): any edit of the
  package is a new program;
- the dynamic arguments' tree structure, shapes and dtypes (weak types included), and JAX's
  settings that change a trace (64-bit mode, default precision, promotion rules, ...);
- the versions of Python, NumPy, jax and jaxlib, the backend, its version and devices,
  ``XLA_FLAGS`` and the program's compiler options: an upgrade of jax or jaxlib makes new files,
  never reads old ones.

A program is kept after it has been read back and run on the arguments of its first call with
outputs equal to the bit to the compiled program's (its check costs two more runs, once); a
call whose arguments exceed :data:`KEEP_BYTES` is compiled as by :func:`jax.jit` and not kept:
there the run takes far longer than the tracing (a fit of a million rows, a bootstrap of
thousands of resamples), and each new table size would pay the check again.

A call inside a transformation (its arguments tracers: under :func:`jax.jit`, :func:`jax.grad`,
:func:`jax.vmap`) is :func:`jax.jit`'s, and so is a call of what :func:`describe` cannot name (a
lambda, a closure, a law built outside jaxscale, an array): nothing of it is kept on disk.
A file that cannot be read back (truncated, written by another format, its stored key not the
one asked for) is deleted and the program compiled again: a bad file costs a compilation,
never a wrong result. Files are written whole or not at all (a temporary file renamed). A file
is touched when read; files not read for :data:`UNUSED_DAYS` days (those of an older jaxscale or
jax, which no key names any more) are deleted whenever a new program is written.

The executables are those :func:`jax.jit` would run, compiled from the same jaxpr with the same
options, so the results are the same to the last bit (``tests/support/test_compiled_programs.py``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import pickle
from pathlib import Path
from typing import Any, Callable, Sequence

from jaxscale.support.atomic import atomic_path

#: The layout of a program file; changed when what a file holds changes.
FORMAT = 1
#: The package whose source the key digests (module-level functions of it are keyable by name).
PACKAGE = "jaxscale"

#: Calls with more bytes of arguments than this are not kept (module docstring): 8 MiB, a fit of
#: ~250,000 rows (four float64 columns), the 4500-start screen's starts and a few programs' data.
KEEP_BYTES = 2**23

#: Program files not read for this many days are deleted when a program is written.
UNUSED_DAYS = 14

_directory: Path | None = None


class Unnamed(Exception):
    """A value :func:`describe` cannot name reproducibly across processes."""


def use_directory(directory: Path | str | None) -> None:
    """Keep compiled programs in ``directory`` (created when first written); None: keep none."""
    global _directory
    _directory = None if directory is None else Path(directory)


def directory() -> Path | None:
    """Where compiled programs are kept, or None."""
    return _directory


def describe(value: Any) -> Any:
    """A description of ``value`` that is the same in every process for the same program, made of
    strings and tuples (module docstring).

    Raises:
        Unnamed: if ``value`` (or a part of it) has no such description.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, repr(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *(describe(v) for v in value))
    if isinstance(value, functools.partial):
        return ("partial", describe(value.func), describe(value.args),
                tuple((k, describe(v)) for k, v in sorted(value.keywords.items())))
    named = getattr(value, "__program_key__", None)
    if named is not None:
        described = named()
        if described is None:
            raise Unnamed(f"{type(value).__qualname__} {getattr(value, '__name__', '')} names no program")
        return (type(value).__qualname__, describe(described))
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and value.__dataclass_params__.frozen:
        return (_qualified(type(value)),
                tuple((f.name, describe(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if callable(value) and getattr(value, "__closure__", None) is None and not isinstance(value, type):
        return ("function", _qualified(value))
    raise Unnamed(f"cannot name {type(value).__qualname__} reproducibly")


def _qualified(obj: Any) -> str:
    """``module.qualname`` of a module-level function or class of the package."""
    module, name = getattr(obj, "__module__", None) or "", getattr(obj, "__qualname__", "<locals>")
    if not (module == PACKAGE or module.startswith(PACKAGE + ".")) or "<" in name:
        raise Unnamed(f"{module}.{name} is not a module-level name of {PACKAGE}")
    return f"{module}.{name}"


@functools.cache
def source_digest() -> str:
    """SHA-256 of every ``.py`` file of the package, paths and contents, in path order."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def _platform() -> tuple[str, ...]:
    """The versions and the machine a compiled program is valid for."""
    import sys

    import jax
    import jaxlib
    import numpy

    backend = jax.devices()[0].client
    return (f"format {FORMAT}", sys.version.split()[0], numpy.__version__, jax.__version__, jaxlib.__version__,
            backend.platform, backend.platform_version,
            *sorted(f"{d.device_kind}:{d.id}" for d in jax.devices()), os.environ.get("XLA_FLAGS", ""),
            source_digest())


def _trace_settings() -> tuple:
    """JAX's settings that change what a function traces to (JAX's own key of its trace cache);
    the public ones that matter where that is not available."""
    import jax

    try:
        from jax._src.config import trace_context
    except ImportError:  # pragma: no cover - another jax's layout
        return tuple(getattr(jax.config, name) for name in (
            "jax_enable_x64", "jax_default_matmul_precision", "jax_numpy_rank_promotion",
            "jax_numpy_dtype_promotion"))
    return trace_context()


def _settings_text(settings: tuple) -> tuple[str, ...]:
    """:func:`_trace_settings` as text that is the same in every process (an object shown by
    its address, such as the axis environment of a call outside any transformation, by its type)."""
    return tuple(type(v).__qualname__ if " at 0x" in repr(v) else repr(v) for v in settings)


def _signature(leaves: Sequence[Any]) -> tuple[str, ...]:
    """Shape, dtype and weak type of each array leaf, as text (``float64[124]``, ``~float64[]``)."""
    import jax

    return tuple(str(jax.typeof(x)) for x in leaves)


class PersistentJit:
    """A function compiled like :func:`jax.jit`, its compiled programs kept on disk (module
    docstring). Call it with the function's arguments, static ones included."""

    def __init__(self, fun: Callable, static_argnums: Sequence[int] = (), key: Any = None,
                 compiler_options: dict[str, Any] | None = None):
        import jax

        self._fun, self._key = fun, fun if key is None else key
        self._static = tuple(sorted(static_argnums))
        self._options = compiler_options
        self._jit = jax.jit(fun, static_argnums=self._static, compiler_options=compiler_options)
        self._loaded: dict[Any, Callable] = {}
        functools.update_wrapper(self, fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import jax

        if _directory is None or kwargs or not jax.config.jax_enable_compilation_cache:
            return self._jit(*args, **kwargs)

        statics = tuple(args[i] for i in self._static)
        dynamic = tuple(a for i, a in enumerate(args) if i not in self._static)
        leaves, tree = jax.tree.flatten(dynamic)
        traced = any(isinstance(x, jax.core.Tracer) for x in leaves)
        if traced or sum(getattr(x, "nbytes", 8) for x in leaves) > KEEP_BYTES:
            return self._jit(*args)
        memo = (statics, tree, _signature(leaves), _trace_settings())
        if memo not in self._loaded:
            self._loaded[memo] = self._load_or_compile(args, statics, memo)
        compiled = self._loaded[memo]
        return self._jit(*args) if compiled is None else compiled(*dynamic)

    def lower(self, *args: Any) -> Any:
        """:meth:`jax.stages.Wrapped.lower` of the function (tracing it)."""
        return self._jit.lower(*args)

    def _load_or_compile(self, args: tuple, statics: tuple, memo: tuple) -> Callable | None:
        """The program of ``args`` read from disk, else compiled and written; None where the
        program has no name (:class:`Unnamed`: :func:`jax.jit` runs it)."""
        try:
            key = repr((_platform(), describe(self._key), describe(statics), str(memo[1]), memo[2],
                        _settings_text(memo[3]), describe(tuple(sorted((self._options or {}).items())))))
        except Unnamed:
            return None
        path = _directory / f"{hashlib.sha256(key.encode()).hexdigest()}.program"
        loaded = _read(path, key)
        if loaded is not None:
            return loaded
        compiled = _compiled_afresh(self._jit, args)
        _keep(path, key, compiled, tuple(a for i, a in enumerate(args) if i not in self._static))
        return compiled


def persistent_jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (), key: Any = None,
                   compiler_options: dict[str, Any] | None = None) -> Any:
    """:func:`jax.jit` whose compiled programs are kept on disk while :func:`directory` is set.

    Args:
        fun: the function (omitted: a decorator with these options).
        static_argnums: as :func:`jax.jit`'s; the static arguments are part of the key.
        key: what names the program besides its arguments (:func:`describe`); default ``fun``,
            which must then be a module-level function of jaxscale (else nothing is kept).
        compiler_options: as :func:`jax.jit`'s.

    Returns:
        A :class:`PersistentJit`.
    """
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if fun is None:
        return functools.partial(persistent_jit, static_argnums=statics, key=key, compiler_options=compiler_options)
    return PersistentJit(fun, statics, key, compiler_options)


def _read(path: Path, key: str) -> Callable | None:
    """The compiled program in ``path`` if it holds the program of ``key``; a file that cannot be
    read back, or holds another key, is deleted (None)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    try:
        from jax.experimental.serialize_executable import deserialize_and_load

        stored, executable, in_tree, out_tree = pickle.loads(blob)
        if stored != key:
            raise ValueError("another program's key")
        loaded = deserialize_and_load(executable, in_tree, out_tree)
    except Exception:  # truncated, another format, another jaxlib's executable: compile again
        with contextlib.suppress(OSError):  # a directory that cannot be written keeps it
            path.unlink(missing_ok=True)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # used: kept by _prune_unused
    return loaded


def _compiled_afresh(jitted: Any, args: tuple) -> Any:
    """``jitted`` compiled for ``args`` by XLA, not read from JAX's persistent cache: an
    executable read from there and serialised again may lack parts of its code (on CPU, jaxlib
    0.10: "Function slice_bitcast_fusion not found" when run after loading)."""
    import jax

    enabled = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        return jitted.lower(*args).compile()
    finally:
        jax.config.update("jax_enable_compilation_cache", enabled)


def _keep(path: Path, key: str, compiled: Any, dynamic: tuple) -> None:
    """Write ``compiled`` to ``path`` if it reads back as a program giving, on the ``dynamic``
    arguments of its first call, the same outputs to the bit; whole (a temporary file renamed)
    or not at all. A program that cannot be serialised or read back, or a directory that cannot
    be written, is only not kept."""
    from jax.experimental.serialize_executable import deserialize_and_load, serialize

    try:
        executable, in_tree, out_tree = serialize(compiled)
        reread = deserialize_and_load(executable, in_tree, out_tree)
        if not _same(reread(*dynamic), compiled(*dynamic)):
            return
        blob = pickle.dumps((key, executable, in_tree, out_tree), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # not serialisable (a local class in its outputs, constants), or not read back: not kept
        return
    try:
        with atomic_path(path) as tmp:
            tmp.write_bytes(blob)
    except OSError:  # a directory that cannot be written: the program is only not kept
        return
    _prune_unused(path.parent)


def _prune_unused(folder: Path, days: float = UNUSED_DAYS) -> None:
    """Delete the program files of ``folder`` not read or written for ``days`` days."""
    import time

    cutoff = time.time() - days * 86400
    for old in folder.glob("*.program"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:  # deleted meanwhile by another process
            pass


def _same(first: Any, second: Any) -> bool:
    """Whether two outputs have the same tree and every leaf the same bytes."""
    import jax
    import numpy as np

    leaves, tree = jax.tree.flatten(first)
    others, other_tree = jax.tree.flatten(second)
    return tree == other_tree and all(np.asarray(a).tobytes() == np.asarray(b).tobytes()
                                      for a, b in zip(leaves, others))
