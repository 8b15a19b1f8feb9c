"""The results of ``jaxscale word2vec``: a training run, an evaluation of vectors, a neighbours
query and a scaling study (:mod:`jaxscale.word2vec`), each rendered once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from jaxscale._api._results import Figures, Result, rows

if TYPE_CHECKING:
    import pandas as pd


def _defined(value: float | None, spec: str, unit: str = "") -> str:
    """A score, or "undefined" where no question or pair could be asked (None or NaN)."""
    return "undefined" if value is None or value != value else f"{value:{spec}}{unit}"


@dataclass(frozen=True, repr=False)
class Word2VecTraining(Result):
    """A word2vec training run (:func:`jaxscale.word2vec.train.train_from_file`).

    Attributes:
        report: what the run reports (its settings, words, vocabulary, speed, the vectors' path).
        checkpoints: the run's checkpoint directory.
    """

    report: dict[str, Any]
    checkpoints: Path

    def _report(self) -> dict[str, Any]:
        return self.report

    def summary(self) -> pd.DataFrame:
        """The words trained, the vocabulary and the speed (no intervals)."""
        return rows({"quantity": key, "estimate": self.report[key]}
                    for key in ("words_trained", "vocab_size", "words_per_second") if key in self.report)

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        if numbers["words_trained"]:
            first = (f"trained {numbers['model']}/{numbers['loss']} d={numbers['dim']} on {numbers['words']:,} words "
                     f"(vocabulary {numbers['vocab_size']:,}) at {numbers['words_per_second']:,.0f} words/s")
        else:
            first = f"nothing left to train: {self.checkpoints} holds this run, finished; vectors written from it"
        return [first, f"vectors: {numbers['vectors']}"]


@dataclass(frozen=True, repr=False)
class VectorScores(Result):
    """Word vectors scored on the analogy questions (per section, semantic, syntactic, total)
    and on the word-similarity datasets (Spearman correlation)."""

    report: dict[str, Any]

    def _report(self) -> dict[str, Any]:
        return self.report

    def summary(self) -> pd.DataFrame:
        """Accuracy (%) of each analogy section and overall, and each dataset's Spearman correlation."""
        entries = [{"quantity": name, "estimate": s["accuracy"]} for name, s in self.report["sections"].items()]
        entries += [{"quantity": key, "estimate": self.report[key]} for key in ("semantic", "syntactic", "total")]
        entries += [{"quantity": f"{name} spearman", "estimate": s["spearman"]}
                    for name, s in self.report["similarity"].items()]
        return rows(entries)

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lines = [f"{name:30s} {_defined(s['accuracy'], '6.2f', '%')}  ({s['correct']}/{s['evaluated']})"
                 for name, s in numbers["sections"].items()]
        lines.append(f"semantic {_defined(numbers['semantic'], '.2f', '%')}  syntactic "
                     f"{_defined(numbers['syntactic'], '.2f', '%')}  total {_defined(numbers['total'], '.2f', '%')}  "
                     f"coverage {100 * numbers['coverage']:.1f}% of {numbers['questions']} questions")
        return lines + [f"{name}: Spearman {_defined(sim['spearman'], '.3f')} on {sim['pairs']} pairs"
                        for name, sim in numbers["similarity"].items()]


@dataclass(frozen=True, repr=False)
class Neighbours(Result):
    """The nearest words of a query by cosine, or the word of a list that does not fit.

    Attributes:
        found: (word, cosine) pairs, nearest first (empty for an odd-one-out query).
        odd_one_out: the word that does not fit, or None for a neighbours query.
    """

    found: tuple[tuple[str, float], ...] = ()
    odd_one_out: str | None = None

    def _report(self) -> dict[str, Any]:
        if self.odd_one_out is not None:
            return {"odd_one_out": self.odd_one_out}
        return {"neighbours": [{"word": w, "cosine": s} for w, s in self.found]}

    def summary(self) -> pd.DataFrame:
        """Each neighbour with its cosine as the estimate."""
        return rows({"quantity": w, "estimate": s} for w, s in self.found)

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        if "odd_one_out" in numbers:
            return [numbers["odd_one_out"]]
        return [f"{n['word']:24s} {n['cosine']:.4f}" for n in numbers["neighbours"]]


@dataclass(frozen=True, repr=False)
class Word2VecScaling(Result):
    """Error laws of word2vec's analogy accuracy in the vector size d and the training words T,
    fitted to a grid (trained here or Mikolov et al.'s Table 2), and the compute-optimal split
    of a budget (:mod:`jaxscale.word2vec.scaling`).

    Attributes:
        report: the study's fits, grid and optimum.
        out: the study's directory (its files' place; the text names it).
    """

    report: dict[str, Any]
    out: Path

    def _report(self) -> dict[str, Any]:
        return self.report

    def summary(self) -> pd.DataFrame:
        """Each fitted law's parameters (``LAW.NAME``) and its RMS error in accuracy points."""
        entries = []
        for name, fit in self.report["fits"].items():
            entries += [{"quantity": f"{name}.{k}", "estimate": v} for k, v in fit["params"].items()]
            entries.append({"quantity": f"{name}.rms_points", "estimate": fit["rms_points"]})
        return rows(entries)

    def plot(self) -> Figures:
        """``accuracy_grid`` (accuracy over the grid) and ``frontier`` (the fitted law's compute-optimal frontier)."""
        from jaxscale.plots.word2vec import accuracy_grid_figure, frontier_figure
        from jaxscale.word2vec.scaling import error_law_by_name, predicted_error

        law = error_law_by_name(self.report["law"])
        params = law.params_type(**self.report["params"])
        frontier = frontier_figure(self.report["rows"], lambda d, t: predicted_error(law, params, d, t),
                                   self.report["kappa"], self.report["optimal"], f"fitted {law.formula}")
        return Figures(accuracy_grid=accuracy_grid_figure(self.report["rows"]), frontier=frontier)

    def _data_files(self, directory: Path) -> list[Path]:
        from jaxscale.support.json_native import write_json

        write_json(directory / "report.json", self.report)
        return [directory / "report.json"]

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lines = []
        for name, fit in numbers["fits"].items():
            params = ", ".join(f"{k} = {v:.4g}" for k, v in fit["params"].items())
            lines += [f"{name:10s} {fit['formula']}", f"{'':10s} {params}   (RMS {fit['rms_points']:.2f} accuracy points)"]
        optimal = numbers["optimal"]
        if optimal is None:
            lines.append(f"no compute-optimal split: a fitted {numbers['law']} exponent is <= 0 (error did not fall "
                         "along d or T)")
        else:
            lines.append(f"compute-optimal split of budget {optimal['budget']:.3g} ({numbers['law']} law): d* = "
                         f"{optimal['dim']:.0f}, T* = {optimal['words']:.3g} words, predicted accuracy "
                         f"{optimal['predicted_accuracy']:.1f}%; d* ~ budget^{optimal['exponent_dim']:.3f}, "
                         f"T* ~ budget^{optimal['exponent_words']:.3f}")
        return [*lines, f"results: {self.out}"]


def _load_vectors(path: Path) -> tuple[Any, list[str]]:
    """The vectors and words of a word2vec file: binary for ``.bin``, text otherwise."""
    from jaxscale.word2vec.vector_files import load_word2vec

    return load_word2vec(path, binary=Path(path).suffix == ".bin")


def score_vectors(path: Path, analogies: Path | None = None, restrict: int = 30_000) -> VectorScores:
    """Word vectors scored on the analogy questions and on every word-similarity dataset.

    Args:
        path: a word2vec ``.bin`` (binary) or ``.txt`` (text) file.
        analogies: the analogy questions (default: gensim's questions-words.txt).
        restrict: how many of the most frequent words an answer is searched among.

    Returns:
        A :class:`VectorScores`.
    """
    from jaxscale.word2vec.analogy import evaluate_analogies
    from jaxscale.word2vec.similarity import DATASETS, dataset_path, evaluate_similarity

    vectors, words = _load_vectors(path)
    scores = evaluate_analogies(vectors, words, analogies, restrict).as_dict()
    similarity = {name: evaluate_similarity(vectors, words, dataset_path(name)) for name in DATASETS}
    return VectorScores({**scores, "similarity": similarity})


def query_vectors(path: Path, words: Sequence[str], negative: Sequence[str] = (), topn: int = 10,
                  odd_one_out: bool = False) -> Neighbours:
    """The nearest words of ``words`` minus ``negative`` by cosine, or the word of ``words`` that
    does not fit.

    Args:
        path: a word2vec ``.bin`` (binary) or ``.txt`` (text) file.
        words: the query; a word written ``-WORD`` counts as negative.
        negative: more words subtracted from the query.
        topn: how many neighbours.
        odd_one_out: instead, the word of ``words`` least similar (cosine) to the mean of their unit
            vectors.

    Returns:
        A :class:`Neighbours`.
    """
    from jaxscale.word2vec import neighbours

    vectors, vocabulary = _load_vectors(path)
    if odd_one_out:
        return Neighbours(odd_one_out=neighbours.odd_one_out(vectors, vocabulary, list(words)))
    positive = [w for w in words if not w.startswith("-")]
    negative = [w[1:] for w in words if w.startswith("-")] + list(negative)
    return Neighbours(found=tuple(neighbours.nearest_neighbours(vectors, vocabulary, positive, negative, topn)))
