"""Word-similarity benchmarks (WordSim-353, SimLex-999): Spearman correlation between human
ratings and the cosine similarity of the word vectors, over the pairs whose words are known."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from jaxscale.word2vec.unit_vectors import unit_rows

DATASETS = {"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}


def dataset_path(name: str) -> Path:
    """Path of a similarity set shipped in gensim's test data (``wordsim353`` or ``simlex999``)."""
    if name not in DATASETS:
        raise ValueError(f"unknown similarity set {name!r}; choose from {sorted(DATASETS)}")
    from gensim.test.utils import datapath

    return Path(datapath(DATASETS[name]))


def read_similarity_pairs(path: str | Path) -> list[tuple[str, str, float]]:
    """(word1, word2, human score) rows of a tab-separated file; ``#`` lines are comments."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"similarity file not found: {path}")
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        try:
            pairs.append((parts[0].lower(), parts[1].lower(), float(parts[2])))
        except (IndexError, ValueError):
            raise ValueError(f"{path}:{number}: expected 'word1<TAB>word2<TAB>score'; got {line!r}") from None
    if not pairs:
        raise ValueError(f"{path}: no word pairs found")
    return pairs


def evaluate_similarity(
    vectors: np.ndarray, words: Sequence[str], path: str | Path, restrict: int | None = None
) -> dict[str, float]:
    """Spearman rho between human scores and cosine similarities; with the pairs covered."""
    pairs = read_similarity_pairs(path)
    limit = len(words) if restrict is None else min(restrict, len(words))
    index = {w.lower(): i for i, w in reversed(list(enumerate(words[:limit])))}
    known = [(index[a], index[b], s) for a, b, s in pairs if a in index and b in index]
    if len(known) < 2:
        return {"spearman": float("nan"), "pairs": len(known), "coverage": len(known) / len(pairs)}
    a, b, human = (np.array(col) for col in zip(*known))
    unit = unit_rows(np.asarray(vectors[:limit]))
    cosine = np.sum(unit[a] * unit[b], axis=1)
    return {
        "spearman": float(spearmanr(human, cosine).statistic),
        "pairs": len(known),
        "coverage": len(known) / len(pairs),
    }
