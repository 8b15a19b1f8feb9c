"""The persistent compilation cache follows JAXSCALE_CACHE_DIR / JAXSCALE_NO_CACHE, and
``jaxscale reconcile`` imports only what it needs, both checked in fresh processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxscale.support.compilation_cache import DEFAULT_CACHE_DIR, cache_dir

REPO = Path(__file__).resolve().parents[2]
#: Packages of other commands (Bayesian inference, training) that reconcile must not import.
HEAVY = ("numpyro", "arviz", "flax", "optax", "pandas")

COMPILE_ONE_PROGRAM = """
import jax
from jaxscale.support.compilation_cache import enable_compilation_cache
print(enable_compilation_cache())
jax.jit(lambda x: x * 2.0 + 1.0)(jax.numpy.arange(3.0)).block_until_ready()
"""

RECONCILE_AND_LIST_MODULES = """
import contextlib, io, json, sys
from jaxscale.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    status = main(["reconcile", "--json", "--out", sys.argv[1]])
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


def _python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JAXSCALE_")}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO, env={**clean, "PYTHONPATH": str(REPO), **env})


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, DEFAULT_CACHE_DIR),
        ({"JAXSCALE_CACHE_DIR": "/tmp/x"}, Path("/tmp/x")),
        ({"JAXSCALE_CACHE_DIR": ""}, None),
        ({"JAXSCALE_NO_CACHE": "1"}, None),
        ({"JAXSCALE_NO_CACHE": "1", "JAXSCALE_CACHE_DIR": "/tmp/x"}, None),
        ({"JAXSCALE_NO_CACHE": "0", "JAXSCALE_CACHE_DIR": "/tmp/x"}, Path("/tmp/x")),
    ],
)
def test_cache_dir_from_environment(environ, expected):
    assert cache_dir(environ) == expected


def test_cache_dir_receives_compiled_programs(tmp_path):
    proc = _python(COMPILE_ONE_PROGRAM, JAXSCALE_CACHE_DIR=str(tmp_path / "xla"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(tmp_path / "xla")]
    assert any((tmp_path / "xla").iterdir()), "a program compiled in well under a second was not cached"


def test_no_cache_writes_nothing(tmp_path):
    proc = _python(COMPILE_ONE_PROGRAM, JAXSCALE_CACHE_DIR=str(tmp_path / "xla"), JAXSCALE_NO_CACHE="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None"]
    assert not (tmp_path / "xla").exists()


def test_reconcile_imports_only_what_it_needs(tmp_path):
    """No inference or training package, and the figures through ``matplotlib.figure`` alone
    (no pyplot, whose import picks a backend and loads much more)."""
    proc = _python(RECONCILE_AND_LIST_MODULES, str(tmp_path / "figs"), JAXSCALE_CACHE_DIR=str(tmp_path / "xla"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == 0
    loaded = {name.split(".")[0] for name in out["modules"]}
    assert {"jaxscale", "jax", "matplotlib"} <= loaded  # the check looks at the right process
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert "matplotlib.pyplot" not in out["modules"]
    assert len(list((tmp_path / "figs").glob("*.png"))) == 4
    assert any("_numbers" in p.name for p in (tmp_path / "xla").iterdir())
