"""Shared fixtures. Data files live in ../shared/data beside the clone (CI has them); on a fresh
user clone without them, tests that need them skip with a reason."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from pathlib import Path

import jax
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def pytest_configure(config: pytest.Config) -> None:
    """The suite compiles into a cache of its own (removed at the end), not the user's
    ~/.cache/jaxscale/xla: what one session's commands and their subprocesses compile, the rest
    reuse, and no other process's entries, written meanwhile or by other XLA settings, are read.
    A cache the caller names with JAXSCALE_CACHE_DIR is used as it is.

    The pytest process itself keeps its compiled programs in memory only: commands run in it
    (``main([...])``) would otherwise turn the disk cache on for every later test, depending on
    the order the tests ran in."""
    if "JAXSCALE_CACHE_DIR" not in os.environ:
        directory = tempfile.mkdtemp(prefix="jaxscale-tests-xla-")
        os.environ["JAXSCALE_CACHE_DIR"] = directory
        config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))
    jax.config.update("jax_enable_compilation_cache", False)


# Linux refuses a process more than vm.max_map_count (65,530 by default) memory maps, and every
# program XLA compiles for the CPU holds a few of its own: a whole run compiles thousands, passed
# that count about three quarters of the way through and died with a segfault inside XLA (in
# whatever test compiled next). Between test modules, once the count passes this, the compiled
# programs are dropped (jax.clear_caches) and the next module compiles what it needs again.
_MAPS_BEFORE_CLEARING = 30_000


def _memory_maps() -> int:
    try:
        with open("/proc/self/maps", "rb") as maps:
            return sum(1 for _ in maps)
    except OSError:  # not Linux: no such limit to keep under
        return 0


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    next_module = getattr(nextitem, "module", None)
    if nextitem is not None and next_module is not getattr(item, "module", None) \
            and _memory_maps() > _MAPS_BEFORE_CLEARING:
        jax.clear_caches()
        gc.collect()


def shared_data_file(name: str) -> Path:
    """Path of a file in ../shared/data, or skip the calling test if it is absent."""
    path = SHARED_DATA / name
    if not path.is_file():
        pytest.skip(f"{path} not found: the shared data folder sits beside the clone in CI only")
    return path


@pytest.fixture
def x64():
    """Run the test with JAX 64-bit types enabled (the laws' and fits' precision)."""
    with jax.enable_x64(True):
        yield
