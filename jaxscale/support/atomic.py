"""Files that are complete or absent, and one writer per output directory.

A process killed while it writes (``kill -9``, a lost Colab runtime, a full disk) must leave no
half-written file that a later reader takes for a whole one: a netCDF posterior cut at 10 of its
18 MB still opens and holds only some of its groups. So every file a command writes is written
under a temporary name in the same directory and renamed onto its own name once complete
(:func:`atomic_path`): a rename within one file system is atomic on POSIX, so a reader sees the
old file or the new one, never a part.

Two processes writing one ``--out`` would each report the same files as theirs while the last
writer's silently win. :class:`OutputLock` makes the first one the owner of the directory for as
long as it writes: a lock file ``.jaxscale.lock`` created exclusively, naming the holder (process
id, host, command, start time). A second process is refused in one line naming the holder; a lock
left by a process that no longer runs on this host is taken over (a kill leaves its lock behind),
and so are the temporary files such a process left anywhere under the directory: they are
removed, so that after a kill every file present is complete. A lock that made its directory
removes the directory on release if nothing else was written there (a command refused before
any work leaves no trace).

Where a directory's writing is done, :func:`write_manifest` writes ``manifest.json`` last: each
file's size and SHA-256, so a reader can tell a finished output from an interrupted one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

#: The lock file of an output directory.
LOCK_FILE = ".jaxscale.lock"
#: Prefix of the temporary names (hidden; a leftover one is never read as output).
_TEMPORARY = ".partial-"
#: The manifest of a finished output directory (:func:`write_manifest`).
MANIFEST = "manifest.json"


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` when the block ends
    without an exception, removed when it raises.

    >>> with atomic_path("out/table.csv") as tmp:   # doctest: +SKIP
    ...     frame.to_csv(tmp)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{_TEMPORARY}{os.getpid()}-{path.name}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through :func:`atomic_path`; the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def _holder() -> dict[str, object]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "command": " ".join(sys.argv)[:300],
            "since": time.strftime("%Y-%m-%d %H:%M:%S")}


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def check_writable(out: str | Path, name: str) -> None:
    """``out`` can be an output directory: a directory, or a path that can be made one (its
    nearest existing ancestor is a writable directory).

    Args:
        out: the directory.
        name: how the caller's user named it (``--out``, ``out``), at the start of the message.

    Raises:
        ValueError: it cannot, in one line naming ``name`` and ``out``.
    """
    path = Path(out)
    existing = next(p for p in (path, *path.absolute().parents) if p.exists())
    if existing is path and not path.is_dir():
        raise ValueError(f"{name} {out}: exists and is not a directory")
    if not existing.is_dir():
        raise ValueError(f"{name} {out}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {out}: cannot write in {existing} (permission denied)")


class OutputLock:
    """The right of one process to write into ``directory`` (module docstring). Re-entrant within
    the process that holds it; released by :meth:`release` or at the end of a ``with`` block.

    Raises (on :meth:`acquire`):
        ValueError: another running process holds the directory (one line naming it).
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        self._depth = 0
        self._owner = False
        self._made_directory = False

    def acquire(self) -> OutputLock:
        if self._depth:
            self._depth += 1
            return self
        self._made_directory = not self.directory.exists()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._owner = self._create() or self._create_after_dead_holder()
        if self._owner:
            _remove_dead_temporaries(self.directory)
        self._depth = 1
        return self

    def release(self) -> None:
        if not self._depth:
            return
        self._depth -= 1
        if not self._depth and self._owner:
            self.path.unlink(missing_ok=True)
            if self._made_directory and not any(self.directory.iterdir()):
                self.directory.rmdir()

    def _create(self) -> bool:
        """Create the lock file naming this process; False if it exists."""
        try:
            descriptor = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(descriptor, "w") as handle:
            json.dump(_holder(), handle)
        return True

    def _create_after_dead_holder(self) -> bool:
        """The lock exists: this process's own (False: another lock object of this process owns
        it), a dead holder's on this host (taken over), or a live holder's (refused)."""
        holder = self._read_holder()
        pid, here = holder.get("pid"), holder.get("host") == socket.gethostname()
        if here and pid == os.getpid():
            return False
        if here and isinstance(pid, int) and pid > 0 and not _running(pid):
            self.path.unlink(missing_ok=True)  # left by a process that was killed
            if self._create():
                return True
        raise ValueError(
            f"{self.directory} is being written by another process (pid {pid} on {holder.get('host')}, since "
            f"{holder.get('since')}: {holder.get('command')}); wait for it or choose another --out (remove "
            f"{self.path} if that process is gone)")

    def _read_holder(self) -> dict[str, object]:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):  # being written this instant, or not ours: an unknown holder
            return {}

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _remove_dead_temporaries(directory: Path) -> None:
    """Remove the temporary files (:func:`atomic_path`) under ``directory`` of processes that no
    longer run: a kill left them half-written."""
    for path in directory.rglob(f"{_TEMPORARY}*"):
        pid = path.name[len(_TEMPORARY):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            path.unlink(missing_ok=True)


def write_manifest(directory: str | Path, files: list[str | Path]) -> Path:
    """Write ``directory/manifest.json``, last: each of ``files`` (relative to ``directory``, or
    paths under it) with its size in bytes and SHA-256, beside the files an earlier manifest there
    listed that are still present (a command that adds to an output, such as a sweep's report
    beside its runs table, keeps the earlier entries, measured again)."""
    directory = Path(directory)
    previous = directory / MANIFEST
    listed = json.loads(previous.read_text())["files"] if previous.is_file() else {}
    paths = [directory / name for name in listed if (directory / name).is_file()]
    paths += [Path(f) if Path(f).is_absolute() or Path(f).parent != Path(".") else directory / f for f in files]
    entries = {}
    for path in paths:
        name = str(path.relative_to(directory)) if path.is_relative_to(directory) else str(path)
        entries[name] = {"bytes": path.stat().st_size, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return write_text_atomic(previous, json.dumps({"files": entries}, indent=1))
