"""Byte-level BPE tokenizer and the memory-mapped token store."""

import gzip
import re

import numpy as np
import pytest

from jaxscale.lm.tokenizer import (
    END_OF_TEXT,
    load_or_train_tokenizer,
    load_tokenizer,
    train_tokenizer,
)
from jaxscale.lm.tokens import TokenBatches, prepare_tokens

TEXT = (
    "Anarchism is a political philosophy that advocates self-governed societies.\n"
    "Ærøskøbing, naïve café — 東京 and emoji 🚀 survive a byte-level round trip.\n"
    "  Leading spaces,\ttabs and <br> tags are kept exactly.\n"
) * 40


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "text.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(TEXT)
    return path


def test_round_trip_and_vocab_size(corpus):
    tok = train_tokenizer(corpus, vocab_size=300)
    assert tok.get_vocab_size() <= 300 and tok.token_to_id(END_OF_TEXT) is not None
    for text in (TEXT[:500], "unseen wörds ✓ 12345\n\n", ""):
        assert tok.decode(tok.encode(text).ids) == text
    # merges learned on the corpus compress it below one token per byte
    assert len(tok.encode(TEXT).ids) < 0.9 * len(TEXT.encode())


def test_saved_tokenizer_file_is_reloaded(corpus, tmp_path):
    path = tmp_path / "tok.json"
    first = load_or_train_tokenizer(path, corpus, 280)
    assert path.is_file()
    again = load_tokenizer(path)
    assert again.encode(TEXT[:200]).ids == first.encode(TEXT[:200]).ids


def test_bad_inputs_raise_clear_errors(corpus, tmp_path):
    with pytest.raises(ValueError, match="vocab_size"):
        train_tokenizer(corpus, vocab_size=100)
    with pytest.raises(FileNotFoundError, match="tokenizer file not found"):
        load_tokenizer(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a valid tokenizer.json"):
        load_tokenizer(bad)
    with pytest.raises(FileNotFoundError, match="corpus not found"):
        train_tokenizer(tmp_path / "nope.txt", 300)


@pytest.mark.parametrize("name, data, problem", [
    ("utf16.txt", TEXT.encode("utf-16"), "UTF-16 text"),
    ("latin1.txt", TEXT.encode("latin-1", "replace"), "not UTF-8 text"),
    ("cut.txt.gz", gzip.compress(TEXT.encode(), mtime=0)[:200], "the gzip stream ends early"),
], ids=["utf16", "latin1", "truncated gzip"])
def test_a_corpus_that_is_not_utf8_text_is_refused_before_tokenising(tmp_path, name, data, problem):
    """The wing reads corpora through jaxscale.support.corpus, as word2vec does: no BPE is
    trained on replacement characters, and no token file is written."""
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError, match=f"{re.escape(str(path))}: .*{problem}"):
        prepare_tokens(path, tmp_path / "tokens", vocab_size=300)
    assert not list((tmp_path / "tokens").glob("*.npy"))


def test_token_store_is_cached_memmap_and_batches_are_deterministic(corpus, tmp_path):
    tok, ids = prepare_tokens(corpus, tmp_path, vocab_size=300)
    assert isinstance(ids, np.memmap) and ids.dtype == np.uint16
    assert tok.decode(ids[:-1].tolist()) == TEXT  # documents joined, end-of-text appended
    stored = sorted(p.name for p in tmp_path.iterdir())
    _, again = prepare_tokens(corpus, tmp_path, vocab_size=300)
    assert sorted(p.name for p in tmp_path.iterdir()) == stored
    np.testing.assert_array_equal(again, ids)

    data = TokenBatches(ids, n_ctx=8, batch_size=4, val_fraction=0.1)
    np.testing.assert_array_equal(data.train_batch(3, seed=1), data.train_batch(3, seed=1))
    assert not np.array_equal(data.train_batch(3, seed=1), data.train_batch(4, seed=1))
    assert not np.array_equal(data.train_batch(3, seed=1), data.train_batch(3, seed=2))
    batch = data.train_batch(0)
    assert batch.shape == (4, 9) and batch.dtype == np.int32
    val = data.val_batches(3)
    assert val.shape == (3, 4, 9)
    np.testing.assert_array_equal(val, data.val_batches(3))
    # held out: training windows end at or before the split, validation windows start after it
    n = data.n_ctx + 1
    for step in range(50):
        starts = data.train_starts(step)
        assert (starts + n <= data.split).all()
        np.testing.assert_array_equal(data.train_batch(step), np.stack([ids[s : s + n] for s in starts]))
    vstarts = data.val_starts(3)
    assert (vstarts >= data.split).all() and (vstarts + n <= len(ids)).all()
    np.testing.assert_array_equal(val.reshape(-1, n), np.stack([ids[s : s + n] for s in vstarts]))


def test_too_short_token_array_is_rejected():
    with pytest.raises(ValueError, match="too few"):
        TokenBatches(np.arange(20, dtype=np.uint16), n_ctx=8, batch_size=2, val_fraction=0.1)
