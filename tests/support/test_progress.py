"""Progress bars: tqdm on a terminal, a bounded number of plain lines in a log (CI, ``2> log``)."""

import os
import subprocess
import sys
from pathlib import Path

from tqdm.std import tqdm

from jaxscale.support import progress
from jaxscale.support.progress import LineProgress, progress_bar

REPO = Path(__file__).resolve().parents[2]


def _assert_plain(text: str) -> None:
    assert "\r" not in text and "\x1b" not in text, repr(text[:500])


def test_lines_at_the_start_each_tenth_and_the_end_with_the_latest_postfix(capsys):
    bar = LineProgress(total=1000, desc="run")
    for i in range(1000):
        bar.set_postfix({"loss": f"{i:.1f}"})
        bar.update(1)
    bar.close()
    err = capsys.readouterr().err
    _assert_plain(err)
    lines = err.splitlines()
    assert len(lines) == 11
    assert lines[0].startswith("run:   0% 0/1000 [") and lines[5].startswith("run:  50% 500/1000 [")
    assert lines[-1].startswith("run: 100% 1000/1000 [") and lines[-1].endswith("loss=999.0]")


def test_iterating_a_short_list_writes_a_line_per_item_and_closes(capsys):
    assert list(LineProgress(["a", "b", "c"], desc="grid")) == ["a", "b", "c"]
    lines = capsys.readouterr().err.splitlines()
    counts = ["grid:   0% 0/3", "grid:  33% 1/3", "grid:  67% 2/3", "grid: 100% 3/3"]
    assert [line.split(" [")[0] for line in lines] == counts


def test_a_resumed_bar_starts_at_its_initial_count_and_a_stopped_one_ends_where_it_stopped(capsys):
    bar = LineProgress(total=100, initial=40, desc="run")
    bar.update(5)
    bar.close()
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" [")[0] for line in lines] == ["run:  40% 40/100", "run:  45% 45/100"]


def test_progress_bar_is_tqdm_on_a_terminal_or_when_disabled_and_lines_elsewhere(monkeypatch, capsys):
    monkeypatch.setattr(progress, "interactive", lambda: True)
    assert isinstance(progress_bar(total=3, desc="x"), tqdm)
    monkeypatch.setattr(progress, "interactive", lambda: False)
    assert isinstance(progress_bar(total=3, desc="x"), LineProgress)
    assert isinstance(progress_bar(total=3, desc="x", disable=True), tqdm)


def test_a_training_run_logged_to_a_pipe_writes_a_few_plain_lines(tmp_path):
    code = """
import sys
import numpy as np
from jaxscale.networks.transformer import TransformerConfig
from jaxscale.lm.tokens import TokenBatches
from jaxscale.lm import train as lm
model = TransformerConfig(vocab_size=64, n_ctx=8, n_layer=1, d_model=16, n_head=2)
spec = lm.RunSpec("tiny", model, lm.Schedule(1e-2, 60, 2, "cosine"), batch_size=8, eval_every=2,
                  checkpoint_every=30, val_batches=2)
ids = np.random.default_rng(0).integers(0, 64, 20_000).astype(np.uint16)
lm.train(spec, TokenBatches(ids, 8, 8), sys.argv[1], progress=True)
"""
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    _assert_plain(proc.stderr)
    lines = proc.stderr.splitlines()
    assert 2 <= len(lines) <= 12, lines
    assert lines[0].startswith("tiny:   0% 0/60 [") and lines[-1].startswith("tiny: 100% 60/60 [")
    assert "loss=" in lines[-1] and "tok/s=" in lines[-1]
