"""One way in, one shape out (issue 36): every public verb is annotated with one result class,
and in each mode its docstring documents it returns exactly that class (not a subclass, not
another verb's result): a mode is an argument, never a flag that changes the type."""

from __future__ import annotations

import inspect
import sys
from types import SimpleNamespace
from typing import Any, Callable

import jax
import numpy as np
import pandas as pd
import pytest

import jaxscale as js
from jaxscale._api._results import Result
from jaxscale.accuracy import synthetic_ladder
from jaxscale.laws import chinchilla as ch
from jaxscale.laws import multipower
from tests.api.test_verbs import _runs
from tests.hyperparameters.test_per_group import _grid
from tests.planning.test_recipes import scaled
from tests.reconciliation.test_on_runs import RUN_BY, sweep_table

#: Tiny chains fail the convergence checks by design: their warnings are not under test here.
pytestmark = pytest.mark.filterwarnings("ignore::jaxscale.inference.diagnostics.SamplingWarning")

#: Every public verb (a function of ``jaxscale.__all__``), by name.
VERBS = {name: getattr(js, name) for name in js.__all__ if inspect.isfunction(getattr(js, name))}
#: Tiny NUTS runs: the return type, not the posterior, is under test.
NUTS = {"chains": 1, "warmup": 30, "samples": 30}


def returned_class(verb: Callable[..., Any]) -> type:
    """The one class ``verb``'s return annotation names (an error for a union or an optional)."""
    annotation = inspect.signature(verb).return_annotation
    assert isinstance(annotation, str) and annotation.isidentifier(), \
        f"{verb.__name__} is annotated {annotation!r}: one class, not a union"
    value = vars(sys.modules[verb.__module__]).get(annotation)
    assert isinstance(value, type), f"{verb.__name__}'s {annotation!r} is not a class of {verb.__module__}"
    return value


def _isoflops() -> pd.DataFrame:
    """Isoflop profiles of Epoch's law: 9 sizes about the optimum at each of 4 budgets."""
    rows = []
    with jax.enable_x64(True):
        for c in np.geomspace(1e18, 1e21, 4):
            best = float(ch.compute_optimal_n(c, ch.EPOCH))
            rows += [(n, c, float(ch.loss_at_compute(n, c, ch.EPOCH))) for n in np.geomspace(best / 6, best * 6, 9)]
    return pd.DataFrame(rows, columns=["params", "flops", "loss"])


def _recipes(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` as recipe A beside a recipe B worth twice its compute, named in ``recipe``."""
    with jax.enable_x64(True):
        better = np.asarray(ch.loss(runs.N.to_numpy(), runs.D.to_numpy(), scaled(ch.EPOCH)))
    return pd.concat([runs.assign(recipe="A"), runs.assign(loss=better, recipe="B")], ignore_index=True)


def _curves(tmp_path_factory) -> str:
    """Loss curves of one model under three schedules (:func:`tests.curves.test_lr_annealing_fit.synthetic_runs`)."""
    from tests.curves.test_lr_annealing_fit import synthetic_runs

    path = tmp_path_factory.mktemp("one_type_curves") / "curves.csv"
    synthetic_runs(steps=200).to_csv(path, index=False)
    return str(path)


def _wings_inputs(directory) -> dict[str, str]:
    """A tiny corpus (two topics' words) and a vector file of three words, for the wings' verbs."""
    from jaxscale.word2vec.vector_files import save_word2vec
    from tests.word2vec.test_word2vec import synthetic_words

    corpus, vectors = directory / "corpus.txt", directory / "vectors.txt"
    corpus.write_text(" ".join(synthetic_words(3000)) + "\n")
    save_word2vec(vectors, np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]], dtype=np.float32), ["aa", "ab", "ba"])
    return {"corpus": str(corpus), "vectors": str(vectors), "out": str(directory)}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> SimpleNamespace:
    """The inputs of every mode, and the fit and posterior that other verbs take."""
    frame = _runs()
    path = tmp_path_factory.mktemp("one_type") / "runs.csv"
    frame.to_csv(path, index=False)
    recipes = _recipes(frame)
    fitted = js.fit(frame, bootstrap=4)
    posterior = js.bayes(frame, laplace=True, seed=0)
    return SimpleNamespace(**_wings_inputs(tmp_path_factory.mktemp("one_type_wings")),
                           frame=frame, csv=str(path), fitted=fitted, posterior=posterior, recipes=recipes,
                           baseline=recipes[recipes.recipe == "A"].drop(columns="recipe"),
                           candidate=recipes[recipes.recipe == "B"].drop(columns="recipe"),
                           sweep=js.load_runs(sweep_table(noise=0.005), run_by=RUN_BY),
                           grid=_grid(noise=0.002), isoflops=_isoflops(), curves=_curves(tmp_path_factory))


#: (verb, mode, call): each mode a verb's docstring documents.
MODES = [
    ("load_runs", "a CSV path", lambda d: js.load_runs(d.csv)),
    ("load_runs", "a DataFrame", lambda d: js.load_runs(d.frame, drop_highest=2)),
    ("fit", "Approach 3", lambda d: js.fit(d.frame)),
    ("fit", "bootstrap, another law", lambda d: js.fit(d.csv, law="chinchilla-tied", bootstrap=3)),
    ("frontier", "Approach 1", lambda d: js.frontier(d.sweep, 1)),
    ("frontier", "Approach 2", lambda d: js.frontier(d.isoflops, 2, bootstrap=3)),
    ("isoflop", "resampled", lambda d: js.isoflop(d.isoflops, resamples=3)),
    ("isoflop", "seed noise, one rule", lambda d: js.isoflop(d.isoflops, rules=["akima"], interval="seed-noise")),
    ("bayes", "Laplace", lambda d: js.bayes(d.frame, laplace=True)),
    ("bayes", "Laplace with a holdout", lambda d: js.bayes(d.frame, laplace=True, holdout=5e8)),
    ("bayes", "NUTS", lambda d: js.bayes(d.frame, **NUTS)),
    ("bayes_grouped", "NUTS", lambda d: js.bayes_grouped(d.recipes, "recipe", **NUTS)),
    ("loo", "laws", lambda d: js.loo(d.frame, ("chinchilla", "chinchilla-tied"), **NUTS)),
    ("loo", "sharing", lambda d: js.loo(d.recipes, group_by="recipe", **NUTS)),
    ("sensitivity", "a fit", lambda d: js.sensitivity(d.fitted, top=1)),
    ("sensitivity", "a posterior", lambda d: js.sensitivity(d.posterior)),
    ("sensitivity", "draws", lambda d: js.sensitivity(d.posterior.draws)),
    ("sensitivity", "runs", lambda d: js.sensitivity(d.frame, bootstrap=0, top=1)),
    ("sensitivity", "a published set", lambda d: js.sensitivity(published="epoch")),
    ("reconcile", "a published set", lambda d: js.reconcile("chinchilla")),
    ("reconcile", "runs", lambda d: js.reconcile(runs=d.sweep, bootstrap=2)),
    ("allocate", "a fit", lambda d: js.allocate(d.fitted, 1e22)),
    ("allocate", "a posterior", lambda d: js.allocate(d.posterior, [1e22, 1e24])),
    ("allocate", "draws", lambda d: js.allocate(d.posterior.draws, 1e22)),
    ("allocate", "a law's published set", lambda d: js.allocate("chinchilla", 1e22, published="epoch")),
    ("allocate_data_constrained", "Muennighoff's set", lambda d: js.allocate_data_constrained(1e22, 1e10)),
    ("design", "from the priors", lambda d: js.design(budget=1e21, max_runs=1)),
    ("design", "from runs", lambda d: js.design(d.frame, target="a:1e22", budget=1e20, max_runs=1)),
    ("compare", "two tables", lambda d: js.compare(d.baseline, d.candidate, names=["A", "B"], bootstrap=2)),
    ("compare", "one table by group", lambda d: js.compare(d.recipes, group_by="recipe", bootstrap=2)),
    ("hparams", "per group", lambda d: js.hparams(d.grid, sequence_length=2048, bootstrap=0, joint=False)),
    ("hparams", "joint law", lambda d: js.hparams(d.grid, sequence_length=2048, bootstrap=0)),
    ("published_hparams", "DeepSeek", lambda d: js.published_hparams("deepseek", compute=1e24)),
    ("published_hparams", "Step Law", lambda d: js.published_hparams("steplaw", n=7e9, tokens=1.4e12)),
    ("schedule", "a published set", lambda d: js.schedule(published="luo-25m", steps=200, peak_lr=3e-4,
                                                          iterations=2)),
    ("schedule", "parameters", lambda d: js.schedule(multipower.PUBLISHED_25M, steps=200, peak_lr=3e-4,
                                                     iterations=2)),
    ("model_params", "a configuration", lambda d: js.model_params({"d_model": 64, "n_layer": 2, "n_head": 2,
                                                                   "vocab_size": 100, "n_ctx": 32})),
    ("curve", "the annealing law", lambda d: js.curve(d.curves, fit_runs=["11760_constant", "11760_cosine"],
                                                      predict=["11760_wsd"], skip_warmups=0)),
    ("curve", "the multi-power law", lambda d: js.curve(d.curves, law="multipower",
                                                        fit_runs=["11760_constant", "11760_cosine"],
                                                        predict=["11760_wsd"])),
    ("runs", "a table", lambda d: js.runs(d.csv)),
    ("downstream", "a synthetic ladder", lambda d: js.downstream(
        synthetic_ladder.draw_ladder(0).frame.query("n_params <= 1e9"), synthetic_ladder.TASK, target=(2.8e9, 3e11),
        chance=0.25, intermediate=synthetic_ladder.INTERMEDIATE, bootstrap=2)),
    ("sweep", "a preset", lambda d: js.sweep(preset="smoke", out=f"{d.out}/sweep", progress=False)),
    ("sweep_status", "a fresh directory", lambda d: js.sweep_status(preset="smoke", corpus=d.corpus,
                                                                      out=f"{d.out}/none")),
    ("train_word2vec", "a corpus", lambda d: js.train_word2vec(d.corpus, f"{d.out}/w2v", dim=8, progress=False)),
    ("score_vectors", "a vector file", lambda d: js.score_vectors(d.vectors)),
    ("query_vectors", "neighbours", lambda d: js.query_vectors(d.vectors, ["aa"], topn=1)),
    ("query_vectors", "odd one out", lambda d: js.query_vectors(d.vectors, ["aa", "ab", "ba"], odd_one_out=True)),
    ("word2vec_scaling", "a published grid", lambda d: js.word2vec_scaling(published="mikolov-2013a",
                                                                            out=f"{d.out}/scaling")),
]
#: Modes of tens of seconds on a CPU (NUTS, bootstraps of grouped fits, backtests, the
#: reconciliation's simulations, the wings' training), opt-in with the slow tests.
SLOW = {("bayes", "NUTS"), ("bayes", "Laplace with a holdout"), ("bayes_grouped", "NUTS"), ("loo", "laws"),
        ("loo", "sharing"), ("compare", "two tables"), ("compare", "one table by group"), ("hparams", "joint law"),
        ("reconcile", "runs"), ("sensitivity", "runs"),
        ("isoflop", "resampled"), ("isoflop", "seed noise, one rule"), ("sweep", "a preset"),
        ("train_word2vec", "a corpus")}


@pytest.mark.parametrize("name", sorted(VERBS))
def test_every_verb_is_annotated_with_one_class(name):
    cls = returned_class(VERBS[name])
    assert cls is js.RunsTable or issubclass(cls, Result)  # a table, or a verb's result


def test_every_verb_has_its_modes_checked():
    assert sorted(VERBS) == sorted({verb for verb, _, _ in MODES})


@pytest.mark.parametrize("name, mode, call", [
    pytest.param(*m, marks=pytest.mark.slow) if m[:2] in SLOW else m for m in MODES],
    ids=[f"{verb}: {mode}" for verb, mode, _ in MODES])
def test_each_mode_returns_exactly_the_annotated_class(data, name, mode, call):
    assert type(call(data)) is returned_class(VERBS[name])


def test_the_fitted_results_are_fitted(data):
    """FitReport and Posterior offer law, params, draws and runs (:class:`jaxscale.Fitted`),
    which allocate and sensitivity read instead of asking which verb made them."""
    for result in (data.fitted, data.posterior):
        assert isinstance(result, js.Fitted) and result.law is ch.LAW and result.runs is not None
        assert isinstance(result.draws, js.Draws) and type(result.params) is ch.ChinchillaParams
    assert data.posterior.params == data.posterior.draws.median()
    assert not isinstance(js.frontier(data.isoflops), js.Fitted)


@pytest.mark.parametrize("call, message", [
    (lambda d: js.fit(d.frame, law="nope"), "unknown law 'nope'"),
    (lambda d: js.frontier(d.isoflops, 3), "approach must be 1 or 2, got 3"),
    (lambda d: js.sensitivity("epoch"), "epoch"),  # a string is a path, never a published name
    (lambda d: js.sensitivity(d.frame, published="epoch"), "give one"),
    (lambda d: js.allocate("data-constrained", 1e22), "allocate_data_constrained"),
    (lambda d: js.allocate_data_constrained(1e22, 1e10, law="chinchilla"), "not chinchilla"),
    (lambda d: js.allocate(js.frontier(d.isoflops), 1e22), "got FrontierReport"),
    (lambda d: js.loo(d.frame), "give one of them"),
    (lambda d: js.compare(d.recipes), "or one table with group_by"),
    (lambda d: js.compare(d.baseline, d.candidate, names=["A"]), "names must name each of the 2 recipes once"),
    (lambda d: js.schedule(ch.EPOCH, steps=10, peak_lr=1e-3), "got ChinchillaParams"),
])
def test_a_wrong_input_is_named_in_one_line(data, call, message):
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        call(data)
