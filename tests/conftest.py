"""Shared fixtures. Data files live in ../shared/data beside the clone (CI has them); on a fresh
user clone without them, tests that need them skip with a reason."""

from __future__ import annotations

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
    (``main([...])``) would otherwise turn the disk cache on for every later test, and serializing
    one of the hundreds of executables a whole run has compiled by then crashed XLA (a segfault in
    ``put_executable_and_time``, seen once at 83% of a run, never alone)."""
    if "JAXSCALE_CACHE_DIR" not in os.environ:
        directory = tempfile.mkdtemp(prefix="jaxscale-tests-xla-")
        os.environ["JAXSCALE_CACHE_DIR"] = directory
        config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))
    jax.config.update("jax_enable_compilation_cache", False)


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
