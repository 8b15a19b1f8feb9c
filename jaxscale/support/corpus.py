"""Reading plain-text corpora (``.txt`` or gzip-compressed ``.txt.gz``)."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path


def open_text(path: str | Path) -> io.TextIOBase:
    """Open a UTF-8 text corpus for reading, transparently decompressing ``.gz`` files.

    Raises ``FileNotFoundError`` naming the path if it does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"corpus not found: {path}")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, "rt", encoding="utf-8", errors="replace")


def iter_lines(path: str | Path) -> Iterator[str]:
    """Yield the lines of a corpus without their trailing newline."""
    with open_text(path) as f:
        for line in f:
            yield line.rstrip("\n")


def read_text(path: str | Path, max_chars: int | None = None) -> str:
    """The corpus as one string, optionally only its first ``max_chars`` characters."""
    with open_text(path) as f:
        return f.read() if max_chars is None else f.read(max_chars)
