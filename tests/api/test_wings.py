"""The training wings' verbs refuse a bad argument in one line naming it, before any training
(the work is replaced by a function that fails the test if called)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import jaxscale as js

#: The work each verb must not start, as (module, attribute).
WORK = [("jaxscale.lm.sweep", "run_sweep"), ("jaxscale.word2vec.train", "train_from_file"),
        ("jaxscale.word2vec.scaling", "run_scaling_study"), ("jaxscale.word2vec.scaling", "run_published_study")]


def _never(*_, **__):
    raise AssertionError("the work started before the arguments were checked")


@pytest.fixture
def no_work(monkeypatch):
    for module, attribute in WORK:
        monkeypatch.setattr(importlib.import_module(module), attribute, _never)


@pytest.fixture
def files(tmp_path):
    """A corpus, a vector file and a file where a directory is expected."""
    from jaxscale.word2vec.vector_files import save_word2vec

    corpus, vectors, a_file = tmp_path / "corpus.txt", tmp_path / "vectors.txt", tmp_path / "a_file"
    corpus.write_text("the cat sat on the mat\n")
    save_word2vec(vectors, np.eye(2, dtype=np.float32), ["cat", "mat"])
    a_file.write_text("")
    return {"corpus": str(corpus), "vectors": str(vectors), "file": str(a_file), "out": str(tmp_path / "out")}


@pytest.mark.parametrize("call, message", [
    (lambda f: js.sweep(), "give exactly one of config"),
    (lambda f: js.sweep("sweep.toml", preset="smoke"), "give exactly one of config"),
    (lambda f: js.sweep(preset="nope"), "unknown preset 'nope'"),
    (lambda f: js.sweep(42), "config must be a .json or .toml file or a SweepConfig, got int"),
    (lambda f: js.sweep(preset="smoke", microbatches=0), "microbatches must be >= 1, got 0"),
    (lambda f: js.sweep(preset="smoke", corpus=f["corpus"], out=f["file"]), "exists and is not a directory"),
    (lambda f: js.sweep(preset="smoke", corpus=f["corpus"], out=f["out"], coordinator="nohost"), "HOST:PORT"),
    (lambda f: js.sweep_status(), "give exactly one of config"),
    (lambda f: js.sweep_status(preset="nope"), "unknown preset 'nope'"),
    (lambda f: js.train_word2vec(f["corpus"], f["out"], dim=0), "dim must be >= 1; got 0"),
    (lambda f: js.train_word2vec(f["corpus"], f["out"], phrases=-1), "phrases must be >= 0"),
    (lambda f: js.train_word2vec(f["corpus"], f["out"], max_chars=0), "max_chars must be >= 1"),
    (lambda f: js.train_word2vec(f["corpus"], f["out"], model="rnn"), "model must be one of"),
    (lambda f: js.train_word2vec(f["corpus"], f["file"]), "a_file: exists and is not a directory"),
    (lambda f: js.score_vectors(f["vectors"], restrict=0), "restrict must be >= 1"),
    (lambda f: js.query_vectors(f["vectors"], ["cat"], topn=0), "topn must be >= 1, got 0"),
    (lambda f: js.word2vec_scaling(out=f["out"]), "give either corpus"),
    (lambda f: js.word2vec_scaling(f["corpus"], published="mikolov-2013a", out=f["out"]), "give either corpus"),
    (lambda f: js.word2vec_scaling(published="nope", out=f["out"]), "published must be one of mikolov-2013a"),
    (lambda f: js.word2vec_scaling(published="mikolov-2013a", out=f["out"], law="nope"), "unknown error law 'nope'"),
    (lambda f: js.word2vec_scaling(published="mikolov-2013a", out=f["out"], budget=-1.0), "budget must be a finite"),
    (lambda f: js.word2vec_scaling(f["corpus"], out=f["out"], model="rnn"), "model must be one of"),
    (lambda f: js.word2vec_scaling(f["corpus"], out=f["out"], epochs=0), "epochs must be >= 1, got 0"),
    (lambda f: js.word2vec_scaling(f["corpus"], out=f["out"], dims=[8]), "the grid has 4 cells"),
])
def test_a_bad_argument_is_refused_by_name_before_any_training(no_work, files, call, message):
    with pytest.raises(ValueError) as refused:
        call(files)
    assert message in str(refused.value) and len(str(refused.value).splitlines()) == 1
