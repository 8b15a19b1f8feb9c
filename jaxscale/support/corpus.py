"""Reading plain-text corpora (``.txt`` or gzip-compressed ``.txt.gz``), checked as they are read.

A corpus is UTF-8 text. Anything else is refused with one line naming the file and the problem
(:class:`CorpusError`, a ``ValueError``) instead of being trained on as replacement characters;
both wings read the corpus (or the prefix they use) whole before training starts, so the
refusal comes before any training:

- a UTF-16 or UTF-32 byte-order mark, or NUL bytes at every other position (UTF-16 without one);
- binary content: NUL bytes, or bytes that are not UTF-8 among many control characters;
- other text that is not UTF-8 (Latin-1, Windows-1252, ...): the first bad byte and its offset;
- a ``.gz`` file that ends early (a truncated copy) or is not gzip at all.

The first :data:`SNIFF_BYTES` bytes of text are examined when the file is opened, the rest as
it is read. A UTF-8 byte-order mark is allowed and skipped.
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

#: Bytes of (decompressed) text examined when a corpus is opened.
SNIFF_BYTES = 1 << 16
#: Byte-order marks of the encodings that are not UTF-8 (UTF-32 first: its LE mark starts with UTF-16's).
_OTHER_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)  # fmt: skip
#: Control bytes that text does not hold (all below 0x20 but tab, newlines, form feed; and DEL).
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\v\f\r") + b"\x7f"


class CorpusError(ValueError):
    """A corpus file that is not readable UTF-8 text; the message names the file and the problem."""


def _open_bytes(path: Path) -> BinaryIO:
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def _encoding_problem(head: bytes) -> str | None:
    """What makes ``head``, the first bytes of a corpus, something other than UTF-8 text; None
    when nothing does (a multi-byte character cut at the end of ``head`` is not a problem)."""
    for mark, name in _OTHER_BOMS:
        if head.startswith(mark):
            return f"{name} text (byte-order mark {mark.hex(' ').upper()}), not UTF-8; convert it to UTF-8"
    if b"\0" in head:
        nuls = sorted((head[0::2].count(0), head[1::2].count(0)))
        if nuls[1] > len(head) // 4 and nuls[0] < len(head) // 40:  # one parity mostly NUL, the other not
            return "UTF-16 text (NUL bytes at every other position), not UTF-8; convert it to UTF-8"
        return f"binary content (NUL byte at offset {head.index(0)}), not text"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as err:
        if sum(map(head.count, _CONTROL)) > len(head) // 100:
            return f"binary content (control bytes, byte 0x{head[err.start]:02x} at offset {err.start}), not text"
        return f"not UTF-8 text (byte 0x{head[err.start]:02x} at offset {err.start}); convert it to UTF-8"
    return None


@contextlib.contextmanager
def _read_errors(path: Path) -> Iterator[None]:
    """Turn the errors of reading ``path`` into one :class:`CorpusError` line naming it."""
    try:
        yield
    except UnicodeDecodeError as err:
        raise CorpusError(f"{path}: not UTF-8 text past its start (byte 0x{err.object[err.start]:02x}); "
                          "convert it to UTF-8") from None
    except EOFError:
        raise CorpusError(f"{path}: the gzip stream ends early (a truncated file?); copy it again") from None
    except (gzip.BadGzipFile, zlib.error) as err:
        raise CorpusError(f"{path}: not a valid gzip file ({err})") from None


def _open_text(path: Path) -> io.TextIOBase:
    """Open a corpus as UTF-8 text, transparently decompressing ``.gz`` files, once its start
    passed the checks (the module lists them)."""
    if not path.exists():
        raise FileNotFoundError(f"corpus not found: {path}")
    if not path.is_file():
        raise CorpusError(f"{path}: the corpus is a directory or device, not a file")
    with _read_errors(path), _open_bytes(path) as raw:
        problem = _encoding_problem(raw.read(SNIFF_BYTES))
    if problem is not None:
        raise CorpusError(f"{path}: {problem}")
    return io.TextIOWrapper(_open_bytes(path), encoding="utf-8-sig", errors="strict")


def iter_lines(path: str | Path, keep_newlines: bool = False) -> Iterator[str]:
    """Yield the lines of a corpus (``.txt`` or ``.txt.gz``), without their trailing newline
    unless ``keep_newlines``.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        CorpusError: ``path`` is not a file, or is not UTF-8 text (the module lists the checks):
            at once for its start, on reaching the problem for the rest.
    """
    path = Path(path)
    with _open_text(path) as f, _read_errors(path):
        for line in f:
            yield line if keep_newlines else line.rstrip("\n")
