"""The corpus most word2vec tests train on."""

from __future__ import annotations

import pytest

from jaxscale.word2vec.train import prepare_corpus
from tests.word2vec.test_word2vec import synthetic_words


@pytest.fixture(scope="module")
def corpus():
    """Two topics' words, 6000 of them, as (vocabulary, ids) with min_count 5."""
    return prepare_corpus(synthetic_words(), min_count=5)
