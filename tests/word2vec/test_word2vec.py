"""word2vec model, training, evaluation, interop and CLI."""

from __future__ import annotations

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxscale.cli import main
from jaxscale.networks.word2vec import (
    MIN_STEPS_PER_CHUNK,
    Batch,
    Word2VecConfig,
    huffman_paths,
    init_params,
    log_sigmoid_and_complement,
    path_entries,
    sgd_step,
)
from jaxscale.word2vec.analogy import default_analogy_path, evaluate_analogies
from jaxscale.word2vec.examples import pack_paths, span_windows, to_batches, with_halo
from jaxscale.word2vec.huffman import build_huffman
from jaxscale.word2vec.neighbours import nearest_neighbours, odd_one_out
from jaxscale.word2vec.train import prepare_corpus, train_word2vec
from jaxscale.word2vec.vector_files import load_word2vec, save_word2vec

TINY = Word2VecConfig(dim=8, batch=32, neg_block=8, steps_per_chunk=4, sentence_length=50, sample=1e-2, epochs=2)


def synthetic_words(n: int = 6000, seed: int = 0) -> list[str]:
    """Two topics whose words co-occur in runs, so embeddings have structure to find."""
    rng = np.random.default_rng(seed)
    letters = "abcdefghijklmno"
    topics = [["a" + c for c in letters], ["b" + c for c in letters]]
    words = []
    while len(words) < n:
        topic = topics[rng.integers(2)]
        words += [topic[j] for j in rng.integers(len(topic), size=8)]
    return words


def step_batch(tree=None, **fields) -> Batch:
    """A one-step :class:`Batch` from its example fields, with the targets' paths packed when a
    Huffman tree is given (unused, and zeros, otherwise)."""
    if tree is None:
        packed = owners = np.zeros((1, 1, 1), np.int32)
    else:
        alive = np.asarray(fields["alpha"])[None] > 0
        packed, owners = pack_paths(np.asarray(fields["targets"])[None], alive, np.asarray(tree.paths), 1)
    return Batch(**fields, paths=jnp.asarray(packed[0]), path_owner=jnp.asarray(owners[0]))


def test_span_windows_respect_radius_and_sentences():
    words, sentence = with_halo(np.array([10, 11, 12, 13, 14, 15]), np.array([0, 0, 0, 0, 1, 1]), halo=2)
    centres = [1, 2, 3]  # positions in the kept words; the span starts C = 2 before the first
    inputs, mask, targets = span_windows(words[1:8], sentence[1:8], radius=np.array([1, 2, 2]), window=2)
    got = {(c, int(inputs[r, j])) for r, c in enumerate(centres) for j in range(4) if mask[r, j]}
    assert got == {(1, 10), (1, 12), (2, 10), (2, 11), (2, 13), (3, 11), (3, 12)}
    assert (inputs[~mask] == 0).all() and targets.tolist() == [11, 12, 13]
    # the halo lies in no sentence: the first word's left slots are empty
    first, first_mask, _ = span_windows(words[0:5], sentence[0:5], radius=np.array([2]), window=2)
    assert first_mask.tolist() == [[False, False, True, True]] and first[0, 2:].tolist() == [11, 12]


@pytest.mark.parametrize("model,loss", [("skipgram", "neg"), ("skipgram", "hs"), ("cbow", "neg"), ("cbow", "hs")])
def test_sgd_step_follows_the_log_likelihood_gradient(model, loss):
    """One SGD step equals alpha x grad of the log-likelihood (Eq. 3 / Eq. 4 of Mikolov 2013b)."""
    config = Word2VecConfig(model=model, loss=loss, dim=4, batch=4, neg_block=2, negative=2)
    counts = np.array([9, 7, 5, 3, 2, 1])
    tree = huffman_paths(*build_huffman(counts)) if loss == "hs" else None
    params = init_params(6, config)
    params = params._replace(w_out=jax.random.normal(jax.random.key(0), params.w_out.shape, jnp.float32) * 0.3)
    # skip-gram NEG trains one (context, centre) pair per example; the others a centre's whole context
    pairs = model == "skipgram" and loss == "neg"
    inputs = jnp.array([0, 1, 2, 3]) if pairs else jnp.array([[0, 1], [1, 2], [2, 3], [3, 4]])
    batch = step_batch(
        tree,
        inputs=inputs,
        input_mask=jnp.ones((4, 2), jnp.float32),
        targets=jnp.array([5, 4, 0, 1]),
        alpha=jnp.full(4, 0.1, jnp.float32),
        negatives=jnp.array([[2, 3], [5, 0]]),
    )
    new, nll = sgd_step(params, batch, config, tree)

    def loglik(p):
        return -sgd_step(p, batch, config, tree)[1]

    grad = jax.grad(loglik)(params)
    np.testing.assert_allclose(new.w_out - params.w_out, 0.1 * grad.w_out, atol=1e-6)
    if model == "skipgram":  # each pair's step goes to its own context word
        np.testing.assert_allclose(new.w_in - params.w_in, 0.1 * grad.w_in, atol=1e-6)
    else:  # word2vec gives each context word the full step for the mean h: 2 words x gradient
        np.testing.assert_allclose(new.w_in - params.w_in, 2 * 0.1 * grad.w_in, atol=1e-6)
    assert float(nll) > 0


@pytest.mark.parametrize("model,loss", [("skipgram", "hs"), ("cbow", "neg"), ("cbow", "hs")])
def test_empty_context_slots_move_no_row(model, loss):
    """Padding slots (mask 0, row 0) are skipped, not stepped: with one real context word per
    example the step is alpha x grad on every row, row 0 included (it is no example's input)."""
    config = Word2VecConfig(model=model, loss=loss, dim=4, batch=4, neg_block=2, negative=2)
    counts = np.array([9, 7, 5, 3, 2, 1])
    tree = huffman_paths(*build_huffman(counts)) if loss == "hs" else None
    params = init_params(6, config)
    params = params._replace(w_out=jax.random.normal(jax.random.key(1), params.w_out.shape, jnp.float32) * 0.3)
    batch = step_batch(
        tree,
        inputs=jnp.array([[1, 0], [0, 2], [3, 0], [0, 4]]),
        input_mask=jnp.array([[1, 0], [0, 1], [1, 0], [0, 1]], jnp.float32),
        targets=jnp.array([5, 4, 0, 1]),
        alpha=jnp.full(4, 0.1, jnp.float32),
        negatives=jnp.array([[2, 3], [5, 0]]),
    )
    new, _ = sgd_step(params, batch, config, tree)
    grad = jax.grad(lambda p: -sgd_step(p, batch, config, tree)[1])(params)
    np.testing.assert_allclose(new.w_in - params.w_in, 0.1 * grad.w_in, atol=1e-6)
    np.testing.assert_array_equal(new.w_in[0], params.w_in[0])


def test_large_batches_keep_enough_steps_per_chunk():
    """A chunk holds 2^17 examples, but at least MIN_STEPS_PER_CHUNK steps, so that strided
    batches of any size spread neighbouring examples (which share rows) over different steps."""
    assert Word2VecConfig(batch=1024).steps_per_chunk == 128 and Word2VecConfig(loss="hs").steps_per_chunk == 512
    assert Word2VecConfig(batch=32768).steps_per_chunk == MIN_STEPS_PER_CHUNK == 64
    assert Word2VecConfig(batch=32768, steps_per_chunk=4).steps_per_chunk == 4


def test_log_sigmoid_and_complement_match_jax_everywhere():
    x = jnp.array([-200.0, -30.0, -5.0, -0.3, 0.0, 0.3, 5.0, 30.0, 200.0], jnp.float32)
    log_s, s_neg = log_sigmoid_and_complement(x)
    np.testing.assert_allclose(log_s, jax.nn.log_sigmoid(x), rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(s_neg, jax.nn.sigmoid(-x), rtol=1e-6, atol=1e-30)


def test_packed_paths_decode_to_the_huffman_tree():
    counts = np.array([40, 9, 7, 5, 3, 2, 1])
    tree = build_huffman(counts)
    points, sign = (np.asarray(a) for a in path_entries(huffman_paths(*tree).paths))
    valid = np.arange(points.shape[1])[None, :] < tree.lengths[:, None]
    np.testing.assert_array_equal(points[valid], tree.points[valid])
    np.testing.assert_array_equal(sign[valid], 1 - 2 * tree.codes[valid])
    assert (sign[~valid] == 0).all() and (points[~valid] == len(counts) - 2).all()  # padding: the root
    assert (~valid).any()


def test_cbow_hs_batches_without_the_path_table_name_it():
    config = Word2VecConfig(model="cbow", loss="hs", batch=4, neg_block=4, steps_per_chunk=1)
    chunk = {"inputs": np.zeros((4, 10), np.int32), "input_mask": np.ones((4, 10), np.float32),
             "targets": np.arange(4, dtype=np.int32), "alpha": np.full(4, 0.05, np.float32)}
    with pytest.raises(ValueError, match="host path table"):
        to_batches(chunk, config, np.cumsum(np.full(4, 0.25)), 0, 0)


def test_packed_paths_hold_each_groups_paths_back_to_back():
    counts = np.array([40, 9, 7, 5, 3, 2, 1])
    tree = build_huffman(counts)
    table = np.asarray(huffman_paths(*tree).paths)
    targets = np.array([[6, 0, 3, 5], [1, 6, 6, 2]])
    alive = np.array([[True, True, False, True], [True, True, True, True]])  # (0, 2): padding
    entries, owners = pack_paths(targets, alive, table, groups=2)
    size = 2
    assert entries.shape == owners.shape and entries.shape[:2] == (2, 2) and entries.shape[2] % size == 0
    most = 0
    for step in range(2):
        for group in range(2):
            members = range(group * size, (group + 1) * size)
            want = [(i, table[targets[step, k], j]) for i, k in enumerate(members) if alive[step, k]
                    for j in range(tree.lengths[targets[step, k]])]
            n = len(want)
            most = max(most, n)
            assert [(int(o), int(e)) for o, e in zip(owners[step, group, :n], entries[step, group, :n])] == want
            assert (entries[step, group, n:] & 1 == 0).all() and (owners[step, group, n:] == size - 1).all()
            assert (np.diff(owners[step, group]) >= 0).all()  # sorted, as segment_sum is told
    assert entries.shape[2] == -(-most // size) * size


def test_wider_path_packing_gives_the_same_step():
    """Packing to a larger width (as a chunk after a wider one is) only adds inert padding."""
    config = Word2VecConfig(model="cbow", loss="hs", dim=4, batch=4, neg_block=2)
    tree = huffman_paths(*build_huffman(np.array([40, 9, 7, 5, 3, 2, 1])))
    params = init_params(7, config)
    params = params._replace(w_out=jax.random.normal(jax.random.key(2), params.w_out.shape, jnp.float32))
    targets, alive = np.array([[6, 0, 3, 5]]), np.array([[True, True, False, True]])
    steps = []
    for min_width in (0, 40):
        packed, owners = pack_paths(targets, alive, np.asarray(tree.paths), 1, min_width)
        batch = Batch(jnp.array([[1, 2], [2, 3], [3, 4], [4, 5]]), jnp.ones((4, 2), jnp.float32),
                      jnp.asarray(targets[0]), jnp.asarray(np.where(alive[0], 0.1, 0.0), jnp.float32),
                      jnp.zeros((2, 1), jnp.int32), jnp.asarray(packed[0]), jnp.asarray(owners[0]))
        steps.append((packed.shape[-1], sgd_step(params, batch, config, tree)))
    (narrow, (p0, nll0)), (wide, (p1, nll1)) = steps
    assert narrow < wide == 40
    np.testing.assert_array_equal(p0.w_in, p1.w_in)
    np.testing.assert_array_equal(p0.w_out, p1.w_out)
    assert float(nll0) == float(nll1)


def test_skipgram_hs_context_sets_equal_their_pairs():
    """A centre word trained with its whole context at once = the same (context, centre) pairs."""
    config = Word2VecConfig(loss="hs", dim=4, batch=6, neg_block=1, hs_row_cap=1e9)
    counts = np.array([9, 7, 5, 3, 2, 1])
    tree = huffman_paths(*build_huffman(counts))
    params = init_params(6, config)
    params = params._replace(w_out=jax.random.normal(jax.random.key(2), params.w_out.shape, jnp.float32) * 0.3)
    alpha = jnp.full(2, 0.1, jnp.float32)
    sets = step_batch(inputs=jnp.array([[1, 2, 3, 0], [0, 4, 5, 0]]), input_mask=jnp.array([[1.0, 1, 1, 0], [1, 1, 1, 0]]),
                      targets=jnp.array([4, 2]), alpha=alpha, negatives=jnp.zeros((2, 1), jnp.int32))
    # one input per target: the packed paths (the form CBOW trains with)
    pairs = step_batch(tree, inputs=jnp.array([1, 2, 3, 0, 4, 5]), input_mask=jnp.zeros((6, 1)),
                       targets=jnp.array([4, 4, 4, 2, 2, 2]), alpha=jnp.full(6, 0.1, jnp.float32),
                       negatives=jnp.zeros((6, 1), jnp.int32))
    from_sets, nll_sets = sgd_step(params, sets, config, tree)
    from_pairs, nll_pairs = sgd_step(params, pairs, config, tree)
    np.testing.assert_allclose(from_sets.w_in, from_pairs.w_in, atol=1e-6)
    np.testing.assert_allclose(from_sets.w_out, from_pairs.w_out, atol=1e-6)
    np.testing.assert_allclose(nll_sets, nll_pairs, rtol=1e-6)


def test_skipgram_hs_blocks_of_centres_give_the_one_block_step():
    """Centre words split into blocks (a ragged last one too) take the same SGD step as one
    block, the per-node cap included: it counts a node's uses over the whole batch."""
    counts = np.array([9, 7, 5, 3, 2, 1])
    tree = huffman_paths(*build_huffman(counts))
    one_block = Word2VecConfig(loss="hs", dim=4, batch=5, neg_block=1, hs_row_cap=3.0, hs_block=64)
    params = init_params(6, one_block)
    params = params._replace(w_out=jax.random.normal(jax.random.key(3), params.w_out.shape, jnp.float32) * 0.3)
    batch = step_batch(inputs=jnp.array([[1, 2, 3], [0, 4, 5], [2, 3, 0], [5, 1, 4], [3, 0, 0]]),
                       input_mask=jnp.array([[1.0, 1, 1], [1, 1, 0], [1, 1, 1], [1, 0, 1], [1, 0, 0]]),
                       targets=jnp.array([4, 2, 5, 0, 1]), alpha=jnp.full(5, 0.1, jnp.float32),
                       negatives=jnp.zeros((5, 1), jnp.int32))
    whole, nll = sgd_step(params, batch, one_block, tree)
    uncapped, _ = sgd_step(params, batch, dataclasses.replace(one_block, hs_row_cap=1e9), tree)
    assert not np.allclose(whole.w_out, uncapped.w_out, atol=1e-4)  # the cap is active here
    for block in (1, 2, 4):
        blocks, nll_blocks = sgd_step(params, batch, dataclasses.replace(one_block, hs_block=block), tree)
        np.testing.assert_allclose(blocks.w_in, whole.w_in, atol=1e-6)
        np.testing.assert_allclose(blocks.w_out, whole.w_out, atol=1e-6)
        np.testing.assert_allclose(nll_blocks, nll, rtol=1e-6)


def test_training_is_deterministic_and_learns(corpus):
    vocab, ids = corpus
    a = train_word2vec(ids, vocab, TINY, progress=False)
    b = train_word2vec(ids, vocab, TINY, progress=False)
    np.testing.assert_array_equal(a.vectors, b.vectors)
    c = train_word2vec(ids, vocab, dataclasses.replace(TINY, seed=2), progress=False)
    assert not np.array_equal(a.vectors, c.vectors)
    assert a.completed and a.words == 2 * len(ids) and a.vectors.dtype == np.float32
    # same-topic words end up closer than cross-topic words
    found = [w for w, _ in nearest_neighbours(a.vectors, vocab.words, ["aa"], topn=5)]
    assert all(w.startswith("a") for w in found), found
    assert odd_one_out(a.vectors, vocab.words, ["ab", "ac", "ad", "be"]) == "be"


def test_training_under_x64_stays_float32(corpus):
    vocab, ids = corpus
    reference = train_word2vec(ids, vocab, TINY, progress=False).vectors
    with jax.enable_x64(True):
        result = train_word2vec(ids, vocab, TINY, progress=False)
    assert result.params.w_in.dtype == jnp.float32
    np.testing.assert_allclose(result.vectors, reference, atol=1e-5)


@pytest.mark.parametrize("model,loss,examples", [
    ("cbow", "neg", "host"), ("skipgram", "hs", "host"), ("cbow", "hs", "host"),
    ("skipgram", "neg", "device"), ("cbow", "neg", "device"), ("skipgram", "hs", "device"),
])
def test_other_architectures_learn(corpus, model, loss, examples):
    vocab, ids = corpus
    config = dataclasses.replace(TINY, model=model, loss=loss, epochs=3, examples=examples)
    result = train_word2vec(ids, vocab, config, progress=False)
    assert result.completed and result.words == 3 * len(ids) and result.examples > 0
    found = [w for w, _ in nearest_neighbours(result.vectors, vocab.words, ["bd"], topn=5)]
    assert sum(w.startswith("b") for w in found) >= 4, found


@pytest.mark.parametrize("examples", ["host", "device"])
def test_resume_gives_the_same_vectors(corpus, tmp_path, examples):
    vocab, ids = corpus
    config = dataclasses.replace(TINY, examples=examples)
    full = train_word2vec(ids, vocab, config, progress=False)
    partial = train_word2vec(ids, vocab, config, checkpoint_dir=tmp_path, stop_after_chunks=5, progress=False)
    assert not partial.completed
    assert not np.array_equal(partial.vectors, full.vectors)
    resumed = train_word2vec(ids, vocab, config, checkpoint_dir=tmp_path, progress=False)
    assert resumed.completed and 0 < resumed.words < full.words
    np.testing.assert_array_equal(resumed.vectors, full.vectors)


def test_a_finished_run_resumed_trains_no_word(corpus, tmp_path):
    """Re-running a finished job replays every chunk and trains none: 0 words in that call, even
    where subsampling dropped the corpus's last words (the tail after the last chunk)."""
    vocab, ids = corpus
    frequent = int(np.bincount(ids).argmax())
    ids = np.concatenate([ids, np.full(200, frequent, ids.dtype)])  # a tail that sampling thins out
    config = dataclasses.replace(TINY, sample=1e-4)
    first = train_word2vec(ids, vocab, config, checkpoint_dir=tmp_path, progress=False)
    again = train_word2vec(ids, vocab, config, checkpoint_dir=tmp_path, progress=False)
    assert first.words == 2 * len(ids) and again.completed and (again.words, again.examples) == (0, 0)
    np.testing.assert_array_equal(again.vectors, first.vectors)


def test_analogy_on_hand_made_embedding(tmp_path):
    """Base words on their own axes; each relation is an offset along a relation axis."""
    bases = ["man", "king", "paris", "rome", "walk", "swim"]
    pairs = {"woman": ("man", 6), "queen": ("king", 6), "france": ("paris", 7), "italy": ("rome", 7),
             "walked": ("walk", 8), "swimmed": ("swim", 8), "swam": ("swim", 9)}
    e = {w: np.eye(10)[i] for i, w in enumerate(bases)}
    e.update({w: e[base] + np.eye(10)[axis] for w, (base, axis) in pairs.items()})
    words = list(e)
    vectors = np.stack([e[w] for w in words])
    questions = tmp_path / "q.txt"
    questions.write_text(
        ": family\nman woman king queen\nking queen man woman\n"
        ": capital-world\nparis france rome italy\nparis france rome unknownword\n"
        ": gram7-past-tense\nwalk walked swim swam\n"
    )
    result = evaluate_analogies(vectors, words, questions, restrict=None)
    assert result.sections["family"]["accuracy"] == 100.0
    assert result.sections["capital-world"] == {"accuracy": 100.0, "correct": 1, "evaluated": 1, "questions": 2}
    # walked - walk + swim lands exactly on the distractor "swimmed", not on "swam"
    assert result.sections["gram7-past-tense"]["accuracy"] == 0.0
    assert result.semantic == 100.0 and result.syntactic == 0.0
    assert result.total == pytest.approx(75.0) and result.coverage == pytest.approx(4 / 5)
    # restricting the vocabulary to the 8 most frequent words (rows) keeps only the family questions
    assert evaluate_analogies(vectors, words, questions, restrict=8).evaluated == 2
    # a common question set: questions with a word outside `allowed` are not covered
    assert evaluate_analogies(vectors, words, questions, restrict=None, allowed=set(words) - {"rome"}).evaluated == 3


def test_analogy_scores_match_gensims_evaluator():
    """On the real 19,544 questions, with an embedding where each category's pairs share an
    offset (plus noise, and words shared between categories pull against each other), our
    3CosAdd total equals gensim's ``evaluate_word_analogies`` exactly."""
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(0)
    vectors: dict[str, np.ndarray] = {}
    offset: dict[str, np.ndarray] = {}
    category = ""
    for line in default_analogy_path().read_text().lower().splitlines():
        if line.startswith(":"):
            category = line
            offset[category] = rng.normal(size=50)
            continue
        a, b, c, d = line.split()
        for first, second in ((a, b), (c, d)):
            vectors.setdefault(first, rng.normal(size=50))
            vectors.setdefault(second, vectors[first] + offset[category] + rng.normal(scale=1.2, size=50))
    words = list(vectors)
    table = np.stack([vectors[w] for w in words]).astype(np.float32)
    ours = evaluate_analogies(table, words)
    keyed = KeyedVectors(50)
    keyed.add_vectors(words, table)
    theirs, _ = keyed.evaluate_word_analogies(str(default_analogy_path()), restrict_vocab=30_000)
    assert 20 < ours.total < 90  # a non-trivial mix of right and wrong answers
    assert ours.total == pytest.approx(100 * theirs, abs=1e-9)


@pytest.mark.parametrize("binary", [False, True])
def test_gensim_reads_our_export(tmp_path, binary):
    gensim_models = pytest.importorskip("gensim.models")
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(20, 7)).astype(np.float32)
    words = [f"w{i}" for i in range(19)] + ["café"]
    path = tmp_path / ("v.bin" if binary else "v.txt")
    save_word2vec(path, vectors, words, binary=binary)
    kv = gensim_models.KeyedVectors.load_word2vec_format(str(path), binary=binary)
    assert kv.index_to_key == words
    np.testing.assert_allclose(kv.vectors, vectors, rtol=1e-5, atol=1e-6)
    back, back_words = load_word2vec(path, binary=binary)
    assert back_words == words
    np.testing.assert_allclose(back, vectors, rtol=1e-5, atol=1e-6)
    kv.save_word2vec_format(str(tmp_path / "g.bin"), binary=True)  # and we read gensim's
    np.testing.assert_array_equal(load_word2vec(tmp_path / "g.bin", binary=True)[0], kv.vectors)


@pytest.mark.parametrize("text, message", [
    ("3 2\na 1 2\nb 3 4\n", "line 4: the file ends before the 3 vectors its header promises"),
    ("2 2\na 1 x\nb 3 4\n", "line 2: the values of 'a' are not all numbers"),
    ("2 2\na 1 2\nb nan 4\n", "the vector of entry 1 ('b') is not finite"),
    ("2 2\na 1 2\na 3 4\n", "entry 1 repeats the word 'a' of entry 0"),
])
def test_malformed_vector_files_are_refused_naming_the_entry(tmp_path, capsys, text, message):
    path = tmp_path / "v.txt"
    path.write_text(text)
    assert main(["word2vec", "neighbours", str(path), "a"]) == 2
    assert message in capsys.readouterr().err


def test_neighbours_queries_negative_words_and_refuses_one_without_direction(tmp_path, capsys):
    path = tmp_path / "v.txt"
    save_word2vec(path, np.array([[1, 0], [0, 1], [1, 1], [0, 0]], np.float32), ["a", "b", "ab", "zero"])
    for argv in (["ab", "--negative", "a"], ["ab", "--", "-a"]):  # ab - a points at b
        assert main(["word2vec", "neighbours", str(path), "--topn", "1", "--json", *argv]) == 0
        assert json.loads(capsys.readouterr().out)["neighbours"][0]["word"] == "b"
    # the query's own words are never listed, even when topn asks for more than remain
    assert [w for w, _ in nearest_neighbours(*load_word2vec(path), ["a"], topn=10)] == ["ab", "b", "zero"]
    for argv, message in ((["zero"], "the query zero is the zero vector"), (["a", "--", "-a"], "is the zero vector")):
        assert main(["word2vec", "neighbours", str(path), *argv]) == 2
        assert message in capsys.readouterr().err


def test_eval_prints_undefined_where_no_question_can_be_asked(tmp_path, capsys):
    path = tmp_path / "v.txt"
    save_word2vec(path, np.eye(2, dtype=np.float32), ["qqq", "zzz"])
    assert main(["word2vec", "eval", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "total undefined" in out and "Spearman undefined on 0 pairs" in out


def test_cli_train_and_eval(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(" ".join(synthetic_words(3000)) + "\n")
    questions = tmp_path / "q.txt"
    questions.write_text(": family\naa ab ba bb\n")
    out = tmp_path / "run"
    status = main(["word2vec", "train", str(corpus), "--out", str(out), "--dim", "8", "--text", "--json"])
    assert status == 0
    import json

    summary = json.loads(capsys.readouterr().out)
    assert summary["vocab_size"] == 30 and summary["words_per_second"] > 0
    assert (out / "vectors.bin").is_file() and (out / "vectors.txt").is_file()
    assert main(["word2vec", "eval", str(out / "vectors.txt"), "--analogies", str(questions), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["evaluated"] == 1 and {"total", "semantic", "syntactic", "coverage"} <= set(report)


@pytest.mark.parametrize(
    "text,args,message",
    [
        ("", [], "empty"),
        ("one two three four", ["--min-count", "5"], "vocabulary is empty"),
        ("one two one two", ["--min-count", "1", "--model", "cbow", "--loss", "hs", "--examples", "device"],
         "does not build CBOW with the hierarchical softmax"),
    ],
)
def test_cli_bad_corpus_or_options_exit_2(tmp_path, capsys, text, args, message):
    corpus = tmp_path / "c.txt"
    corpus.write_text(text)
    assert main(["word2vec", "train", str(corpus), "--out", str(tmp_path / "o"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_missing_files_exit_2(tmp_path, capsys):
    vectors = tmp_path / "v.txt"
    save_word2vec(vectors, np.eye(3, dtype=np.float32), ["a", "b", "c"])
    assert main(["word2vec", "eval", str(vectors), "--analogies", str(tmp_path / "missing.txt")]) == 2
    assert "analogy file not found" in capsys.readouterr().err
    assert main(["word2vec", "train", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "o")]) == 2
    assert "corpus not found" in capsys.readouterr().err
    assert main(["word2vec", "neighbours", str(vectors), "zzz"]) == 2
    assert "not in the vocabulary: zzz" in capsys.readouterr().err
    # an output directory that is a file is one line and exit 2, like every path that cannot be written,
    # checked before the corpus is read, naming --out, without errno text
    assert main(["word2vec", "train", str(vectors), "--out", str(vectors)]) == 2
    err = capsys.readouterr().err
    assert err == f"jaxscale word2vec: error: --out {vectors}: exists and is not a directory\n"


@pytest.mark.parametrize("model,loss,examples,cap", [("skipgram", "neg", "host", None), ("cbow", "hs", "host", None),
                                                    ("skipgram", "neg", "device", 2.0)])
def test_data_parallel_matches_single_device(corpus, tmp_path, model, loss, examples, cap):
    """Batches split over 2 (forced CPU) devices give the single-device vectors up to rounding,
    also when the run is stopped and resumed from its checkpoint (restored parameters sit on
    one device and must be replicated over both); CBOW HS packs each device's paths apart and
    caps a node's step by its uses over both devices; batches built on the device are split
    over both too, and NEG's row cap counts a row's uses over both."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    vocab, ids = corpus
    config = dataclasses.replace(TINY, model=model, loss=loss, examples=examples, neg_row_cap=cap)
    expected = train_word2vec(ids, vocab, config, progress=False).vectors
    script = (
        "import dataclasses, sys, numpy as np, jax; "
        "from tests.word2vec.test_word2vec import synthetic_words, TINY;"
        "from jaxscale.word2vec.train import prepare_corpus, train_word2vec;"
        "assert jax.local_device_count() == 2;"
        f"c = dataclasses.replace(TINY, model={model!r}, loss={loss!r}, examples={examples!r}, neg_row_cap={cap!r});"
        "v, i = prepare_corpus(synthetic_words(), 5);"
        f"d = {str(tmp_path / 'checkpoints')!r};"
        "train_word2vec(i, v, c, checkpoint_dir=d, stop_after_chunks=2, progress=False);"
        f"np.save({str(tmp_path / 'v.npy')!r}, train_word2vec(i, v, c, checkpoint_dir=d, progress=False).vectors)"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-c", script], check=True, cwd=root, env=env, timeout=300)
    np.testing.assert_allclose(np.load(tmp_path / "v.npy"), expected, atol=1e-5)


def test_resume_refuses_a_different_run(corpus, tmp_path):
    vocab, ids = corpus
    train_word2vec(ids, vocab, TINY, checkpoint_dir=tmp_path, stop_after_chunks=2, progress=False)
    with pytest.raises(ValueError, match="different run"):
        train_word2vec(ids, vocab, dataclasses.replace(TINY, window=3), checkpoint_dir=tmp_path, progress=False)


def test_similarity_spearman_on_hand_made_vectors(tmp_path):
    from jaxscale.word2vec.similarity import evaluate_similarity

    angles = np.array([0.0, 0.2, 0.5, 0.9, 1.4])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    words = ["w0", "w1", "w2", "w3", "w4"]
    pairs = tmp_path / "sim.tsv"
    # human scores fall as the angle from w0 grows: cosine ranks them identically
    pairs.write_text("# comment\nw0\tw1\t9.0\nw0\tw2\t7.5\nw0\tw3\t4.0\nw0\tw4\t1.0\nw0\tmissing\t5.0\n")
    result = evaluate_similarity(vectors, words, pairs)
    assert result["spearman"] == pytest.approx(1.0) and result["pairs"] == 4 and result["coverage"] == 0.8
    pairs.write_text("w0\tw1\t1.0\nw0\tw2\t2.0\nw0\tw3\t3.0\nw0\tw4\t4.0\n")
    assert evaluate_similarity(vectors, words, pairs)["spearman"] == pytest.approx(-1.0)


def test_hs_row_cap_scales_only_heavily_used_nodes():
    counts = np.array([9, 7, 5, 3, 2, 1])
    tree = huffman_paths(*build_huffman(counts))
    base = Word2VecConfig(loss="hs", dim=4, batch=8, neg_block=1, hs_row_cap=1e9)
    params = init_params(6, base)
    params = params._replace(w_out=jax.random.normal(jax.random.key(1), params.w_out.shape, jnp.float32))
    batch = step_batch(inputs=(jnp.arange(8) % 6)[:, None], input_mask=jnp.ones((8, 1)),
                       targets=jnp.array([0, 0, 0, 0, 0, 1, 2, 5]), alpha=jnp.full(8, 0.1, jnp.float32),
                       negatives=jnp.zeros((8, 1), jnp.int32))
    free, _ = sgd_step(params, batch, base, tree)
    capped, _ = sgd_step(params, batch, dataclasses.replace(base, hs_row_cap=2.0), tree)
    root = 4  # inner nodes are 0..V-2; the root is V-2 and lies on all 8 paths
    np.testing.assert_allclose(capped.w_out[root] - params.w_out[root], (free.w_out[root] - params.w_out[root]) * 2 / 8,
                               atol=1e-6)
    assert float(jnp.abs(free.w_out[root] - params.w_out[root]).max()) > 1e-3  # the step is not negligible
    np.testing.assert_array_equal(capped.w_in, free.w_in)  # input steps are never scaled


@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_neg_row_cap_scales_only_heavily_used_rows(model):
    """Output row 0 is the target of 4 live examples and input row 1 the context of 3 (one more
    example, padding, uses both but does not count): a cap of 2 scales their summed steps by 2/4
    and 2/3; a row used once (output 2, input 4) is untouched; so is everything without a cap."""
    base = Word2VecConfig(model=model, dim=4, batch=6, neg_block=2, negative=1)
    params = init_params(6, base)
    params = params._replace(w_out=jax.random.normal(jax.random.key(1), params.w_out.shape, jnp.float32))
    batch = step_batch(inputs=jnp.array([1, 1, 1, 3, 4, 1])[:, None], input_mask=jnp.ones((6, 1)),
                       targets=jnp.array([0, 0, 0, 0, 2, 0]), alpha=jnp.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.0]),
                       negatives=jnp.array([[5], [5], [5]], jnp.int32))
    if model == "skipgram":
        batch = batch._replace(inputs=batch.inputs[:, 0])
    free, _ = sgd_step(params, batch, base, None)
    capped, _ = sgd_step(params, batch, dataclasses.replace(base, neg_row_cap=2.0), None)
    uncapped, _ = sgd_step(params, batch, dataclasses.replace(base, neg_row_cap=1e9), None)

    def step(new, table, row):
        return getattr(new, table)[row] - getattr(params, table)[row]

    np.testing.assert_allclose(step(capped, "w_out", 0), step(free, "w_out", 0) * 2 / 4, atol=1e-6)
    np.testing.assert_allclose(step(capped, "w_in", 1), step(free, "w_in", 1) * 2 / 3, atol=1e-6)
    for table, row in (("w_out", 2), ("w_in", 4)):
        np.testing.assert_allclose(step(capped, table, row), step(free, table, row), atol=1e-7)
    assert float(jnp.abs(step(free, "w_out", 0)).max()) > 1e-3  # the step is not negligible
    for table in ("w_in", "w_out"):
        np.testing.assert_allclose(getattr(uncapped, table), getattr(free, table), atol=1e-7)
    with pytest.raises(ValueError, match="neg_row_cap must be > 0"):
        dataclasses.replace(base, neg_row_cap=0.0)


def test_no_compile_thread_outlives_a_run_that_trains_no_chunk(monkeypatch):
    """A corpus that subsampling empties trains no chunk: the step compiled ahead on its thread
    must still be waited for, or the interpreter can abort at exit while XLA compiles
    ("terminate called ...", status 134: seen from the CLI on a loaded machine). The compile is
    made to take a second here, so that the check does not depend on the machine's speed."""
    import threading
    import time

    import jaxscale.word2vec.train as w2v

    class SlowToLower:
        def __init__(self, train_chunk):
            self.train_chunk = train_chunk

        def lower(self, *args):
            time.sleep(1.0)
            return self.train_chunk.lower(*args)

    compile_ahead = w2v.compile_ahead
    monkeypatch.setattr(w2v, "compile_ahead", lambda f, params, batches: compile_ahead(SlowToLower(f), params, batches))
    vocab, ids = prepare_corpus("the cat sat on the mat".split(), min_count=1)
    result = train_word2vec(ids, vocab, dataclasses.replace(TINY, sample=1e-3), progress=False)
    assert result.completed and result.examples == 0
    assert not [t for t in threading.enumerate() if t.name == w2v.COMPILE_THREAD and t.is_alive()]


def test_cli_killed_run_resumes_to_the_same_vectors(tmp_path):
    """SIGKILL a training process after its first checkpoint; the re-run finishes identically."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(" ".join(synthetic_words(60_000)) + "\n")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}

    def command(out):
        return [sys.executable, "-m", "jaxscale", "word2vec", "train", str(corpus), "--out", str(out),
                "--dim", "16", "--epochs", "3", "--sample", "0", "--checkpoint-seconds", "0", "--json"]

    subprocess.run(command(tmp_path / "full"), check=True, env=env, capture_output=True, timeout=300)
    proc = subprocess.Popen(command(tmp_path / "killed"), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    checkpoints = tmp_path / "killed" / "checkpoints"
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline:
        if checkpoints.is_dir() and any(p.name.isdigit() for p in checkpoints.iterdir()):
            break
        time.sleep(0.05)
    assert proc.poll() is None, "training finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "killed" / "vectors.bin").exists()
    subprocess.run(command(tmp_path / "killed"), check=True, env=env, capture_output=True, timeout=300)
    full, _ = load_word2vec(tmp_path / "full" / "vectors.bin", binary=True)
    resumed, _ = load_word2vec(tmp_path / "killed" / "vectors.bin", binary=True)
    np.testing.assert_array_equal(resumed, full)


def _cli_train(corpus, out, *args, timeout=300):
    """``jaxscale word2vec train`` in a subprocess (a crash such as SIGABRT shows as its status)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-m", "jaxscale", "word2vec", "train", str(corpus), "--out", str(out), "--dim", "8",
         "--checkpoint-seconds", "0", "--json", *args],
        check=False, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=timeout,
    )


def test_cli_diverging_run_exits_1_in_one_line_and_writes_no_vectors(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(" ".join(synthetic_words(6000)) + "\n")
    proc = _cli_train(corpus, tmp_path / "run", "--alpha", "100")
    assert proc.returncode == 1, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "word2vec diverged: the loss is nan in chunk 1 of epoch 1 (learning rate alpha 100, batch 1024)" in lines[0]
    assert all(option in lines[0] for option in ("--batch", "--alpha", "--neg-row-cap"))  # what helps
    assert not (tmp_path / "run" / "vectors.bin").exists() and proc.stdout == ""


@pytest.mark.parametrize("poison", ["loss", "vectors"])
def test_divergence_stops_training_and_keeps_the_last_good_checkpoint(corpus, tmp_path, monkeypatch, poison):
    """Fault injection: chunk 3 returns a NaN loss, or finite loss but NaN vectors (rows no later
    example of the chunk read); chunks 1 and 2 were checkpointed. Either way training stops at
    chunk 3, and the checkpoint left is chunk 2's, finite."""
    import jaxscale.word2vec.train as w2v
    from jaxscale.support.checkpoints import Checkpoints

    vocab, ids = corpus
    make = w2v.make_train_chunk

    def poisoned(*args, **kwargs):
        train_chunk, calls = make(*args, **kwargs), []

        def chunk(params, batches):
            params, nll = train_chunk(params, batches)
            calls.append(1)
            if len(calls) < 3:
                return params, nll
            if poison == "loss":
                return params, nll * jnp.nan
            return params._replace(w_out=params.w_out.at[0].set(jnp.inf)), nll

        chunk.lower = train_chunk.lower  # compiled ahead as the real step
        return chunk

    monkeypatch.setattr(w2v, "make_train_chunk", poisoned)
    expected = "the loss is nan in chunk 3 of epoch 1" if poison == "loss" else "the vectors hold NaN or infinite"
    with pytest.raises(w2v.Word2VecDiverged, match=rf"{expected}.*last good checkpoint \(chunk 2\) is kept"):
        train_word2vec(ids, vocab, TINY, checkpoint_dir=tmp_path, checkpoint_seconds=0, progress=False)
    with Checkpoints(tmp_path) as checkpoints:
        assert checkpoints.latest_step() == 2
        restored = checkpoints.restore(init_params(len(vocab), TINY))
    assert all(np.isfinite(table).all() for table in restored.state)


@pytest.mark.parametrize("name, data, problem", [
    ("utf16.txt", lambda text: text.encode("utf-16"), "UTF-16 text"),
    ("random.txt", lambda text: np.random.default_rng(0).bytes(20_000), "binary content"),
    ("truncated.txt.gz", lambda text: __import__("gzip").compress(text.encode())[:2000], "gzip stream ends early"),
])
def test_cli_refuses_corpora_that_are_not_utf8_text_in_one_line(tmp_path, capsys, name, data, problem):
    corpus = tmp_path / name
    corpus.write_bytes(data(" ".join(synthetic_words(6000)) + "\n"))
    assert main(["word2vec", "train", str(corpus), "--out", str(tmp_path / "o"), "--min-count", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {corpus}: " in err and problem in err
    assert not (tmp_path / "o" / "vectors.bin").exists()


def test_cli_rerun_with_other_settings_is_refused_up_front_naming_them(tmp_path):
    """A re-run into the same --out with another --dim aborted in Orbax (SIGABRT, status 134).
    It is refused before the corpus is read (here: a corpus that would be refused itself);
    settings only the corpus reveals (its vocabulary) are refused once it is read."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(" ".join(synthetic_words(6000)) + "\n")
    out = tmp_path / "run"
    assert _cli_train(corpus, out).returncode == 0
    unreadable = tmp_path / "utf16.txt"
    unreadable.write_text("any text", encoding="utf-16")
    proc = _cli_train(unreadable, out, "--dim", "16", "--window", "3")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "holds checkpoints of a different run (dim 8 there, 16 here; window 5 there, 3 here)" in proc.stderr
    assert proc.stderr.count("\n") == 1
    other = tmp_path / "other.txt"
    other.write_text(" ".join(synthetic_words(3000, seed=1)) + "\n")
    proc = _cli_train(other, out)
    assert proc.returncode == 2 and "corpus_words" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_refuses_a_negative_checkpoint_interval(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("one two one two\n")
    with pytest.raises(SystemExit) as exit_:
        main(["word2vec", "train", str(corpus), "--out", str(tmp_path / "o"), "--checkpoint-seconds", "-1"])
    assert exit_.value.code == 2
    assert "argument --checkpoint-seconds: must be a finite number >= 0, got -1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="checkpoint_seconds must be >= 0; got -1"):
        train_word2vec(np.zeros(4, np.int32), prepare_corpus(["a", "b"], 1)[0], TINY, checkpoint_seconds=-1)


def test_a_corpus_of_codes_keeps_its_words_under_normalize_lower_and_warns_under_text8(tmp_path):
    """Tokens such as w123 collapsed under the always-on text8 normaliser to a vocabulary of 11
    and trained with exit 0; --normalize lower keeps them, and text8 now warns, naming the options."""
    rng = np.random.default_rng(0)
    codes = [f"w{i}" for i in range(400)]
    corpus = tmp_path / "codes.txt"
    corpus.write_text(" ".join(rng.choice(codes, 20_000)) + "\n")
    proc = _cli_train(corpus, tmp_path / "lower", "--normalize", "lower", "--epochs", "1", "--min-count", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["vocab_size"] == 400
    proc = _cli_train(corpus, tmp_path / "text8", "--epochs", "1", "--min-count", "1")
    assert "text8 normalisation kept 11 distinct words of the 400 distinct tokens read" in proc.stderr
    assert "--normalize lower" in proc.stderr
