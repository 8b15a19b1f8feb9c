"""Nearest neighbours by cosine similarity and the "odd one out" query (Mikolov 2013a §5:
average the vectors of a list and pick the word farthest from the average)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jaxscale.word2vec.unit_vectors import unit_rows


def _lookup(words: Sequence[str], query: Sequence[str]) -> list[int]:
    index = {w: i for i, w in reversed(list(enumerate(words)))}
    missing = [q for q in query if q not in index]
    if missing:
        raise ValueError(f"not in the vocabulary: {', '.join(missing)}")
    return [index[q] for q in query]


def nearest_neighbours(
    vectors: np.ndarray,
    words: Sequence[str],
    positive: Sequence[str],
    negative: Sequence[str] = (),
    topn: int = 10,
) -> list[tuple[str, float]]:
    """The ``topn`` words closest by cosine to sum(unit(positive)) - sum(unit(negative)),
    excluding the query words (``positive=[b, c], negative=[a]`` is 3CosAdd); fewer when the
    vocabulary holds fewer other words. A query with no direction (zero vectors, or words that
    cancel) has no cosine to anything: ValueError."""
    if not positive:
        raise ValueError("need at least one positive word")
    if topn < 1:
        raise ValueError(f"topn must be >= 1; got {topn}")
    unit = unit_rows(vectors)
    pos, neg = _lookup(words, positive), _lookup(words, negative)
    query = unit[pos].sum(0) - unit[neg].sum(0)
    norm = np.linalg.norm(query)
    if not norm > 0:
        raise ValueError(f"the query {' '.join(positive)}{''.join(' -' + w for w in negative)} is the zero vector: "
                         "it has no cosine to any word")
    scores = unit @ (query / norm)
    scores[pos + neg] = -np.inf
    best = np.argsort(-scores)[:min(topn, len(words) - len(set(pos + neg)))]
    return [(words[i], float(scores[i])) for i in best]


def odd_one_out(vectors: np.ndarray, words: Sequence[str], query: Sequence[str]) -> str:
    """The word of ``query`` least similar (cosine) to the mean of the query's unit vectors."""
    if len(query) < 2:
        raise ValueError("need at least two words to find the odd one out")
    unit = unit_rows(vectors)[_lookup(words, query)]
    mean = unit.mean(0)
    return query[int(np.argmin(unit @ mean))]
