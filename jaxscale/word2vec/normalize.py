"""How a corpus becomes words: the text8 normaliser for English prose, and two plainer ones.

:data:`NORMALIZERS` names them (``jaxscale word2vec train --normalize NAME``):

- ``"text8"`` (the default, for English prose such as the Wikipedia corpus: the word2vec papers'
  analogy and similarity sets are lowercase English words): Matt Mahoney's ``wikifil.pl`` rules,
  as used for text8, below;
- ``"lower"``: lowercased words of Unicode letters and digits (``\\w+``), so "Straße" stays
  "straße" and "w123" stays a word; punctuation separates words;
- ``"none"``: the corpus's own whitespace-separated tokens, as they are.

text8's rules, applied in order: markup tags ``<...>`` are dropped; letters are lowercased; each digit is
spelled out as its English word (``"1984"`` -> ``"one nine eight four"``); every other character
(punctuation, non-ASCII letters, newlines) becomes a space; runs of spaces collapse to one. The
result is a single stream of ``[a-z]+`` words separated by single spaces, which is what the
word2vec papers' tools (and gensim's ``Text8Corpus``) consume. On text that is not English prose
they lose words: tokens such as ``w123`` or ``Straße`` break into digits and fragments, and a
corpus of such tokens collapses to a handful of words. :func:`read_words` warns when the
normalised vocabulary keeps under :data:`COLLAPSE_FRACTION` of the distinct raw tokens.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import warnings
from collections.abc import Callable, Iterator
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


_WORD = re.compile(r"\w+")


def normalize_lower(text: str) -> str:
    """Lowercased words of letters and digits, any script, separated by single spaces.

    >>> normalize_lower("In 1984, Straße w123!")
    'in 1984 straße w123'
    """
    return " ".join(_WORD.findall(text.lower()))


def normalize_none(text: str) -> str:
    """The whitespace-separated tokens of ``text`` as they are, separated by single spaces."""
    return " ".join(text.split())


#: The normalisers by name (module docstring); ``"text8"`` is the default.
NORMALIZERS: dict[str, Callable[[str], str]] = {"text8": normalize_text8, "lower": normalize_lower,
                                                 "none": normalize_none}
#: A normalised vocabulary under this fraction of the raw text's distinct tokens is warned about
#: (module docstring). English prose keeps most of its distinct tokens under text8 (punctuation
#: glued to a word is what it merges); declared at a tenth.
COLLAPSE_FRACTION = 0.1
#: Lines at the start of a corpus on which a collapse is judged.
COLLAPSE_SAMPLE_LINES = 20_000
#: Raw distinct tokens below which no collapse is judged (a toy corpus).
_COLLAPSE_MIN_TOKENS = 100


def normalizer(name: str) -> Callable[[str], str]:
    """The normaliser named ``name`` (:data:`NORMALIZERS`).

    Raises:
        ValueError: an unknown name, listing the known ones.
    """
    if name not in NORMALIZERS:
        raise ValueError(f"normalize must be one of {', '.join(NORMALIZERS)}; got {name!r}")
    return NORMALIZERS[name]


class VocabularyCollapse(UserWarning):
    """Normalisation kept few of the corpus's distinct tokens (module docstring)."""


def iter_normalized_chunks(
    path: str | Path, max_chars: int | None = None, chunk_lines: int = 20_000, normalize: str = "text8",
) -> Iterator[str]:
    """Normalise a corpus file in chunks of lines, yielding normalised text (text8 by default).

    Chunks are joined by single spaces by the caller (each chunk is stripped). With
    ``max_chars`` the stream stops after that many characters of *normalised* text (counting the
    separating spaces), cut back to a whole word, as text8 is the first 10^8 bytes of normalised
    Wikipedia.
    """
    if max_chars is not None and max_chars <= 0:
        raise ValueError(f"max_chars must be > 0; got {max_chars}")
    apply = normalizer(normalize)
    budget = max_chars
    with contextlib.closing(iter_lines(path, keep_newlines=True)) as all_lines:
        while True:
            lines = list(itertools.islice(all_lines, chunk_lines))
            if not lines:
                return
            text = apply(" ".join(lines))
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


def read_words(path: str | Path, max_chars: int | None = None, normalize: str = "text8") -> list[str]:
    """The words of a corpus file after normalisation (optionally its first ``max_chars``
    characters of normalised text); warns (:class:`VocabularyCollapse`) when, over the corpus's
    first :data:`COLLAPSE_SAMPLE_LINES` lines, the normalised vocabulary keeps under
    :data:`COLLAPSE_FRACTION` of the distinct raw tokens."""
    words: list[str] = []
    for chunk in iter_normalized_chunks(path, max_chars, normalize=normalize):
        words.extend(chunk.split())
    kept, raw = _vocabularies(path, normalize)
    if raw >= _COLLAPSE_MIN_TOKENS and kept < COLLAPSE_FRACTION * raw:
        others = ", ".join(f"--normalize {name}" for name in NORMALIZERS if name != normalize)
        warnings.warn(f"{path}: {normalize} normalisation kept {kept:,} distinct words of the {raw:,} distinct "
                      f"tokens read: is the corpus not English prose? Try {others}", VocabularyCollapse, stacklevel=2)
    return words


def _vocabularies(path: str | Path, normalize: str) -> tuple[int, int]:
    """Distinct words after normalisation, and distinct raw tokens, of the corpus's first
    :data:`COLLAPSE_SAMPLE_LINES` lines: the collapse is a property of the kind of text, which its
    start shows, so the whole corpus is not split twice."""
    with contextlib.closing(iter_lines(path, keep_newlines=True)) as lines:
        sample = " ".join(itertools.islice(lines, COLLAPSE_SAMPLE_LINES))
    return len(set(normalizer(normalize)(sample).split())), len(set(sample.split()))
