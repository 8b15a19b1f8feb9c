"""Two JAX processes on this machine (coordinator on 127.0.0.1, 2 CPU devices each) train two smoke
models data-parallel over all 4 devices through ``jaxscale sweep``, and their curves must equal
those of one process with 4 devices.

The slow tests (``python -m pytest -m slow tests/lm/test_multiprocess.py``) kill process 1 (SIGKILL)
after the first run's first checkpoint: process 0 must stop soon with a clear message, and
relaunching both must resume from that checkpoint to the same curves. The survivor stops one of two
ways, both bounded: when a JAX operation fails in Python, ``jaxscale sweep`` prints its one-line
error; when it is blocked in a collective that never fails, JAX's coordination service ends it
after the heartbeat timeout, with JAX's fatal line.

Float32 tolerance: the two-process run sums gradients and validation losses across processes
with gloo, in another order than XLA's all-reduce inside one process, so the curves agree to a
few float32 ulps (measured: relative differences up to 6e-7), not bit for bit; rtol 2e-5 is the
tolerance the 8-devices-equal-1-device test uses.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from jaxscale.lm import presets
from jaxscale.lm.sweep import RUNS_TABLE, run_id
from jaxscale.tables import schema as rs

REPO = Path(__file__).resolve().parents[2]
HEARTBEAT_S = 5  # how long the survivor's coordination service waits for a killed process
TIMEOUT_S = 300  # bound on every wait: no test here can hang
STEPS, CHECKPOINT_EVERY = 24, 12
# Two sizes, since the sweep's fits need N to vary; the second is trained for 4 steps only.
SIZES = (dataclasses.replace(presets.SMOKE.sizes[0], steps=STEPS), dataclasses.replace(presets.SMOKE.sizes[1], steps=4))
KILLED_RUN = run_id(SIZES[0], 0.01, "constant")  # the first run, killed after its first checkpoint
CLEAR_MESSAGES = (  # the survivor's last word: ours (a failed collective) or JAX's (a missed heartbeat)
    r"jaxscale sweep: error: process 0 of 2 stopped: a collective failed .* another process has most "
    r"likely died; run \S+: its last checkpoint is kept in \S+; relaunch every process",
    r"Terminating process because the JAX distributed service detected fatal errors\. This most "
    r"likely indicates that another task died",
)


def _write_corpus(path: Path) -> None:
    """About 340k characters of a random Markov chain over 300 made-up words: learnable text."""
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), rng.integers(2, 8))) for _ in range(300)]
    successors = rng.integers(0, len(words), (len(words), 4))
    word, text = 0, []
    for _ in range(60_000):
        word = successors[word, rng.integers(0, 4)] if rng.random() < 0.9 else rng.integers(0, len(words))
        text.append(words[word])
    path.write_text("\n".join(" ".join(text[i : i + 12]) for i in range(0, len(text), 12)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sweep(config: Path, out: Path, log: Path, devices: int, process: tuple[int, int] | None = None,
           progress: bool = False) -> subprocess.Popen:
    """``jaxscale sweep CONFIG --out OUT`` on ``devices`` CPU devices, as process ``(id, port)`` of
    two when given; stdout and stderr go to ``log``.out and ``log``.err."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
           "JAXSCALE_CACHE_DIR": str(config.parent / "xla_cache")}  # fmt: skip
    args = [sys.executable, "-m", "jaxscale", "sweep", str(config), "--out", str(out)]
    args += [] if progress else ["--no-progress"]
    if process is not None:
        index, port = process
        args += ["--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id", str(index),
                 "--heartbeat-timeout", str(HEARTBEAT_S)]  # fmt: skip
    with open(log.with_suffix(".out"), "w") as stdout, open(log.with_suffix(".err"), "w") as stderr:
        return subprocess.Popen(args, env=env, cwd=REPO, stdout=stdout, stderr=stderr)


@contextlib.contextmanager
def _two_processes(config: Path, out: Path, name: str, progress: bool = False) -> Iterator[list[subprocess.Popen]]:
    """Processes 0 and 1 of a two-process sweep, killed on the way out whatever happened."""
    port = _free_port()
    procs = [_sweep(config, out, out.parent / f"{name}{i}", 2, (i, port), progress) for i in range(2)]
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _exit_codes(procs: list[subprocess.Popen], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    return [proc.wait(timeout=max(deadline - time.monotonic(), 0.1)) for proc in procs]


def _stderr(log: Path) -> str:
    return log.with_suffix(".err").read_text()


def _curves(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / RUNS_TABLE)


def _assert_same_curves(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert got[rs.RUN_ID].tolist() == want[rs.RUN_ID].tolist()
    assert got[rs.STEP].tolist() == want[rs.STEP].tolist()
    for column in (rs.TRAIN_LOSS, rs.VAL_LOSS):
        np.testing.assert_allclose(got[column], want[column], rtol=2e-5, err_msg=column)


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    """The sweep config (two smoke models, 24 and 4 steps, one learning rate) and its curves trained
    by one process with 4 devices."""
    root = tmp_path_factory.mktemp("multiprocess")
    _write_corpus(root / "corpus.txt")
    cfg = dataclasses.replace(
        presets.SMOKE, name="two-process", sizes=SIZES, learning_rates=(0.01,), single_lr=0.01, schemes=(1, 2),
        corpus=str(root / "corpus.txt"), corpus_chars=None, eval_every=4, checkpoint_every=CHECKPOINT_EVERY,
    )  # fmt: skip
    config = root / "sweep.json"
    config.write_text(json.dumps(cfg.to_dict()))
    proc = _sweep(config, root / "single", root / "single", devices=4)
    try:
        assert proc.wait(timeout=TIMEOUT_S) == 0, _stderr(root / "single")[-3000:]
    finally:
        proc.kill()
    return config, _curves(root / "single")


@pytest.mark.slow
def test_two_processes_train_the_curves_of_one_process_with_four_devices(setup):
    """Process 0 alone shows progress, as plain lines in its log file, and writes the report."""
    config, reference = setup
    out = config.parent / "two"
    with _two_processes(config, out, "two", progress=True) as procs:
        codes = _exit_codes(procs, TIMEOUT_S)
    logs = [_stderr(out.parent / f"two{i}") for i in range(2)]
    assert codes == [0, 0], [log[-3000:] for log in logs]
    _assert_same_curves(_curves(out), reference)
    assert json.loads((out / "summary.json").read_text())["runs_table"] == str(out / RUNS_TABLE)
    finished = rf"^{re.escape(KILLED_RUN)}: 100% {STEPS}/{STEPS} "
    assert re.search(finished, logs[0], re.MULTILINE) and not re.search(finished, logs[1], re.MULTILINE)
    assert "\r" not in logs[0] and "\x1b" not in logs[0]


@pytest.fixture(scope="module")
def killed(setup) -> SimpleNamespace:
    """A two-process sweep whose process 1 is killed after the first run's first checkpoint, and
    its relaunch: exit codes, the survivor's seconds to stop and the logs of process 0."""
    config, _ = setup
    out = config.parent / "killed"
    checkpoint = out / "runs" / KILLED_RUN / "checkpoints" / str(CHECKPOINT_EVERY)
    with _two_processes(config, out, "killed") as procs:
        deadline = time.monotonic() + TIMEOUT_S
        while not checkpoint.is_dir() and time.monotonic() < deadline and procs[0].poll() is None:
            time.sleep(0.02)
        assert checkpoint.is_dir(), _stderr(out.parent / "killed0")[-3000:]
        procs[1].send_signal(signal.SIGKILL)
        start = time.monotonic()
        survivor = procs[0].wait(timeout=TIMEOUT_S)
        stopped_after = time.monotonic() - start
    finished = (out / "runs" / KILLED_RUN / "done.json").exists()
    with _two_processes(config, out, "resumed", progress=True) as procs:
        relaunched = _exit_codes(procs, TIMEOUT_S)
    return SimpleNamespace(
        out=out, survivor=survivor, stopped_after=stopped_after, finished_before_kill=finished,
        survivor_log=_stderr(out.parent / "killed0"), relaunched=relaunched,
        relaunch_logs=[_stderr(out.parent / f"resumed{i}") for i in range(2)],
    )  # fmt: skip


@pytest.mark.slow
def test_a_killed_process_stops_the_other_with_a_clear_message(killed):
    assert not killed.finished_before_kill, "the run ended before the kill"
    assert killed.survivor != 0 and killed.stopped_after < HEARTBEAT_S + 30, (killed.survivor, killed.stopped_after)
    assert any(re.search(message, killed.survivor_log) for message in CLEAR_MESSAGES), killed.survivor_log[-3000:]


@pytest.mark.slow
def test_a_relaunch_resumes_from_the_checkpoint_to_the_curves_of_one_process(setup, killed):
    _, reference = setup
    assert killed.relaunched == [0, 0], [log[-3000:] for log in killed.relaunch_logs]
    first_line = re.search(rf"^{re.escape(KILLED_RUN)}: +\d+% (\d+)/{STEPS} ", killed.relaunch_logs[0], re.MULTILINE)
    assert first_line is not None and int(first_line.group(1)) >= CHECKPOINT_EVERY, "the relaunch did not resume"
    _assert_same_curves(_curves(killed.out), reference)
