"""Text side of word2vec: normaliser, vocabulary, subsampling, noise distribution, Huffman, phrases."""

from __future__ import annotations

import heapq
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxscale.word2vec.huffman import build_huffman
from jaxscale.word2vec.normalize import normalize_lower, normalize_none, normalize_text8, normalizer, read_words
from jaxscale.word2vec.phrases import join_phrases, learn_phrases, score_bigrams
from jaxscale.word2vec.vocab import (
    build_vocab,
    encode,
    keep_probability,
    noise_distribution,
    sample_noise,
)


def test_normalize_text8_rules():
    assert normalize_text8("In 1984, <b>Orwell</b> wrote:\nBIG-Brother!") == (
        "in one nine eight four orwell wrote big brother"
    )
    assert normalize_text8("  ...  ") == ""


def test_lower_and_none_keep_words_of_any_script():
    assert normalize_lower("Die Straße, w123 und Ça!") == "die straße w123 und ça"
    assert normalize_none("  Die Straße,\n w123  ") == "Die Straße, w123"
    with pytest.raises(ValueError, match="normalize must be one of text8, lower, none; got 'upper'"):
        normalizer("upper")


def test_english_prose_is_not_warned_about(tmp_path, recwarn):
    words = [f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(300)]
    corpus = tmp_path / "prose.txt"
    corpus.write_text(" ".join(f"{w.capitalize()}," if i % 7 == 0 else w for i, w in enumerate(words * 3)))
    assert len(set(read_words(corpus))) == 300 and not recwarn.list


def test_vocab_min_count_order_and_encode():
    tokens = "b a b c b a d".split()
    vocab = build_vocab(tokens, min_count=2)
    assert vocab.words == ("b", "a")
    assert vocab.counts.tolist() == [3, 2]
    assert encode(tokens, vocab).tolist() == [0, 1, 0, 0, 1]


@pytest.mark.parametrize("tokens,match", [([], "corpus is empty"), (["a", "b"], "vocabulary is empty")])
def test_vocab_bad_input(tokens, match):
    with pytest.raises(ValueError, match=match):
        build_vocab(tokens, min_count=2)


def test_keep_probability_matches_formulas():
    counts = np.array([10_000, 1_000, 100, 10, 1])
    t = 1e-3
    f = counts / counts.sum()
    paper = keep_probability(counts, t, "paper")
    np.testing.assert_allclose(1 - paper, np.maximum(1 - np.sqrt(t / f), 0.0))  # Eq. (5) discard prob
    tool = keep_probability(counts, t, "word2vec")
    np.testing.assert_allclose(tool, np.minimum(np.sqrt(t / f) + t / f, 1.0))
    assert paper[0] < tool[0] < 1 and tool[-1] == 1.0
    np.testing.assert_array_equal(keep_probability(counts, 0.0), 1.0)


def test_subsampling_empirical_rate():
    """The training stream keeps each word at its formula rate (within sampling error)."""
    from jaxscale.networks.word2vec import Word2VecConfig
    from jaxscale.word2vec.examples import epoch_examples

    rng = np.random.default_rng(0)
    ids = rng.choice(4, size=200_000, p=[0.7, 0.2, 0.07, 0.03]).astype(np.int32)
    counts = np.bincount(ids)
    keep = keep_probability(counts, 0.05).astype(np.float32)
    config = Word2VecConfig(model="cbow", sample=0.05, window=1, sentence_length=10**9)
    centres = np.concatenate([ex["targets"] for ex in epoch_examples(ids, keep, config, 0)])
    rate = np.bincount(centres, minlength=4) / counts
    tolerance = 4 * np.sqrt(keep * (1 - keep) / counts) + 1e-4
    assert np.all(np.abs(rate - keep) <= tolerance), (rate, keep)
    assert keep[0] < 0.5  # the check is not vacuous: the frequent word is heavily subsampled


def test_noise_distribution_is_unigram_to_three_quarters():
    counts = np.array([81, 16, 1])
    p = noise_distribution(counts)
    np.testing.assert_allclose(p, np.array([27, 8, 1]) / 36)
    draws = sample_noise(np.cumsum(p), (200_000,), np.random.default_rng(1))
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / draws.size, p, atol=0.005)


def _huffman_cost(counts) -> int:
    """Optimal expected code length x total count: the sum of all merge weights."""
    heap = list(int(c) for c in counts)
    heapq.heapify(heap)
    cost = 0
    while len(heap) > 1:
        merged = heapq.heappop(heap) + heapq.heappop(heap)
        cost += merged
        heapq.heappush(heap, merged)
    return cost


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 1000), min_size=2, max_size=60))
def test_huffman_prefix_free_and_optimal(counts):
    tree = build_huffman(np.array(counts))
    codes = ["".join(map(str, tree.codes[w, : tree.lengths[w]])) for w in range(len(counts))]
    assert len(set(codes)) == len(codes)
    for a in codes:
        assert not any(b != a and b.startswith(a) for b in codes)
    assert int(np.dot(tree.lengths, counts)) == _huffman_cost(counts)
    # paths start at the root (inner node V-2) and inner nodes are shared consistently
    assert (tree.points[:, 0] == len(counts) - 2).all()
    assert tree.points.max() <= len(counts) - 2


def test_huffman_frequent_words_get_short_codes():
    tree = build_huffman(np.array([1000, 10, 10, 10, 1]))
    assert tree.lengths[0] == 1 and tree.lengths[4] == tree.lengths.max()


def test_bigram_score_is_equation_6():
    tokens = "a b a b a b c d c a".split()
    scores = score_bigrams(tokens, min_count=1, delta=1.0)
    counts = Counter(tokens)
    assert scores[("a", "b")] == pytest.approx((3 - 1) / (counts["a"] * counts["b"]) * len(tokens))
    assert ("d", "c") not in scores  # count 1 is not above delta


def test_phrases_two_passes_build_trigram():
    rng = np.random.default_rng(0)
    filler = [f"w{i}" for i in range(300)]
    tokens = []
    for _ in range(30_000):
        r = rng.random()
        if r < 0.02:
            tokens += ["new", "york", "times"]
        elif r < 0.06:
            tokens += ["new", "york"]
        elif r < 0.10:
            tokens.append("times")
        else:
            tokens.append(filler[rng.integers(len(filler))])
    joined, passes = learn_phrases(tokens, passes=2, threshold=5.0)
    assert set(passes[0].phrases) == {("new", "york")}
    assert ("new_york", "times") in passes[1].phrases
    counts = Counter(joined)
    assert counts["new_york_times"] > 400 and counts["new"] == 0
    assert not any(w.startswith("w") and "_" in w for w in counts)  # random pairs stay apart


def test_join_phrases_is_greedy_left_to_right():
    assert join_phrases("a b c b c".split(), {("a", "b"), ("b", "c")}) == ["a_b", "c", "b_c"]
    assert join_phrases("x b b b b".split(), {("b", "b")}) == ["x", "b_b", "b_b"]
