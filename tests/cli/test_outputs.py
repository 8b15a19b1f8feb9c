"""What a command leaves in ``--out``: complete files or none, one writer at a time, a manifest
last (:mod:`jaxscale.support.atomic`), under a second process and under ``kill -9``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jaxscale.support.atomic import LOCK_FILE, MANIFEST

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def runs_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = np.repeat(np.geomspace(1e7, 1e10, 6), 5)
    d = n * np.tile([3.0, 10.0, 30.0, 100.0, 300.0], 6)
    loss = (1.8 + 480 / n**0.34 + 2000 / d**0.37) * np.exp(0.01 * rng.standard_normal(len(n)))
    path = tmp_path / "runs.csv"
    pd.DataFrame({"N": n, "D": d, "loss": loss}).to_csv(path, index=False)
    return path


def _command(*argv: str | Path) -> list[str]:
    return [sys.executable, "-m", "jaxscale", *map(str, argv)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_a_second_process_writing_the_same_out_is_refused_naming_the_first(runs_csv, tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen(_command("fit", runs_csv, "--bootstrap", "400", "--out", out), env=_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / LOCK_FILE).exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (out / LOCK_FILE).exists(), first.stderr.read() if first.poll() is not None else "no lock"
        second = subprocess.run(_command("fit", runs_csv, "--out", out), env=_env(), capture_output=True, text=True,
                                timeout=300)
        assert second.returncode == 2 and len(second.stderr.strip().splitlines()) == 1
        assert f"being written by another process (pid {first.pid}" in second.stderr
    finally:
        first.wait(timeout=600)
    assert first.returncode == 0 and not (out / LOCK_FILE).exists()
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    assert set(manifest) == {"residuals.png", "isoflop.png", "bootstrap_draws.csv"}


def test_a_refused_command_leaves_no_directory(runs_csv, tmp_path, capsys):
    from jaxscale.cli import main

    assert main(["fit", str(runs_csv), "--method", "approach2", "--likelihood", "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


def _complete(path: Path) -> bool:
    """Whether ``path`` reads whole as what its name says it is."""
    if path.suffix == ".png":
        from matplotlib.image import imread

        return imread(path).size > 0
    if path.suffix == ".csv":
        return len(pd.read_csv(path)) > 0
    if path.suffix == ".json":
        return isinstance(json.loads(path.read_text()), dict)
    if path.suffix == ".nc":
        import arviz as az

        return {"posterior", "sample_stats"} <= set(az.from_netcdf(path).groups())
    return True


def _same_draws(first: Path, second: Path) -> bool:
    """Whether two posterior netCDF files hold the same groups and the same values in each."""
    import arviz as az

    a, b = az.from_netcdf(first), az.from_netcdf(second)
    return set(a.groups()) == set(b.groups()) and all(
        set(a[g].data_vars) == set(b[g].data_vars)
        and all(np.array_equal(a[g][v].values, b[g][v].values, equal_nan=True) for v in a[g].data_vars)
        for g in a.groups())


#: Files that record the run that wrote them beside its numbers: the output directory (in the paths
#: they name) and the wall time (a sweep's summary.json).
RECORDS_ITS_RUN = ("summary.json",)


def _numbers_of(path: Path, out: Path) -> dict:
    """A run's record without what differs between two runs of one command into two directories:
    its wall time, and its output directory in the paths it names."""
    record = json.loads(path.read_text().replace(str(out), "OUT"))
    record.pop("wall_time_s", None)
    return record


def _killed_at_random_then_resumed(argv: list[str], out: Path, kills: int, seed: int) -> None:
    """Run ``argv`` once whole for its duration and files; then ``kills`` times: start it into
    ``out``, kill -9 at a random moment of that duration, and check every file under ``out`` is
    complete (or absent). Finally rerun it to the end: the files equal the whole run's."""
    whole = out.parent / "whole"
    start = time.monotonic()
    subprocess.run([*argv, "--out", str(whole)], env=_env(), check=True, capture_output=True, timeout=1800)
    duration = time.monotonic() - start
    expected = json.loads((whole / MANIFEST).read_text())["files"]
    rng = np.random.default_rng(seed)
    for _ in range(kills):
        proc = subprocess.Popen([*argv, "--out", str(out)], env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * duration)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for path in out.rglob("*"):
            readable = path.is_file() and not path.name.startswith(".") and "tmp" not in str(path.relative_to(out))
            if readable and path.suffix in (".png", ".csv", ".json", ".nc"):
                assert _complete(path), f"{path} is incomplete after a kill"
    subprocess.run([*argv, "--out", str(out)], env=_env(), check=True, capture_output=True, timeout=1800)
    resumed = json.loads((out / MANIFEST).read_text())["files"]
    assert set(resumed) == set(expected)
    for name, entry in expected.items():
        if name.endswith(".nc"):  # a netCDF file records when it was written: its draws must be equal
            assert _same_draws(whole / name, out / name), name
        elif name in RECORDS_ITS_RUN:  # its numbers must be equal; where and how long the run took differ
            assert _numbers_of(whole / name, whole) == _numbers_of(out / name, out), name
        elif not name.endswith(".png"):  # a figure's bytes carry its drawing's metadata; data must be equal
            assert resumed[name]["sha256"] == entry["sha256"], name
    assert not list(out.rglob(".partial-*")), "a killed writer's temporary file was left"


@pytest.mark.slow
def test_fit_out_survives_twenty_kills(runs_csv, tmp_path):
    _killed_at_random_then_resumed(_command("fit", runs_csv, "--bootstrap", "200"), tmp_path / "out", 20, seed=1)


@pytest.mark.slow
def test_bayes_out_survives_twenty_kills(runs_csv, tmp_path):
    argv = _command("bayes", runs_csv, "--chains", "1", "--warmup", "100", "--samples", "100", "--no-progress")
    _killed_at_random_then_resumed(argv, tmp_path / "out", 20, seed=2)


@pytest.mark.slow
def test_word2vec_train_survives_twenty_kills(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(300)]
    weights = np.arange(300, 0, -1) / np.arange(300, 0, -1).sum()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(" ".join(rng.choice(words, 400_000, p=weights)) + "\n")
    argv = _command("word2vec", "train", corpus, "--dim", "16", "--checkpoint-seconds", "0", "--json")
    _killed_at_random_then_resumed(argv, tmp_path / "out", 20, seed=3)


@pytest.mark.slow
def test_a_smoke_sweep_survives_twenty_kills(tmp_path):
    corpus = REPO.parent / "shared" / "data" / "enwiki_30k_articles.txt.gz"
    if not corpus.is_file():
        pytest.skip(f"corpus {corpus} not present (fresh clone without ../shared/data)")
    argv = _command("sweep", "--preset", "smoke", "--corpus", corpus, "--no-progress", "--json")
    _killed_at_random_then_resumed(argv, tmp_path / "out", 20, seed=4)
