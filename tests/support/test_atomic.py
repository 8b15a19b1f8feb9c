"""Files complete or absent, and one writer per output directory (:mod:`jaxscale.support.atomic`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from jaxscale.support.atomic import LOCK_FILE, OutputLock, atomic_path, write_text_atomic


def test_a_file_appears_only_when_complete_and_an_error_leaves_the_old_one(tmp_path):
    path = tmp_path / "out" / "table.csv"
    with atomic_path(path) as tmp:
        tmp.write_text("a,b\n")
        assert not path.exists()  # nothing under the real name while it is written
    assert path.read_text() == "a,b\n"
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed mid-write")
    assert path.read_text() == "a,b\n" and os.listdir(path.parent) == ["table.csv"]
    assert write_text_atomic(path, "c\n").read_text() == "c\n"


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / LOCK_FILE).write_text(json.dumps({"pid": holder.pid, "host": os.uname().nodename,
                                                      "command": "jaxscale fit runs.csv --out o", "since": "now"}))
        with pytest.raises(ValueError, match=rf"being written by another process \(pid {holder.pid} .*jaxscale fit"):
            OutputLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    with OutputLock(tmp_path) as lock:  # its holder is gone: the lock is taken over
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
        with OutputLock(tmp_path):  # the same process again: not refused, and not released early
            pass
        assert lock.path.exists()
    assert not (tmp_path / LOCK_FILE).exists()


def test_an_unreadable_lock_is_refused_not_taken(tmp_path):
    (tmp_path / LOCK_FILE).write_text("")
    with pytest.raises(ValueError, match="being written by another process"):
        OutputLock(tmp_path).acquire()
