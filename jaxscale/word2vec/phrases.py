"""Data-driven phrase detection (Mikolov et al. 2013b §4, Eq. 6).

Adjacent words a b become the single token ``a_b`` when

    score(a, b) = (count(a b) - delta) / (count(a) * count(b)) * N  >  threshold,

Eq. (6) scaled by the number of tokens N, as the word2vec tool's ``word2phrase`` does, so that
one threshold (typically 100) suits corpora of any size. The discount ``delta`` keeps phrases of
very rare words out. Running several passes with a decreasing threshold joins longer phrases
(``new_york`` then ``new_york_times``). Words seen fewer than ``min_count`` times never join.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PhrasePass:
    """The phrases one pass found, with their scores."""

    threshold: float
    phrases: dict[tuple[str, str], float]


def _ids(tokens: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    index: dict[str, int] = {}
    ids = np.fromiter((index.setdefault(t, len(index)) for t in tokens), dtype=np.int64, count=len(tokens))
    return ids, list(index)


def score_bigrams(
    tokens: Sequence[str], min_count: int = 5, delta: float = 5.0
) -> dict[tuple[str, str], float]:
    """Eq. (6) score x N for every adjacent pair whose words both occur >= ``min_count`` times
    and whose count exceeds ``delta``."""
    if len(tokens) < 2:
        return {}
    ids, words = _ids(tokens)
    unigram = np.bincount(ids)
    frequent = unigram >= min_count
    keys = ids[:-1] * len(words) + ids[1:]
    keys = keys[frequent[ids[:-1]] & frequent[ids[1:]]]
    pairs, counts = np.unique(keys, return_counts=True)
    a, b = np.divmod(pairs, len(words))
    score = (counts - delta) / (unigram[a] * unigram[b].astype(np.float64)) * len(tokens)
    good = counts > delta
    return {(words[i], words[j]): float(s) for i, j, s in zip(a[good], b[good], score[good])}


def join_phrases(tokens: Sequence[str], phrases: set[tuple[str, str]] | dict, joiner: str = "_") -> list[str]:
    """Replace each occurrence of a phrase pair by one joined token, greedily left to right
    (in ``a b c`` with both ``a b`` and ``b c`` phrases, ``a_b c`` is formed)."""
    if len(tokens) < 2 or not phrases:
        return list(tokens)
    hit = np.fromiter(
        ((tokens[i], tokens[i + 1]) in phrases for i in range(len(tokens) - 1)), dtype=bool, count=len(tokens) - 1
    )
    # within a run of consecutive hits starting at s, the greedy scan joins s, s+2, s+4, ...
    starts = np.flatnonzero(hit & ~np.concatenate([[False], hit[:-1]]))
    run_start = np.zeros(len(hit), dtype=np.int64)
    run_start[starts] = starts
    run_start = np.maximum.accumulate(run_start)
    take = np.flatnonzero(hit & ((np.arange(len(hit)) - run_start) % 2 == 0))
    out = np.array(tokens, dtype=object)
    out[take] = [out[i] + joiner + out[i + 1] for i in take]
    keep = np.ones(len(tokens), dtype=bool)
    keep[take + 1] = False
    return out[keep].tolist()


def learn_phrases(
    tokens: Sequence[str],
    passes: int = 2,
    threshold: float = 100.0,
    min_count: int = 5,
    delta: float = 5.0,
) -> tuple[list[str], list[PhrasePass]]:
    """Run ``passes`` passes; pass k (0-based) uses threshold x 2^(passes - 1 - k), so the last
    pass uses ``threshold``. Returns the re-tokenised corpus and what each pass found."""
    if passes < 1:
        raise ValueError(f"passes must be >= 1; got {passes}")
    if threshold <= 0:
        raise ValueError(f"threshold must be > 0; got {threshold}")
    found = []
    tokens = list(tokens)
    for k in range(passes):
        level = threshold * 2.0 ** (passes - 1 - k)
        scores = score_bigrams(tokens, min_count, delta)
        chosen = {pair: s for pair, s in scores.items() if s > level}
        tokens = join_phrases(tokens, chosen)
        found.append(PhrasePass(threshold=level, phrases=chosen))
    return tokens, found
