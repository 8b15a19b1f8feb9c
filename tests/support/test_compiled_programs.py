"""Compiled programs kept on disk (:mod:`jaxscale.support.compiled_programs`): a program read
back gives the results of one traced afresh to the bit, a fit read back the same parameters, and
a bad file (truncated, another program's, another jax's) is never used."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxscale.core import lbfgs
from jaxscale.fitting import approach3
from jaxscale.fitting.objective import DELTA, ROWS_PER_CHUNK, fit_data, huber_objective
from jaxscale.laws import chinchilla as ch
from jaxscale.tables.table import from_arrays
from jaxscale.support import compiled_programs as cp

REPO = Path(__file__).resolve().parents[2]


def _runs(size: int = 60, seed: int = 3):
    rng = np.random.default_rng(seed)
    n = np.exp(rng.uniform(np.log(1e7), np.log(1e10), size))
    d = np.exp(rng.uniform(np.log(1e9), np.log(1e12), size))
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, d, ch.EPOCH)) * np.exp(rng.normal(0.0, 0.01, size))
    return from_arrays(n, d, loss)


@pytest.fixture
def programs(tmp_path, monkeypatch):
    """A fresh program directory for the test (and JAX's persistent cache on, which the suite
    turns off for its own process); none after it, nor the programs it loaded."""
    monkeypatch.setattr(cp, "_directory", tmp_path)
    enabled = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", True)
    yield tmp_path
    jax.config.update("jax_enable_compilation_cache", enabled)
    lbfgs.solver.cache_clear()
    approach3._values.cache_clear()


def test_nothing_is_kept_while_jax_persistent_cache_is_off(programs):
    jax.config.update("jax_enable_compilation_cache", False)
    with jax.enable_x64(True):
        _objective_program()(*_objective_args())
    assert list(programs.glob("*.program")) == []


def _objective_program() -> cp.PersistentJit:
    """The Huber objective of a law as a program kept on disk (a new object: nothing in memory)."""
    return cp.persistent_jit(huber_objective, static_argnums=(2, 3, 4, 5))


def _objective_args():
    runs = _runs()
    data = fit_data((runs.n, runs.d), runs.loss)
    return np.asarray(ch.LAW.to_vector(ch.EPOCH), np.float64), data, ch.LAW, DELTA, None, ROWS_PER_CHUNK


def _no_compiling(*_):
    raise AssertionError("compiled although a kept program was expected to be read")


def _jitted(args):
    with jax.enable_x64(True):
        return np.asarray(jax.jit(huber_objective, static_argnums=(2, 3, 4, 5))(*args))


def test_a_program_read_back_gives_the_jitted_result_to_the_bit(programs, monkeypatch):
    args = _objective_args()
    with jax.enable_x64(True):
        cold = np.asarray(_objective_program()(*args))
        assert len(list(programs.glob("*.program"))) == 1
        monkeypatch.setattr(cp, "_compiled_afresh", _no_compiling)
        warm = np.asarray(_objective_program()(*args))
    assert cold.tobytes() == warm.tobytes() == _jitted(args).tobytes()


@pytest.mark.parametrize("spoil", ["truncated", "another program's key", "not a pickle"])
def test_a_bad_file_is_deleted_and_the_program_compiled_again(programs, spoil):
    args = _objective_args()
    with jax.enable_x64(True):
        _objective_program()(*args)
        (path,) = programs.glob("*.program")
        blob = path.read_bytes()
        if spoil == "truncated":
            path.write_bytes(blob[: len(blob) // 2])
        elif spoil == "another program's key":
            _, *rest = pickle.loads(blob)
            path.write_bytes(pickle.dumps(("another key", *rest)))
        else:
            path.write_bytes(b"garbage")
        again = np.asarray(_objective_program()(*args))
    assert again.tobytes() == _jitted(args).tobytes()
    assert pickle.loads(path.read_bytes())[0] != "another key"  # written again, whole


def test_another_jax_version_compiles_its_own_program(programs, monkeypatch):
    args = _objective_args()
    with jax.enable_x64(True):
        _objective_program()(*args)
        platform = list(cp._platform())
        platform[platform.index(jax.__version__)] = "0.0.0"  # an older jax
        monkeypatch.setattr(cp, "_platform", lambda: tuple(platform))
        compiled = []
        monkeypatch.setattr(cp, "_compiled_afresh", lambda jitted, a: compiled.append(1) or jitted.lower(*a).compile())
        value = np.asarray(_objective_program()(*args))
    assert compiled == [1] and len(list(programs.glob("*.program"))) == 2
    assert value.tobytes() == _jitted(args).tobytes()


def test_what_has_no_name_is_jitted_and_not_kept(programs):
    law = dataclasses.replace(ch.LAW)  # the same functions, but not the registered law
    args = list(_objective_args())
    args[2] = law
    with jax.enable_x64(True):
        value = np.asarray(_objective_program()(*args))
        np.asarray(cp.persistent_jit(lambda x: x + 1.0)(np.ones(3)))
    assert value.tobytes() == _jitted(tuple(args)).tobytes()
    assert list(programs.glob("*.program")) == []


def test_describe_names_registered_laws_partials_and_options_only():
    assert cp.describe(ch.LAW) == ("Law", ("str", repr(ch.LAW.name)))
    bound = functools.partial(huber_objective, law=ch.LAW, delta=DELTA)
    assert cp.describe(bound) == cp.describe(functools.partial(huber_objective, delta=DELTA, law=ch.LAW))
    assert cp.describe(lbfgs.Options()) != cp.describe(lbfgs.Options(max_iter=10))
    for unnamed in (dataclasses.replace(ch.LAW), lambda x: x, np.ones(2), functools.partial(np.sum, axis=0)):
        with pytest.raises(cp.Unnamed):
            cp.describe(unnamed)


def _fit_afresh():
    """Approach 3 with no program in memory (the solver's and the screen's caches emptied)."""
    lbfgs.solver.cache_clear()
    approach3._values.cache_clear()
    return approach3.fit_approach3(_runs(), grid=ch.LAW.init_grid()[::9])  # 500 starts: screened


def test_a_fit_read_back_has_the_parameters_of_a_fit_traced_afresh(programs, monkeypatch):
    cold = _fit_afresh()
    assert len(list(programs.glob("*.program"))) == 2  # the screen and the L-BFGS pool
    with monkeypatch.context() as patched:
        patched.setattr(cp, "_compiled_afresh", _no_compiling)
        warm = _fit_afresh()
    monkeypatch.setattr(cp, "_directory", None)
    plain = _fit_afresh()
    for fit in (warm, plain):
        assert np.asarray(fit.vector).tobytes() == np.asarray(cold.vector).tobytes()
        assert fit.objective == cold.objective and fit.n_converged == cold.n_converged


def test_files_unused_for_weeks_are_deleted_when_a_program_is_written(programs):
    stale, recent = programs / "stale.program", programs / "recent.program"
    for path in (stale, recent):
        path.write_bytes(b"x")
    weeks_ago = time.time() - (cp.UNUSED_DAYS + 1) * 86400
    os.utime(stale, (weeks_ago, weeks_ago))
    with jax.enable_x64(True):
        _objective_program()(*_objective_args())
    assert not stale.exists() and recent.exists()


def test_calls_under_a_transformation_are_jitted_and_not_kept(programs):
    theta, *rest = _objective_args()
    with jax.enable_x64(True):
        program = _objective_program()
        grad = jax.grad(lambda t: program(t, *rest))(theta)
        expected = jax.grad(lambda t: huber_objective(t, *rest))(theta)
    np.testing.assert_allclose(grad, expected, rtol=1e-12)
    assert list(programs.glob("*.program")) == []


def test_the_same_arguments_under_other_jax_settings_are_another_program(programs):
    theta, data, *statics = _objective_args()
    single = lambda x: np.asarray(x, np.float32)  # the same dtypes with 64-bit mode on or off
    args = (single(theta), jax.tree.map(single, data), *statics)
    values = []
    for x64 in (True, False):
        with jax.enable_x64(x64):
            values.append(np.asarray(_objective_program()(*args)))
    assert len(list(programs.glob("*.program"))) == 2
    assert all(np.isfinite(values))


def _fit_command(table: Path, cache: Path | None) -> dict:
    """``jaxscale fit TABLE --json`` in a fresh process, its caches in ``cache`` (none: off), less
    its timings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXSCALE_")}
    env.update(PYTHONPATH=str(REPO), **({"JAXSCALE_CACHE_DIR": str(cache)} if cache else {"JAXSCALE_NO_CACHE": "1"}))
    done = subprocess.run([sys.executable, "-m", "jaxscale", "fit", str(table), "--json"], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=600, check=True)
    return {k: v for k, v in json.loads(done.stdout).items() if k not in ("seconds", "fit_seconds")}


def test_the_command_cold_warm_and_without_cache_prints_the_same_numbers(tmp_path):
    runs = _runs(size=40)
    table = tmp_path / "runs.csv"
    rows = np.column_stack([runs.n, runs.d, runs.loss])
    table.write_text("N,D,loss\n" + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in rows))
    cache = tmp_path / "cache"
    cold = _fit_command(table, cache)
    kept = {path: path.stat().st_ino for path in (cache / "programs").glob("*.program")}
    warm = _fit_command(table, cache)
    assert len(kept) >= 6  # read, not written again (a write replaces the file), and none added:
    assert {path: path.stat().st_ino for path in (cache / "programs").glob("*.program")} == kept
    assert cold == warm == _fit_command(table, None)
