"""The word2vec tool's vector file formats (read by gensim's ``KeyedVectors.load_word2vec_format``).

Both start with a header line ``"<count> <dim>\\n"``. Text: one line per word,
``word v1 v2 ... vd``. Binary: per word, the word's UTF-8 bytes, one space, then d little-endian
float32 values, then a newline.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jaxscale.support.atomic import atomic_path


def _check(vectors: np.ndarray, words: Sequence[str]) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(words):
        raise ValueError(f"need one vector row per word; got {vectors.shape} for {len(words)} words")
    for i, w in enumerate(words):
        if not w or any(c.isspace() for c in w):
            raise ValueError(f"word {i} ({w!r}) is empty or contains whitespace")
    return vectors


def save_word2vec(path: str | Path, vectors: np.ndarray, words: Sequence[str], binary: bool = False) -> None:
    """Write ``vectors`` (one row per word) in word2vec text or binary format."""
    vectors = _check(vectors, words)
    header = f"{len(words)} {vectors.shape[1]}\n".encode()
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(header)
        for word, row in zip(words, vectors):
            if binary:
                f.write(word.encode("utf-8") + b" " + row.astype("<f4").tobytes() + b"\n")
            else:
                f.write((word + " " + " ".join(f"{x:.6g}" for x in row) + "\n").encode("utf-8"))


def load_word2vec(path: str | Path, binary: bool = False) -> tuple[np.ndarray, list[str]]:
    """Read a word2vec text or binary file; returns (vectors float32 (n, d), words).

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming the entry that is
    malformed: cut short, not numbers, not finite, or a word given twice.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"vector file not found: {path}")
    with open(path, "rb") as f:
        header = f.readline().split()
        if len(header) != 2 or not all(h.isdigit() for h in header):
            raise ValueError(f"{path}: first line must be '<count> <dim>'; got {b' '.join(header)!r}")
        count, dim = int(header[0]), int(header[1])
        vectors = np.empty((count, dim), dtype=np.float32)
        words = []
        for i in range(count):
            if binary:
                word = b""
                while (c := f.read(1)) != b" ":
                    if not c:
                        raise ValueError(f"{path}: file ends inside entry {i}")
                    word += c
                raw = f.read(4 * dim)
                if len(raw) != 4 * dim:
                    raise ValueError(f"{path}: file ends inside the vector of entry {i} ({word!r})")
                vectors[i] = np.frombuffer(raw, dtype="<f4")
                words.append(word.decode("utf-8").lstrip("\n"))
            else:
                words.append(_text_entry(f.readline(), vectors[i], count, f"{path}: line {i + 2}"))
    _check_entries(vectors, words, path)
    return vectors, words


def _text_entry(line: bytes, row: np.ndarray, count: int, where: str) -> str:
    """Parse one text line ``word v1 ... vd`` into ``row``; returns the word."""
    parts = line.decode("utf-8").split()
    if not parts:
        raise ValueError(f"{where}: the file ends before the {count} vectors its header promises")
    if len(parts) != len(row) + 1:
        raise ValueError(f"{where}: {len(parts) - 1} values, expected {len(row)}")
    try:
        row[:] = np.asarray(parts[1:], dtype=np.float32)
    except ValueError:
        raise ValueError(f"{where}: the values of {parts[0]!r} are not all numbers") from None
    return parts[0]


def _check_entries(vectors: np.ndarray, words: Sequence[str], path: Path) -> None:
    """Every vector finite and every word once (a repeat would be its own nearest neighbour)."""
    bad = np.flatnonzero(~np.isfinite(vectors).all(1))
    if bad.size:
        raise ValueError(f"{path}: the vector of entry {bad[0]} ({words[bad[0]]!r}) is not finite")
    first: dict[str, int] = {}
    for i, w in enumerate(words):
        if first.setdefault(w, i) != i:
            raise ValueError(f"{path}: entry {i} repeats the word {w!r} of entry {first[w]}")
