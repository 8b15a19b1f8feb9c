"""Corpus files are UTF-8 text or refused in one line naming the file and the problem."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from jaxscale.support.corpus import SNIFF_BYTES, CorpusError, iter_lines

TEXT = "The quick brown fox jumps over the lazy dog.\nCafé, naïve, Zürich.\n" * 50


def _lines(path):
    return list(iter_lines(path))


@pytest.mark.parametrize("name, data, problem", [
    ("utf16.txt", TEXT.encode("utf-16"), "UTF-16 text (byte-order mark FF FE)"),
    ("utf16be.txt", TEXT.encode("utf-16-be"), "UTF-16 text (NUL bytes at every other position)"),
    ("utf32.txt", TEXT.encode("utf-32"), "UTF-32 text (byte-order mark FF FE 00 00)"),
    ("random.bin", np.random.default_rng(0).bytes(5000), "binary content (NUL byte at offset"),
    ("latin1.txt", TEXT.encode("latin-1"), "not UTF-8 text (byte 0xe9 at offset 48)"),
    ("truncated.txt.gz", gzip.compress(TEXT.encode() * 20, mtime=0)[:300], "the gzip stream ends early"),
    ("plain.txt.gz", TEXT.encode(), "not a valid gzip file"),
], ids=lambda x: x if isinstance(x, str) and len(x) < 20 else "")
def test_text_that_is_not_utf8_is_refused_naming_file_and_problem(tmp_path, name, data, problem):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(CorpusError) as err:
        _lines(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and problem in message and "\n" not in message


def test_problems_past_the_first_block_are_refused_when_reached(tmp_path):
    good = ("plain ascii words " * 100 + "\n").encode()
    late = tmp_path / "late.txt"
    late.write_bytes(good * (2 * SNIFF_BYTES // len(good)) + "café\n".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"late.txt: not UTF-8 text past its start \(byte 0xe9\)"):
        _lines(late)
    whole = gzip.compress(np.random.default_rng(1).integers(97, 123, 4 * SNIFF_BYTES, np.uint8).tobytes())
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(whole[: len(whole) * 3 // 4])
    with pytest.raises(CorpusError, match="cut.txt.gz: the gzip stream ends early"):
        _lines(cut)


def test_utf8_text_with_or_without_mark_and_compressed_reads_back(tmp_path):
    plain, marked, packed = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt.gz"
    plain.write_text(TEXT, encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + TEXT.encode())
    packed.write_bytes(gzip.compress(TEXT.encode()))
    expected = TEXT.splitlines()
    assert _lines(plain) == _lines(marked) == _lines(packed) == expected
    assert "".join(iter_lines(plain, keep_newlines=True)) == TEXT


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="corpus not found"):
        _lines(tmp_path / "missing.txt")
    with pytest.raises(CorpusError, match="is a directory or device, not a file"):
        _lines(tmp_path)
