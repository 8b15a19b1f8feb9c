"""How word2vec quality scales with dimensionality and training words (Mikolov 2013a, Table 2).

The study trains a grid of models over vector dimension d and training words T (prefixes of
one normalised corpus), scores each on the analogy test restricted to the 30k most frequent
words (every cell answers the same questions: those inside the top-30k vocabulary of every
corpus size, as Table 2 fixes its question subset), and fits the analogy error with two laws,
using the project's Approach-3 engine (:func:`jaxscale.fitting.approach3.fit_approach3`) and the
laws of :mod:`jaxscale.laws.word2vec_error`:

- ``kaplan`` (default): Kaplan et al. (2020) Eq. 1.5 with (N, D) -> (d, T),
  err(d, T) = [(d_c / d)^(alpha_d / alpha_T) + T_c / T]^alpha_T. Its two terms share one
  power, so the gain from more dimensions fades unless the data grows too: exactly the
  observation of Mikolov 2013a §4.2 ("we have to increase both vector dimensionality and the
  amount of the training data together"). On the published Table 2 it leaves 1.1 accuracy
  points RMS;
- ``chinchilla``: Hoffmann et al. (2022) Eq. 2, err(d, T) = E + A d^-alpha + B T^-beta, whose
  additive terms cannot express that interaction: 3.1 points RMS on Table 2.

Training cost follows Mikolov 2013a Eq. (1): O = E x T x Q, with Q per training word from
Eq. (4) for CBOW, Q = N x D + D x log2(V) (N = 2C context words), and Eq. (5) for skip-gram,
Q = C x (D + D x log2(V)); with negative sampling the log2(V) output evaluations become k + 1.
Q is linear in D, so cost = kappa x d x T, and the compute-optimal split of a budget is the
minimiser of the fitted law on d x T = budget / kappa, solved by the generic differentiable
solver :func:`jaxscale.optimum.solver.optimal_n`; the local exponent d log d* / d log budget comes from
``jax.grad`` through that solve (:func:`jaxscale.optimum.solver.local_exponent`).

Each finished cell is saved under ``out/cells/`` at once, so a killed study resumes without
losing finished work. ``published_rows`` gives Table 2 itself, to fit without training. The
study returns its report; the CLI saves it with the figures of :mod:`jaxscale.plots.word2vec`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from jaxscale.laws.law import Law
from jaxscale.laws.registry import law_by_name
from jaxscale.support.atomic import write_text_atomic
from jaxscale.support.json_native import json_native, write_json

if TYPE_CHECKING:
    from jaxscale.fitting.approach3 import FitResult
    from jaxscale.tables.table import RunsTable

#: Mikolov et al. 2013a, Table 2: CBOW accuracy [%] on the top-30k subset of the analogy test,
#: rows = dimensionality, columns = training words (3 epochs, Google News subsets).
TABLE2_DIMS = (50, 100, 300, 600)
TABLE2_WORDS = (24_000_000, 49_000_000, 98_000_000, 196_000_000, 391_000_000, 783_000_000)
TABLE2_ACCURACY = (
    (13.4, 15.7, 18.6, 19.1, 22.5, 23.2),
    (19.4, 23.1, 27.8, 28.7, 33.4, 32.2),
    (23.2, 29.2, 35.3, 38.6, 43.7, 45.9),
    (24.0, 30.1, 36.5, 40.8, 46.6, 50.4),
)
#: Table 2's setting (2013a §3.1, §4.2): CBOW with four history and four future words (N = 8),
#: hierarchical softmax over the 30k-word vocabulary, 3 epochs.
TABLE2_SETTING = {"model": "cbow", "loss": "hs", "window": 4, "vocab_size": 30_000, "epochs": 3}


#: The laws the study fits, by their short names: ``word2vec-error-<name>`` of the registry
#: (:mod:`jaxscale.laws.word2vec_error`).
ERROR_LAWS = ("kaplan", "chinchilla")


def error_law_by_name(name: str) -> Law:
    """The study's law ``kaplan`` or ``chinchilla``."""
    if name not in ERROR_LAWS:
        raise ValueError(f"unknown error law {name!r}; choose one of {list(ERROR_LAWS)}")
    return law_by_name(f"word2vec-error-{name}")


@dataclass(frozen=True)
class ScalingGrid:
    """The grid of the study: dimensions x training words, and the shared settings.

    The default (CBOW / HS, 3 epochs, as Table 2) reaches 4-41% accuracy on the shared corpus,
    the regime of Table 2, and trains for about 20 minutes on 2 CPU cores; 1-epoch grids over
    fewer words stay near 0% and fit no law well.
    """

    dims: tuple[int, ...] = (25, 50, 100, 200)
    words: tuple[int, ...] = (4_000_000, 8_000_000, 16_000_000, 32_000_000)
    model: str = "cbow"  # Table 2 of Mikolov 2013a is CBOW with the hierarchical softmax
    loss: str = "hs"
    window: int = 5
    negative: int = 5
    epochs: int = 3
    restrict: int = 30_000
    seed: int = 1

    def __post_init__(self) -> None:
        if not self.dims or not self.words:
            raise ValueError("the grid needs at least one dimension and one corpus size")
        need = max(error_law_by_name(name).n_params for name in ERROR_LAWS) + 1
        if len(self.dims) * len(self.words) < need:
            raise ValueError(
                f"the grid has {len(self.dims) * len(self.words)} cells; fitting the 5-parameter law needs at least {need}"
            )
        if min(self.dims) < 1 or min(self.words) < 1000:
            raise ValueError(f"dims must be >= 1 and words >= 1000; got {self.dims}, {self.words}")


def cost_per_word(model: str, loss: str, dim: int, window: int, negative: int, vocab_size: int) -> float:
    """Q of Mikolov 2013a: Eq. (4) (CBOW) or Eq. (5) (skip-gram); NEG evaluates k + 1 outputs."""
    outputs = math.log2(vocab_size) if loss == "hs" else negative + 1
    if model == "cbow":
        return 2 * window * dim + dim * outputs
    return window * (dim + dim * outputs)


def published_rows() -> list[dict]:
    """Mikolov 2013a Table 2 as study rows (accuracy, error, Eq. 1 compute in Table 2's setting)."""
    s = TABLE2_SETTING
    rows = []
    for dim, accuracies in zip(TABLE2_DIMS, TABLE2_ACCURACY):
        q = cost_per_word(s["model"], s["loss"], dim, s["window"], 0, s["vocab_size"])
        for words, accuracy in zip(TABLE2_WORDS, accuracies):
            rows.append({"dim": dim, "words": words, "accuracy": accuracy, "error": 1.0 - accuracy / 100.0,
                         "q_per_word": q, "compute": s["epochs"] * words * q})
    return rows


def _cell_path(out: Path, dim: int, words: int) -> Path:
    return out / "cells" / f"d{dim}_w{words}.json"


def run_cell(
    all_words: list[str], dim: int, words: int, grid_: ScalingGrid, questions_vocab: set[str], progress: bool = False
) -> dict:
    """Train and score one (dimension, words) cell on the first ``words`` corpus words.

    Every cell answers the same questions: those whose words are all in ``questions_vocab``.
    """
    from jaxscale.networks.word2vec import Word2VecConfig
    from jaxscale.word2vec.analogy import evaluate_analogies
    from jaxscale.word2vec.train import prepare_corpus, train_word2vec

    vocab, ids = prepare_corpus(all_words[:words], min_count=5)
    config = Word2VecConfig(
        model=grid_.model, loss=grid_.loss, dim=dim, window=grid_.window, negative=grid_.negative,
        epochs=grid_.epochs, seed=grid_.seed,
    )
    result = train_word2vec(ids, vocab, config, progress=progress)
    analogy = evaluate_analogies(result.vectors, vocab.words, restrict=grid_.restrict, allowed=questions_vocab)
    q = cost_per_word(grid_.model, grid_.loss, dim, grid_.window, grid_.negative, len(vocab))
    return {
        "dim": dim,
        "words": words,
        "vocab_size": len(vocab),
        "accuracy": analogy.total,
        "semantic": analogy.semantic,
        "syntactic": analogy.syntactic,
        "coverage": analogy.coverage,
        "error": 1.0 - analogy.total / 100.0,
        "q_per_word": q,
        "compute": grid_.epochs * words * q,  # Eq. (1): O = E x T x Q
        "seconds": result.seconds,
        "words_per_second": result.words_per_second,
    }


def run_grid(corpus: str | Path, out: str | Path, grid_: ScalingGrid, progress: bool = True) -> list[dict]:
    """All cells of the grid, reusing the ones already saved under ``out/cells``."""
    from jaxscale.support.progress import progress_bar
    from jaxscale.word2vec.normalize import read_words
    from jaxscale.word2vec.vocab import build_vocab

    out = Path(out)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    settings = {k: v for k, v in dataclasses.asdict(grid_).items() if k not in ("dims", "words")}
    saved = out / "settings.json"
    if saved.is_file() and json.loads(saved.read_text()) != settings:
        raise ValueError(f"{out} holds cells trained with other settings ({saved}); use another --out")
    write_text_atomic(saved, json.dumps(settings))
    need = max(grid_.words)
    all_words = read_words(corpus, max_chars=need * 12)[:need]
    if len(all_words) < need:
        raise ValueError(f"corpus has {len(all_words):,} words, fewer than the largest grid size {need:,}")
    # the common question set: words among the top `restrict` of every cell's vocabulary
    questions_vocab = set.intersection(
        *(set(build_vocab(all_words[:w], min_count=5).words[: grid_.restrict]) for w in grid_.words)
    )
    rows = []
    cells = [(d, w) for d in grid_.dims for w in grid_.words]
    for dim, words in progress_bar(cells, desc="scaling grid", disable=not progress):
        path = _cell_path(out, dim, words)
        if path.is_file():
            rows.append(json.loads(path.read_text()))
            continue
        row = json_native(run_cell(all_words, dim, words, grid_, questions_vocab))  # as a resumed run reads it
        write_json(path, row)
        rows.append(row)
    return rows


def grid_table(rows: list[dict]) -> RunsTable:
    """The grid's cells as a runs table (d in the size column, T in the tokens column, the
    error, clipped away from 0, as the loss), validated once."""
    from jaxscale.tables.table import from_arrays

    return from_arrays([r["dim"] for r in rows], [r["words"] for r in rows],
                       np.clip([r["error"] for r in rows], 1e-6, None))


def fit_error_law(rows: list[dict], law: Law) -> FitResult:
    """Approach-3 fit of the error law ``law`` (:func:`error_law_by_name`), err(d, T), to the grid rows."""
    from jaxscale.fitting.approach3 import fit_approach3

    return fit_approach3(grid_table(rows), law=law)


def predicted_error(law: Law, params: NamedTuple, dims: Any, words: Any) -> np.ndarray:
    """The fitted law's error at (d, T) (float64, broadcast)."""
    import jax

    with jax.enable_x64(True):
        return np.asarray(law.loss(np.asarray(dims, np.float64), np.asarray(words, np.float64), params))


def rms_points(law: Law, params: NamedTuple, rows: list[dict]) -> float:
    """Root-mean-square residual of the fitted law, in accuracy points."""
    fitted = predicted_error(law, params, [r["dim"] for r in rows], [r["words"] for r in rows])
    observed = np.array([r["error"] for r in rows])
    return float(100.0 * np.sqrt(np.mean((fitted - observed) ** 2)))


def check_budget(budget: float | None) -> None:
    """A budget to split is a finite number > 0 (None: the largest cell's compute)."""
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise ValueError(f"the budget must be a finite number > 0; got {budget}")


def compute_optimal_split(law: Law, params: NamedTuple, budget: float, kappa: float) -> dict[str, float]:
    """The (d, T) minimising the fitted error on the budget kappa x d x T = ``budget``, and
    a = d log d* / d log budget (autodiff through the solve; T* grows as budget^(1 - a)).

    :func:`jaxscale.optimum.solver.optimal_log_n` solves the C = 6 N D problem, here with C = 6 budget /
    kappa, in the law's log space (finite over the solver's whole bracket); one solve gives
    log d* and, by its implicit derivative, a.
    """
    import jax
    import jax.numpy as jnp

    from jaxscale.optimum.solver import optimal_log_n

    check_budget(budget)
    with jax.enable_x64(True):
        params = jax.tree.map(lambda v: jnp.asarray(v, jnp.float64), params)
        log_c = jnp.log(6.0 * budget / kappa)
        log_dim, exponent = jax.value_and_grad(lambda y: optimal_log_n(law, params, y))(log_c)
        dim, exponent = math.exp(float(log_dim)), float(exponent)
    words = budget / (kappa * dim)
    err = float(predicted_error(law, params, dim, words))
    return {"budget": budget, "dim": dim, "words": words, "predicted_error": err,
            "predicted_accuracy": 100.0 * (1.0 - err), "exponent_dim": exponent, "exponent_words": 1.0 - exponent}


def fit_report(rows: list[dict], kappa: float, budget: float, law: str = "kaplan") -> dict:
    """Fit every error law to ``rows``; the split of ``budget`` under ``law`` (None when a fitted
    exponent is <= 0: no trade-off to optimise)."""
    fits, params = {}, {}
    for name in ERROR_LAWS:
        candidate = error_law_by_name(name)
        fit = fit_error_law(rows, candidate)
        params[name] = fit.params
        fits[name] = {"formula": candidate.formula, "params": fit.params._asdict(), "objective": fit.objective,
                      "rms_points": rms_points(candidate, fit.params, rows)}
    chosen = error_law_by_name(law)
    usable = bool(chosen.exponents_positive(params[law]))  # else the error does not fall along d or T
    return {
        "law": law,
        "formula": chosen.formula,
        "params": fits[law]["params"],
        "rms_points": fits[law]["rms_points"],
        "fits": fits,
        "kappa": kappa,
        "optimal": compute_optimal_split(chosen, params[law], budget, kappa) if usable else None,
    }


def study_report(rows: list[dict], epochs: int, *, law: str = "kaplan", budget: float | None = None,
                 **about) -> dict:
    """Fits and split for finished ``rows``; ``budget`` defaults to the largest cell's compute;
    ``about`` (source, grid) is stored with the report."""
    # kappa = Q / d: Q is linear in d for a fixed vocabulary (use the largest cell's vocabulary)
    largest = max(rows, key=lambda r: (r["words"], r["dim"]))
    kappa = largest["q_per_word"] / largest["dim"] * epochs
    report = fit_report(rows, kappa, largest["compute"] if budget is None else budget, law)
    return {**report, **about, "rows": rows}


def run_scaling_study(
    corpus: str | Path, out: str | Path, grid_: ScalingGrid = ScalingGrid(), *,
    law: str = "kaplan", budget: float | None = None, progress: bool = True,
) -> dict:
    """Grid (cells saved under ``out/cells``), fits and compute-optimal split."""
    error_law_by_name(law)
    rows = run_grid(corpus, out, grid_, progress)
    return study_report(rows, grid_.epochs, law=law, budget=budget, source="trained",
                        grid=dataclasses.asdict(grid_))


def run_published_study(*, law: str = "kaplan", budget: float | None = None) -> dict:
    """The same fits and split on Mikolov 2013a Table 2 instead of trained cells."""
    return study_report(published_rows(), TABLE2_SETTING["epochs"], law=law, budget=budget,
                        source="Mikolov et al. 2013a, Table 2", grid=TABLE2_SETTING)
