"""word2vec throughput and analogy accuracy: gensim 4 (anchor) vs jaxscale, same process, same data.

Data: the first ``--chars`` (default 10^8) characters of the text8-normalised shared corpus
``../shared/data/enwiki_30k_articles.txt.gz`` (~17M words), cut into 10,000-word sentences as
gensim's ``Text8Corpus`` does. Both train skip-gram NEG-5, d=100, window 5, sample 1e-4,
min_count 5 for ``--epochs`` (default 3) epochs; words/s counts corpus words x epochs over the
training call (vocabulary building excluded for both). Both vector sets are scored with the same
3CosAdd analogy evaluation restricted to the 30,000 most frequent words (gensim's own
``evaluate_word_analogies`` score is printed as a cross-check).

With ``--architectures`` it instead trains all four of skip-gram / CBOW x negative sampling /
hierarchical softmax with both tools (same settings otherwise) and prints one row per
architecture: how the architectures rank against each other with each tool, beside Mikolov
2013a Table 3 and 2013b Table 1. ``--repeats R`` trains each tool R times, alternating, and
compares the median words/s (a single run's speed moves by up to 40% on a shared VM).

On a GPU or TPU, jaxscale trains there and builds its examples there too (``--examples auto``;
the host's numpy examples would cap it near gensim's speed); give gensim every core of the
machine (``--workers``) and jaxscale a batch that fills the accelerator (``--batch``, with
``--neg-row-cap`` once the batch is large). The report names jaxscale's device, batch and example
builder. ``--batches`` trains skip-gram NEG at several batch sizes instead and compares the
fastest whose analogy accuracy is at most 1 point below gensim's (``ACCURACY_TOLERANCE``, a rule
fixed before any accelerator run: large batches trade accuracy for speed).

With ``--profile`` it trains nothing to the end: for each architecture it times building the
examples of a few chunks on the host, then runs those chunks under the JAX profiler and splits
the device time over the compiled step's operations (gathers, scatter-adds, matrix products,
reductions, copies, element-wise), as shares of the traced time (tracing slows each operation).

    nice -n 10 python benchmarks/bench_word2vec.py [--json] [--chars N] [--epochs E] [--workers W]
        [--batch B] [--neg-row-cap CAP] [--examples auto|host|device]
    nice -n 10 python benchmarks/bench_word2vec.py --architectures --epochs 1 [--repeats R] [--json]
    python benchmarks/bench_word2vec.py --workers $(nproc) --batches 1024,4096,16384,32768,65536,131072
        --neg-row-cap 256 --repeats 3 [--json]        # on a GPU: issue 16's last goal
    nice -n 10 python benchmarks/bench_word2vec.py --profile [--chunks 4] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "enwiki_30k_articles.txt.gz"
sys.path.insert(0, str(ROOT))

ARCHITECTURES = (("skipgram", "neg"), ("cbow", "neg"), ("skipgram", "hs"), ("cbow", "hs"))


def run_gensim(
    sentences: list[list[str]], model: str, loss: str, epochs: int, workers: int, seed: int
) -> tuple[object, float]:
    """gensim's Word2Vec with the benchmark settings; returns the model and its training seconds.

    The initial learning rate is the word2vec tool's (and jaxscale's): 0.025 for skip-gram, 0.05
    for CBOW (gensim's own default is 0.025 for both, which leaves its CBOW far behind).
    """
    from gensim.models import Word2Vec

    w2v = Word2Vec(
        vector_size=100, window=5, min_count=5, sample=1e-4, sg=int(model == "skipgram"),
        hs=int(loss == "hs"), negative=5 if loss == "neg" else 0, alpha=0.025 if model == "skipgram" else 0.05,
        workers=workers, epochs=epochs, seed=seed,
    )
    w2v.build_vocab(sentences)
    start = time.perf_counter()
    w2v.train(sentences, total_examples=len(sentences), epochs=epochs)
    return w2v, time.perf_counter() - start


ACCURACY_TOLERANCE = 1.0  # analogy points below gensim's that a batch size may lose (issue 16, item 5)


def alternating_runs(words: list[str], model: str, loss: str, args, batches: list[int | None], progress: bool):
    """Train gensim once, then jaxscale once per batch size, ``args.repeats`` times over, so that
    every run shares the machine's slow and fast phases. Returns gensim's words/s per run and its
    last model, and per batch size jaxscale's words/s per run and its (deterministic) result."""
    from jaxscale.networks.word2vec import Word2VecConfig
    from jaxscale.word2vec.train import prepare_corpus, train_word2vec

    sentences = [words[i : i + 10_000] for i in range(0, len(words), 10_000)]
    vocab, ids = prepare_corpus(words, min_count=5)
    configs = {batch: Word2VecConfig(model=model, loss=loss, epochs=args.epochs, seed=args.seed, batch=batch,
                                     neg_row_cap=args.neg_row_cap, examples=args.examples) for batch in batches}
    gensim_runs, ours = [], {batch: ([], None) for batch in batches}
    for _ in range(args.repeats):
        gensim_model, gensim_seconds = run_gensim(sentences, model, loss, args.epochs, args.workers, args.seed)
        gensim_runs.append(len(words) * args.epochs / gensim_seconds)
        for batch, config in configs.items():
            result = train_word2vec(ids, vocab, config, progress=progress)
            ours[batch] = (ours[batch][0] + [result.words_per_second], result)
    return gensim_runs, gensim_model, ours


def compare(words: list[str], model: str, loss: str, args, progress: bool) -> dict:
    """Train one architecture with gensim and with jaxscale, alternating ``args.repeats`` times;
    the median words/s of each tool, every run's, and the analogy scores of the last run of each
    (jaxscale's training is deterministic, gensim's with 2 workers is not)."""
    import jax

    from jaxscale.word2vec.analogy import default_analogy_path, evaluate_analogies

    gensim_runs, gensim_model, ours = alternating_runs(words, model, loss, args, [args.batch], progress)
    ours_runs, result = ours[args.batch]
    gensim_eval = evaluate_analogies(gensim_model.wv.vectors, gensim_model.wv.index_to_key)
    gensim_own, _ = gensim_model.wv.evaluate_word_analogies(str(default_analogy_path()), restrict_vocab=30_000)
    ours_eval = evaluate_analogies(result.vectors, result.vocab.words)
    gensim_wps, ours_wps = statistics.median(gensim_runs), statistics.median(ours_runs)
    return {
        "model": model,
        "loss": loss,
        "corpus_words": len(words),
        "vocab_size": len(result.vocab),
        "epochs": args.epochs,
        "gensim_words_per_second": gensim_wps,
        "jaxscale_words_per_second": ours_wps,
        "ratio": ours_wps / gensim_wps,
        "gensim_runs_words_per_second": gensim_runs,
        "jaxscale_runs_words_per_second": ours_runs,
        "gensim_accuracy": gensim_eval.total,
        "jaxscale_accuracy": ours_eval.total,
        "accuracy_gap": ours_eval.total - gensim_eval.total,
        "gensim_accuracy_own_evaluator": 100.0 * gensim_own,
        "gensim_semantic": gensim_eval.semantic,
        "gensim_syntactic": gensim_eval.syntactic,
        "jaxscale_semantic": ours_eval.semantic,
        "jaxscale_syntactic": ours_eval.syntactic,
        "coverage": ours_eval.coverage,
        "gensim_seconds": len(words) * args.epochs / gensim_wps,
        "jaxscale_seconds": len(words) * args.epochs / ours_wps,
        "gensim_workers": args.workers,
        "jaxscale_device": str(jax.devices()[0]),
        "jaxscale_batch": result.config.batch,
        "jaxscale_examples": result.config.examples,
    }


def batch_sweep(words: list[str], args, progress: bool) -> dict:
    """Skip-gram NEG at every batch size of ``args.batches`` against gensim, judged by a rule fixed
    before any run: a batch size counts if its analogy accuracy is at most ``ACCURACY_TOLERANCE``
    points below gensim's; the comparison is the fastest that counts (median words/s). Larger
    batches fill an accelerator but update stale rows, so speed and accuracy trade off."""
    import jax

    from jaxscale.word2vec.analogy import evaluate_analogies

    gensim_runs, gensim_model, ours = alternating_runs(words, "skipgram", "neg", args, args.batches, progress)
    gensim_accuracy = evaluate_analogies(gensim_model.wv.vectors, gensim_model.wv.index_to_key).total
    gensim_wps = statistics.median(gensim_runs)
    rows = []
    for batch, (runs, result) in ours.items():
        accuracy = evaluate_analogies(result.vectors, result.vocab.words).total
        rows.append({"batch": batch, "jaxscale_words_per_second": statistics.median(runs),
                     "jaxscale_runs_words_per_second": runs, "jaxscale_accuracy": accuracy,
                     "counts": accuracy >= gensim_accuracy - ACCURACY_TOLERANCE,
                     "ratio": statistics.median(runs) / gensim_wps, "jaxscale_examples": result.config.examples})
    counted = [row for row in rows if row["counts"]]
    chosen = max(counted, key=lambda row: row["jaxscale_words_per_second"]) if counted else None
    return {
        "corpus_words": len(words), "epochs": args.epochs, "gensim_workers": args.workers,
        "gensim_words_per_second": gensim_wps, "gensim_runs_words_per_second": gensim_runs,
        "gensim_accuracy": gensim_accuracy, "accuracy_tolerance": ACCURACY_TOLERANCE,
        "neg_row_cap": args.neg_row_cap, "jaxscale_device": str(jax.devices()[0]), "rows": rows,
        "chosen_batch": None if chosen is None else chosen["batch"],
        "ratio": None if chosen is None else chosen["ratio"],  # undefined when no batch size keeps the accuracy
    }


def print_sweep(report: dict) -> None:
    print(f"gensim ({report['gensim_workers']} workers): {report['gensim_words_per_second']:,.0f} words/s, "
          f"{report['gensim_accuracy']:.2f}%   jaxscale on {report['jaxscale_device']}, "
          f"neg_row_cap {report['neg_row_cap']}")
    print(f"{'batch':>8s} {'jaxscale w/s':>13s} {'ratio':>6s} {'accuracy':>9s}  counts (>= gensim - "
          f"{report['accuracy_tolerance']:g} points)")
    for row in report["rows"]:
        print(f"{row['batch']:8d} {row['jaxscale_words_per_second']:13,.0f} {row['ratio']:6.2f} "
              f"{row['jaxscale_accuracy']:9.2f}  {'yes' if row['counts'] else 'no'}")
    if report["chosen_batch"] is None:
        print("no batch size keeps the accuracy within the tolerance: no ratio")
    else:
        print(f"fastest that counts: batch {report['chosen_batch']}, {report['ratio']:.2f}x gensim")


OP_KINDS = ("scatter", "gather", "dot", "reduce", "copy")  # the first one found names a fusion


def op_kind(name: str, hlo: str) -> str | None:
    """What an operation of the optimised HLO module does, read from its (fused) instructions."""
    found = re.search(rf"^\s*(?:ROOT )?%{re.escape(name)} = .*? (\w[\w-]*)\((.*)$", hlo, re.M)
    if found is None:
        return None
    opcode, rest = found.groups()
    if opcode == "fusion":
        body = re.search(r"calls=%([\w.\-]+)", rest)
        text = re.search(rf"^%{re.escape(body.group(1))} .*?^}}", hlo, re.M | re.S).group(0) if body else ""
        return next((kind for kind in OP_KINDS if f" {kind}(" in text), "elementwise")
    return opcode if opcode in OP_KINDS else "elementwise" if opcode != "while" else None


def device_profile(train_chunk, params, batches, hlo: str) -> dict[str, float]:
    """Seconds per operation kind of ``train_chunk`` over ``batches``, from a profiler trace."""
    import jax

    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder, create_perfetto_trace=True):
            for batch in batches:
                params, _ = train_chunk(params, batch)
            jax.block_until_ready(params)
        (trace,) = Path(folder).rglob("*.trace.json.gz")
        events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    seconds: dict[str, float] = {}
    for event in events:
        kind = op_kind(event["name"], hlo) if event.get("ph") == "X" else None
        if kind is not None:
            seconds[kind] = seconds.get(kind, 0.0) + event["dur"] * 1e-6
    return seconds


def profile(ids, vocab, model: str, loss: str, chunks: int) -> dict:
    """Host and device time per corpus word of one architecture, the device's split by operation."""
    import jax
    import numpy as np

    from jaxscale.networks.word2vec import Word2VecConfig, init_params, make_train_chunk
    from jaxscale.word2vec.examples import epoch_examples, fixed_chunks, to_batches
    from jaxscale.word2vec.train import training_tables

    config = Word2VecConfig(model=model, loss=loss)
    keep, noise, tree = training_tables(vocab, config)
    paths = None if tree is None else np.asarray(tree.paths)
    stream = fixed_chunks(epoch_examples(ids, keep, config, 0), config.steps_per_chunk * config.batch)
    chunk_list = [next(stream)]  # the epoch's set-up, and the chunk that compiles the step
    batches = [to_batches(chunk_list[0], config, noise, 0, 0, paths)]
    start = time.perf_counter()
    for i in range(1, chunks + 1):
        chunk_list.append(next(stream))
        batches.append(to_batches(chunk_list[-1], config, noise, 0, i, paths))
    host = time.perf_counter() - start
    train_chunk = make_train_chunk(config, tree, devices=1)  # the one-device step, whatever the host offers
    params = init_params(len(vocab), config)
    hlo = train_chunk.lower(params, batches[0]).compile().as_text()
    shapes = {}  # one chunk of each distinct shape (CBOW HS's packed width varies): compiled before timing
    for batch in batches:
        shapes.setdefault(tuple(x.shape for x in batch), batch)
    for batch in shapes.values():
        params, _ = train_chunk(params, batch)
    jax.block_until_ready(params)
    start = time.perf_counter()
    for batch in batches[1:]:
        params, _ = train_chunk(params, batch)
    jax.block_until_ready(params)
    device = time.perf_counter() - start
    seconds = device_profile(train_chunk, params, batches[1:], hlo)
    words = int(chunk_list[-1]["position"][-1]) - int(chunk_list[0]["position"][-1])
    examples = chunks * config.steps_per_chunk * config.batch
    return {
        "model": model,
        "loss": loss,
        "examples_per_word": examples / words,
        "host_ns_per_word": 1e9 * host / words,
        "device_ns_per_word": 1e9 * device / words,
        "device_words_per_second": words / device,
        # the profiler slows every operation down, so its times are reported as shares
        **{f"{kind}_share": seconds.get(kind, 0.0) / sum(seconds.values()) for kind in (*OP_KINDS, "elementwise")},
    }


def print_profiles(rows: list[dict]) -> None:
    kinds = (*OP_KINDS, "elementwise")
    print(f"{'architecture':14s} {'ex/word':>7s} {'host':>6s} {'device':>7s} {'dev w/s':>9s}  "
          + " ".join(f"{k:>11s}" for k in kinds))
    print(f"{'':14s} {'':7s} {'(ns per corpus word)':>24s} {'':9s}  (share of the traced device time)")
    for r in rows:
        print(f"{r['model'] + '/' + r['loss']:14s} {r['examples_per_word']:7.2f} {r['host_ns_per_word']:6.0f} "
              f"{r['device_ns_per_word']:7.0f} {r['device_words_per_second']:9,.0f}  "
              + " ".join(f"{100 * r[k + '_share']:10.0f}%" for k in kinds))


def print_architectures(rows: list[dict]) -> None:
    print(f"{'architecture':14s} {'gensim total (sem/syn)':>24s} {'jaxscale total (sem/syn)':>26s} "
          f"{'gensim w/s':>11s} {'jaxscale w/s':>13s} {'ratio':>6s}  (pairs' ratios)")
    for r in rows:
        print(f"{r['model'] + '/' + r['loss']:14s} "
              f"{r['gensim_accuracy']:6.2f} ({r['gensim_semantic']:5.2f}/{r['gensim_syntactic']:5.2f})      "
              f"{r['jaxscale_accuracy']:6.2f} ({r['jaxscale_semantic']:5.2f}/{r['jaxscale_syntactic']:5.2f})        "
              f"{r['gensim_words_per_second']:11,.0f} {r['jaxscale_words_per_second']:13,.0f} {r['ratio']:6.2f}  "
              + " ".join(f"{ours / theirs:.2f}" for theirs, ours in zip(r["gensim_runs_words_per_second"],
                                                                      r["jaxscale_runs_words_per_second"])))


def batch_sizes(text: str) -> list[int]:
    """``--batches``: comma-separated batch sizes, e.g. ``1024,8192,32768``."""
    return [int(size) for size in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=100_000_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="gensim worker threads")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=None, help="jaxscale's examples per SGD step (default: its own)")
    parser.add_argument("--batches", type=batch_sizes, default=None,
                        help="skip-gram NEG at each of these comma-separated batch sizes; the fastest within "
                             f"{ACCURACY_TOLERANCE:g} analogy point of gensim is compared")
    parser.add_argument("--neg-row-cap", type=float, default=None,
                        help="jaxscale NEG: cap each row's summed step per batch (for large --batch)")
    parser.add_argument("--examples", choices=("auto", "host", "device"), default="auto",
                        help="who builds jaxscale's examples (auto: the device on a GPU or TPU, else numpy)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="train each tool this many times, alternating; words/s are the medians")
    parser.add_argument("--architectures", action="store_true",
                        help="compare all four skip-gram/CBOW x NEG/HS architectures instead")
    parser.add_argument("--profile", action="store_true",
                        help="split each architecture's time per word: host examples, device operations")
    parser.add_argument("--chunks", type=int, default=4, help="chunks timed by --profile")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1; got {args.repeats}")
    if args.batches is not None and args.batch is not None:
        parser.error("--batches and --batch do not go together")
    from jaxscale.networks.word2vec import Word2VecConfig

    for batch in args.batches or [args.batch]:  # jaxscale's own checks, before any training
        try:
            Word2VecConfig(batch=batch, neg_row_cap=args.neg_row_cap, examples=args.examples)
        except ValueError as error:
            parser.error(str(error))
    if not CORPUS.is_file():
        print(f"skipped: shared corpus not found at {CORPUS}", file=sys.stderr)
        return 0

    from jaxscale.cli._output import print_json
    from jaxscale.word2vec.normalize import read_words

    words = read_words(CORPUS, args.chars)
    if args.profile:
        from jaxscale.word2vec.train import prepare_corpus

        vocab, ids = prepare_corpus(words, min_count=5)
        rows = [profile(ids, vocab, model, loss, args.chunks) for model, loss in ARCHITECTURES]
        if args.json:
            print_json({"rows": rows})
        else:
            print_profiles(rows)
        return 0
    if args.batches is not None:
        report = batch_sweep(words, args, progress=not args.json)
        if args.json:
            print_json(report)
        else:
            print_sweep(report)
        return 0
    if args.architectures:
        rows = [compare(words, model, loss, args, progress=not args.json) for model, loss in ARCHITECTURES]
        if args.json:
            print_json({"rows": rows})
        else:
            print_architectures(rows)
        return 0
    report = compare(words, "skipgram", "neg", args, progress=not args.json)
    if args.json:
        print_json(report)
    else:
        for key, value in report.items():
            print(f"{key:32s} {value:,.4g}" if isinstance(value, float) else f"{key:32s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
