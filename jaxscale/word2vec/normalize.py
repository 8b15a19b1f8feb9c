"""A text8-style normaliser for raw prose (Matt Mahoney's ``wikifil.pl`` rules, as used for text8).

Rules, applied in order: markup tags ``<...>`` are dropped; letters are lowercased; each digit is
spelled out as its English word (``"1984"`` -> ``"one nine eight four"``); every other character
(punctuation, non-ASCII letters, newlines) becomes a space; runs of spaces collapse to one. The
result is a single stream of ``[a-z]+`` words separated by single spaces, which is what the
word2vec papers' tools (and gensim's ``Text8Corpus``) consume.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

from jaxscale.support.corpus import iter_lines

_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TAG = re.compile(rb"<[^<>\n]{0,200}>")


def _byte_table() -> bytes:
    table = bytearray(b" " * 256)
    for c in range(ord("a"), ord("z") + 1):
        table[c] = c
        table[c - 32] = c  # uppercase -> lowercase
    for c in range(ord("0"), ord("9") + 1):
        table[c] = c
    return bytes(table)


_TABLE = _byte_table()


def normalize_text8(text: str) -> str:
    """Normalise ``text`` to text8 form: ``[a-z]+`` words separated by single spaces.

    >>> normalize_text8("In 1984, <b>Orwell</b> wrote: Ça va?")
    'in one nine eight four orwell wrote a va'
    """
    raw = _TAG.sub(b" ", text.encode("ascii", "replace")).translate(_TABLE)
    for digit, word in enumerate(_DIGIT_WORDS):
        raw = raw.replace(str(digit).encode(), f" {word} ".encode())
    return " ".join(raw.decode("ascii").split())


def iter_text8_chunks(
    path: str | Path, max_chars: int | None = None, chunk_lines: int = 20_000
) -> Iterator[str]:
    """Normalise a corpus file in chunks of lines, yielding text8 text.

    Chunks are joined by single spaces by the caller (each chunk is stripped). With
    ``max_chars`` the stream stops after that many characters of *normalised* text (counting the
    separating spaces), cut back to a whole word, as text8 is the first 10^8 bytes of normalised
    Wikipedia.
    """
    if max_chars is not None and max_chars <= 0:
        raise ValueError(f"max_chars must be > 0; got {max_chars}")
    budget = max_chars
    with contextlib.closing(iter_lines(path, keep_newlines=True)) as all_lines:
        while True:
            lines = list(itertools.islice(all_lines, chunk_lines))
            if not lines:
                return
            text = normalize_text8(" ".join(lines))
            if not text:
                continue
            if budget is not None:
                if len(text) >= budget:
                    cut = text[:budget]
                    if len(text) > budget and text[budget] != " ":
                        cut = cut.rsplit(" ", 1)[0] if " " in cut else ""
                    if cut:
                        yield cut
                    return
                budget -= len(text) + 1
            yield text


def read_text8_words(path: str | Path, max_chars: int | None = None) -> list[str]:
    """The words of a corpus file after text8 normalisation (optionally its first ``max_chars``)."""
    words: list[str] = []
    for chunk in iter_text8_chunks(path, max_chars):
        words.extend(chunk.split())
    return words
