"""Vocabulary, frequent-word subsampling and the negative-sampling noise distribution.

References: Mikolov et al. 2013b ("Distributed Representations of Words and Phrases"),
Eq. (5) for subsampling and §2.2 for the noise distribution U(w)^{3/4}/Z.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Vocab:
    """Words sorted by decreasing count (ties: first seen first) and their counts."""

    words: tuple[str, ...]
    counts: np.ndarray  # int64, same order as ``words``

    def __len__(self) -> int:
        return len(self.words)

    @property
    def index(self) -> dict[str, int]:
        """Word -> row index."""
        return {w: i for i, w in enumerate(self.words)}

    @property
    def total(self) -> int:
        """Number of in-vocabulary tokens in the corpus the counts came from."""
        return int(self.counts.sum())


def build_vocab(tokens: Iterable[str], min_count: int = 5) -> Vocab:
    """Count ``tokens`` and keep words seen at least ``min_count`` times.

    Raises ``ValueError`` if the corpus is empty or no word reaches ``min_count``.
    """
    if min_count < 1:
        raise ValueError(f"min_count must be >= 1; got {min_count}")
    counter = Counter(tokens)
    if not counter:
        raise ValueError("corpus is empty: no words to build a vocabulary from")
    kept = [(w, c) for w, c in counter.items() if c >= min_count]
    if not kept:
        raise ValueError(
            f"vocabulary is empty: no word occurs at least min_count={min_count} times "
            f"(most frequent: {counter.most_common(1)[0][1]} times)"
        )
    kept.sort(key=lambda wc: -wc[1])  # stable: ties keep first-seen order
    words, counts = zip(*kept)
    return Vocab(words=tuple(words), counts=np.asarray(counts, dtype=np.int64))


def encode(tokens: Sequence[str], vocab: Vocab) -> np.ndarray:
    """Token ids (int32) of ``tokens``; out-of-vocabulary tokens are dropped, as word2vec does."""
    index = vocab.index
    ids = np.fromiter((index.get(t, -1) for t in tokens), dtype=np.int32, count=len(tokens))
    return ids[ids >= 0]


def keep_probability(counts: np.ndarray, sample: float, formula: str = "word2vec") -> np.ndarray:
    """Probability that one occurrence of each word survives frequent-word subsampling.

    With f(w) the word's relative frequency and t = ``sample``:

    - ``"paper"``: Mikolov 2013b Eq. (5) discards w with P(w) = 1 - sqrt(t / f(w)), so it is
      kept with probability min(1, sqrt(t / f(w))).
    - ``"word2vec"`` (default; the C tool's and gensim's variant): kept with probability
      min(1, sqrt(t / f(w)) + t / f(w)), slightly gentler on mid-frequency words.

    ``sample <= 0`` disables subsampling (every word kept).
    """
    counts = np.asarray(counts, dtype=np.float64)
    if sample <= 0:
        return np.ones_like(counts)
    ratio = sample / (counts / counts.sum())
    if formula == "paper":
        keep = np.sqrt(ratio)
    elif formula == "word2vec":
        keep = np.sqrt(ratio) + ratio
    else:
        raise ValueError(f"formula must be 'paper' or 'word2vec'; got {formula!r}")
    return np.minimum(keep, 1.0)


def noise_distribution(counts: np.ndarray, power: float = 0.75) -> np.ndarray:
    """Noise distribution P_n(w) = U(w)^{3/4} / Z of Mikolov 2013b §2.2 (float64, sums to 1)."""
    weights = np.asarray(counts, dtype=np.float64) ** power
    return weights / weights.sum()


def sample_noise(cumulative: np.ndarray, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Draw word ids from a distribution given by its cumulative sum (``np.cumsum(p)``)."""
    u = rng.random(shape) * cumulative[-1]
    return np.minimum(np.searchsorted(cumulative, u, side="right"), len(cumulative) - 1).astype(np.int32)
