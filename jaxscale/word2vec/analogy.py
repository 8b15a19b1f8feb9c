"""The semantic-syntactic word analogy test of Mikolov et al. 2013a (§4.1, Tables 2-5).

A question "a : b :: c : ?" is answered by the vocabulary word x (other than a, b, c) whose
vector is closest by cosine to vec(b) - vec(a) + vec(c) ("3CosAdd"; 2013a §4, 2013b §3). As in
2013a Table 2, the search and the questions are restricted to the ``restrict`` most frequent
words (30,000 by default); questions with a word outside that set are skipped and counted in the
coverage. Sections whose name starts with ``gram`` are syntactic, the others semantic.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jaxscale.word2vec.unit_vectors import unit_rows


def default_analogy_path() -> Path:
    """``questions-words.txt`` (19,544 questions) as shipped inside gensim's test data."""
    from gensim.test.utils import datapath

    return Path(datapath("questions-words.txt"))


def read_analogies(path: str | Path) -> dict[str, list[tuple[str, str, str, str]]]:
    """Questions per section from a ``questions-words.txt``-style file (lowercased).

    Raises ``FileNotFoundError`` if the file is missing and ``ValueError`` naming the line if a
    question does not have four words or the file holds no question.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"analogy file not found: {path}")
    sections: dict[str, list[tuple[str, str, str, str]]] = {}
    current = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(":"):
            current = sections.setdefault(line[1:].strip(), [])
            continue
        words = line.lower().split()
        if len(words) != 4:
            raise ValueError(f"{path}:{number}: an analogy needs 4 words; got {line!r}")
        if current is None:
            current = sections.setdefault("default", [])
        current.append(tuple(words))
    if not any(sections.values()):
        raise ValueError(f"{path}: no analogy questions found")
    return sections


@dataclass(frozen=True)
class AnalogyResult:
    """Accuracy (%) per section and overall, over the questions inside the restricted vocabulary."""

    sections: dict[str, dict[str, float]] = field(default_factory=dict)
    semantic: float = float("nan")
    syntactic: float = float("nan")
    total: float = float("nan")
    coverage: float = float("nan")  # fraction of questions evaluated
    evaluated: int = 0
    questions: int = 0

    def as_dict(self) -> dict:
        return {
            "total": self.total,
            "semantic": self.semantic,
            "syntactic": self.syntactic,
            "coverage": self.coverage,
            "evaluated": self.evaluated,
            "questions": self.questions,
            "sections": self.sections,
        }


def answer_analogies(unit: np.ndarray, questions: np.ndarray, chunk: int = 1024) -> np.ndarray:
    """3CosAdd answers: argmax_x cos(x, b - a + c) over rows of ``unit``, excluding a, b, c.

    ``unit`` holds unit-norm rows; ``questions`` is (n, 3) row indices of (a, b, c).
    """
    answers = np.empty(len(questions), dtype=np.int64)
    rows = np.arange(chunk)
    for lo in range(0, len(questions), chunk):
        q = questions[lo : lo + chunk]
        target = unit[q[:, 1]] - unit[q[:, 0]] + unit[q[:, 2]]
        scores = target @ unit.T
        for j in range(3):
            scores[rows[: len(q)], q[:, j]] = -np.inf
        answers[lo : lo + chunk] = scores.argmax(1)
    return answers


def _percent(correct: int, n: int) -> float:
    return 100.0 * correct / n if n else float("nan")


def evaluate_analogies(
    vectors: np.ndarray,
    words: Sequence[str],
    path: str | Path | None = None,
    restrict: int | None = 30_000,
    allowed: Collection[str] | None = None,
) -> AnalogyResult:
    """Analogy accuracy of ``vectors`` (rows in ``words`` order, most frequent first).

    ``allowed`` further limits the questions to those whose four words it contains, so models
    with different vocabularies can be scored on one common question set (the others count as
    not covered).
    """
    if restrict is not None and restrict < 1:
        raise ValueError(f"restrict must be >= 1; got {restrict}")
    sections = read_analogies(default_analogy_path() if path is None else path)
    limit = len(words) if restrict is None else min(restrict, len(words))
    index = {w.lower(): i for i, w in reversed(list(enumerate(words[:limit])))}
    unit = unit_rows(np.asarray(vectors[:limit], dtype=np.float32))
    per_section: dict[str, dict[str, float]] = {}
    tallies = {"semantic": [0, 0], "syntactic": [0, 0]}
    questions = evaluated = 0
    for name, items in sections.items():
        known = [q for q in items if all(w in index and (allowed is None or w in allowed) for w in q)]
        ids = np.array([[index[w] for w in q] for q in known], dtype=np.int64).reshape(-1, 4)
        correct = int((answer_analogies(unit, ids[:, :3]) == ids[:, 3]).sum()) if len(ids) else 0
        kind = "syntactic" if name.startswith("gram") else "semantic"
        tallies[kind][0] += correct
        tallies[kind][1] += len(ids)
        questions += len(items)
        evaluated += len(ids)
        per_section[name] = {
            "accuracy": _percent(correct, len(ids)),
            "correct": correct,
            "evaluated": len(ids),
            "questions": len(items),
        }
    return AnalogyResult(
        sections=per_section,
        semantic=_percent(*tallies["semantic"]),
        syntactic=_percent(*tallies["syntactic"]),
        total=_percent(tallies["semantic"][0] + tallies["syntactic"][0], evaluated),
        coverage=evaluated / questions,
        evaluated=evaluated,
        questions=questions,
    )
