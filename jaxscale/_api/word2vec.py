"""The verbs of ``jaxscale word2vec`` and their results (:mod:`jaxscale.word2vec`), each rendered
once: :func:`train_word2vec` trains word vectors (:class:`Word2VecTraining`), :func:`score_vectors`
scores them (:class:`VectorScores`), :func:`query_vectors` asks for neighbours or the odd one out
(:class:`Neighbours`), and :func:`word2vec_scaling` fits error laws of their accuracy in the
dimension and the words trained (:class:`Word2VecScaling`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxscale._api._results import Figures, Result, rows

if TYPE_CHECKING:
    import pandas as pd

#: The published grids :func:`word2vec_scaling` fits instead of training: Mikolov et al. 2013a, Table 2.
PUBLISHED = ("mikolov-2013a",)


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

    if restrict < 1:
        raise ValueError(f"restrict must be >= 1 (the most frequent words searched), got {restrict}")
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

    if topn < 1:
        raise ValueError(f"topn must be >= 1, got {topn}")
    vectors, vocabulary = _load_vectors(path)
    if odd_one_out:
        return Neighbours(odd_one_out=neighbours.odd_one_out(vectors, vocabulary, list(words)))
    positive = [w for w in words if not w.startswith("-")]
    negative = [w[1:] for w in words if w.startswith("-")] + list(negative)
    return Neighbours(found=tuple(neighbours.nearest_neighbours(vectors, vocabulary, positive, negative, topn)))


def train_word2vec(corpus: str | Path, out: str | Path, *, model: str = "skipgram", loss: str = "neg",
                   dim: int = 100, window: int = 5, negative: int = 5, sample: float = 1e-4, min_count: int = 5,
                   epochs: int = 1, alpha: float | None = None, phrases: int = 0, max_chars: int | None = None,
                   normalize: str = "text8", seed: int = 1, batch: int | None = None,
                   neg_row_cap: float | None = None, examples: str = "auto", write_text: bool = False,
                   checkpoint_seconds: float = 300.0, progress: bool = True) -> Word2VecTraining:
    """Train skip-gram or CBOW word vectors with negative sampling or the hierarchical softmax
    (Mikolov et al. 2013a/b) on a text corpus, and write them to ``out/vectors.bin``.

    >>> run = js.train_word2vec("enwiki_30k_articles.txt.gz", "w2v", model="cbow", loss="hs")   # doctest: +SKIP

    Checkpointed to ``out/checkpoints`` (every ``checkpoint_seconds`` and at the end): the same
    call on the same ``out`` resumes a killed run to the same vectors, and on a finished run
    trains nothing and writes the vectors from its checkpoint; checkpoints of a run with other
    settings are refused, naming each setting that differs. ``out`` is held while it trains
    (another process writing there is refused).

    Args:
        corpus: a UTF-8 text corpus, ``.txt`` or ``.txt.gz``.
        out: the output directory (vectors, checkpoints).
        model: ``skipgram`` or ``cbow``.
        loss: ``neg`` (negative sampling) or ``hs`` (hierarchical softmax).
        dim: the vectors' dimension.
        window: the context window's radius.
        negative: noise words per example (``neg``).
        sample: the subsampling threshold of frequent words (0: none).
        min_count: the fewest occurrences a word of the vocabulary has.
        epochs: passes over the corpus.
        alpha: the initial learning rate (default 0.025 skip-gram, 0.05 CBOW).
        phrases: phrase-detection passes before training.
        max_chars: use only the first this many normalised characters (None: all).
        normalize: how text becomes words: ``text8``, ``lower`` or ``none``
            (:mod:`jaxscale.word2vec.normalize`).
        seed: the random seed.
        batch: examples per SGD step (default 1024 with ``neg``, 256 with ``hs``).
        neg_row_cap: with ``neg``, cap each row's summed step per batch at this many examples'
            worth (None: no cap).
        examples: who builds the examples: ``host`` (numpy), ``device`` (the accelerator) or
            ``auto`` (the device on a GPU or TPU).
        write_text: also write ``out/vectors.txt`` (the word2vec text format).
        checkpoint_seconds: seconds between checkpoints (0: after every chunk).
        progress: show a progress bar.

    Returns:
        A :class:`Word2VecTraining`.

    Raises:
        ValueError: a setting out of range or unknown, named; an ``out`` that cannot be a
            directory or that another process is writing; a corpus that is not UTF-8 text.
        jaxscale.Word2VecDiverged: the loss or the vectors turned NaN or infinite (no vectors
            are written; the last finite checkpoint is kept).
    """
    from jaxscale.networks.word2vec import Word2VecConfig
    from jaxscale.support.atomic import OutputLock, check_writable
    from jaxscale.word2vec.normalize import normalizer
    from jaxscale.word2vec.train import train_from_file

    settings = {"model": model, "loss": loss, "dim": dim, "window": window, "negative": negative, "sample": sample,
                "min_count": min_count, "epochs": epochs, "alpha": alpha, "seed": seed, "batch": batch,
                "neg_row_cap": neg_row_cap, "examples": examples}
    Word2VecConfig(**{k: v for k, v in settings.items() if v is not None})  # a bad setting, named, before out is made
    normalizer(normalize)
    if phrases < 0:
        raise ValueError(f"phrases must be >= 0 (phrase-detection passes), got {phrases}")
    if max_chars is not None and max_chars < 1:
        raise ValueError(f"max_chars must be >= 1 or None, got {max_chars}")
    check_writable(out, "out")
    with OutputLock(out):
        report = train_from_file(corpus, out, phrases=phrases, max_chars=max_chars, normalize=normalize,
                                 write_text=write_text, checkpoint_seconds=checkpoint_seconds, progress=progress,
                                 **settings)
    return Word2VecTraining(report, Path(out) / "checkpoints")


def word2vec_scaling(corpus: str | Path | None = None, *, out: str | Path, published: str | None = None,
                     law: str = "word2vec-error-kaplan", dims: Sequence[int] | None = None,
                     words: Sequence[float] | None = None, model: str | None = None, loss: str | None = None,
                     epochs: int | None = None, budget: float | None = None,
                     progress: bool = True) -> Word2VecScaling:
    """Error laws of word2vec's analogy accuracy in the vector size d and the training words T,
    fitted to a grid of d x T trained on ``corpus`` (or to a published grid), and the
    compute-optimal split of a budget between d and T.

    >>> js.word2vec_scaling(published="mikolov-2013a", out="w2v_scaling", budget=1e12)   # doctest: +SKIP

    Both laws are fitted (Kaplan's Eq. 1.5 and Chinchilla's form, in (d, T)); ``law`` is the one
    whose fit gives the optimal split and the frontier. ``report.json`` and the figures are
    written to ``out`` (with the grid's cells under ``out/cells`` when it trains), which is held
    while it works.

    Args:
        corpus: the text corpus to train the grid on; or give ``published``.
        out: the study's directory.
        published: a published grid to fit instead of training: ``mikolov-2013a`` (Table 2).
        law: ``word2vec-error-kaplan`` or ``word2vec-error-chinchilla`` (or ``kaplan``, ``chinchilla``).
        dims: the grid's vector sizes (training only; default 25 50 100 200).
        words: the grid's training words per cell (training only; default 4e6 8e6 16e6 32e6).
        model: ``skipgram`` or ``cbow`` (training only; default ``cbow``).
        loss: ``neg`` or ``hs`` (training only; default ``hs``).
        epochs: passes over each cell's words (training only; default 3).
        budget: the compute budget to split (the paper's Eq. 4/5 units; default: the largest
            cell's compute).
        progress: show progress bars (training only).

    Returns:
        A :class:`Word2VecScaling`.

    Raises:
        ValueError: both or neither of ``corpus`` and ``published``, an unknown grid or law, a
            budget that is not a finite number > 0, a grid too small to fit, or an ``out`` that
            cannot be a directory or that another process is writing.
    """
    from jaxscale.networks.word2vec import LOSSES, MODELS
    from jaxscale.support.atomic import OutputLock, check_writable
    from jaxscale.word2vec.scaling import (
        ScalingGrid,
        check_budget,
        error_law_by_name,
        run_published_study,
        run_scaling_study,
    )

    if (published is None) == (corpus is None):
        raise ValueError("give either corpus (to train the grid on) or published='mikolov-2013a' (its Table 2)")
    if published is not None and published not in PUBLISHED:
        raise ValueError(f"published must be one of {', '.join(PUBLISHED)}, got {published!r}")
    check_writable(out, "out")
    check_budget(budget)  # before the grid trains
    short = law.removeprefix("word2vec-error-")
    error_law_by_name(short)  # an unknown law: the choices, before the grid trains
    if published is None:
        if model is not None and model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
        if loss is not None and loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
        if epochs is not None and epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {epochs}")
        given = {"dims": tuple(dims) if dims else None, "words": tuple(int(w) for w in words) if words else None,
                 "model": model, "loss": loss, "epochs": epochs}
        grid = ScalingGrid(**{k: v for k, v in given.items() if v is not None})
    with OutputLock(out):
        if published is not None:
            report = run_published_study(law=short, budget=budget)
        else:
            report = run_scaling_study(corpus, out, grid, law=short, budget=budget, progress=progress)
        result = Word2VecScaling(report, Path(out))
        result.save(out)  # report.json and the figures: the study's product
    return result
