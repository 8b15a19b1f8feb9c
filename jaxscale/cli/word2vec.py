"""``jaxscale word2vec train|eval|neighbours|scaling``: train, evaluate and study word2vec."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from jaxscale.cli import _options as o

#: The published grid ``jaxscale word2vec scaling --published NAME`` fits instead of training.
PUBLISHED = ("mikolov-2013a",)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = o.command(subparsers, "word2vec", "train and evaluate word2vec (skip-gram/CBOW, NEG/HS)",
                       "Train word vectors, evaluate them, query them, and study how their accuracy scales.",
                       "jaxscale word2vec train enwiki_30k_articles.txt.gz --out vectors --dim 100\n"
                       "jaxscale word2vec scaling --published mikolov-2013a --out scaling")
    commands = parser.add_subparsers(dest="word2vec_command", metavar="SUBCOMMAND", required=True)

    train = o.command(commands, "train", "train word vectors on a text corpus (.txt/.txt.gz)",
                      "Train skip-gram or CBOW with negative sampling or hierarchical softmax (Mikolov et al. "
                      "2013); checkpointed: rerunning the command resumes.",
                      "jaxscale word2vec train enwiki_30k_articles.txt.gz --out vectors --model cbow --loss hs --text")
    train.add_argument("corpus", type=Path)
    train.add_argument("--out", type=Path, required=True, help="output directory (vectors, checkpoints)")
    train.add_argument("--model", choices=("skipgram", "cbow"), default="skipgram")
    train.add_argument("--loss", choices=("neg", "hs"), default="neg")
    train.add_argument("--dim", type=o.at_least(1), default=100)
    train.add_argument("--window", type=o.at_least(1), default=5)
    train.add_argument("--negative", type=o.at_least(1), default=5)
    train.add_argument("--sample", type=o.nonnegative, default=1e-4)
    train.add_argument("--min-count", type=o.at_least(1), default=5)
    train.add_argument("--epochs", type=o.at_least(1), default=1)
    train.add_argument("--alpha", type=o.positive, default=None,
                       help="initial learning rate (default 0.025 sg, 0.05 cbow)")
    train.add_argument("--phrases", type=o.at_least(0), default=0, metavar="N", help="phrase-detection passes first")
    train.add_argument("--max-chars", type=o.at_least(1), default=None,
                       help="use only the first N normalised characters")
    train.add_argument("--normalize", choices=("text8", "lower", "none"), default="text8",
                       help="how text becomes words: text8 (lowercase a-z, digits spelled out: English prose, the "
                            "analogy sets' form), lower (lowercased letters and digits of any script), none (the "
                            "whitespace-separated tokens as they are); default %(default)s")
    train.add_argument("--seed", type=int, default=1)
    train.add_argument("--batch", type=o.at_least(1), default=None,
                       help="examples per SGD step (default 1024 NEG, 256 HS)")
    train.add_argument("--neg-row-cap", type=o.positive, default=None, metavar="CAP",
                       help="NEG: cap each row's summed step per batch at CAP examples' worth (large batches)")
    train.add_argument("--examples", choices=("auto", "host", "device"), default="auto",
                       help="who builds the examples: numpy, or the accelerator (auto: the device on a GPU/TPU)")
    train.add_argument("--text", action="store_true", help="also write vectors.txt (word2vec text format)")
    train.add_argument("--checkpoint-seconds", type=o.nonnegative, default=300.0,
                       help="seconds between checkpoints (0: after every chunk)")
    train.add_argument("--json", action="store_true")
    train.set_defaults(run=run_train)

    evaluate = o.command(commands, "eval", "analogy accuracy and word similarity of a vector file",
                         "Accuracy on the word-analogy questions and Spearman correlation on word-similarity sets.",
                         "jaxscale word2vec eval vectors/vectors.bin --json")
    evaluate.add_argument("vectors", type=Path, help="word2vec .bin (binary) or .txt (text) file")
    evaluate.add_argument("--analogies", type=Path, default=None, help="default: gensim's questions-words.txt")
    evaluate.add_argument("--restrict", type=o.at_least(1), default=30_000, help="most frequent words searched")
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(run=run_eval)

    query = o.command(commands, "neighbours", "nearest neighbours, analogies, odd one out",
                      "The nearest words to a sum of word vectors (minus the negative words), or the odd one out.",
                      "jaxscale word2vec neighbours vectors/vectors.bin king woman --negative man")
    query.add_argument("vectors", type=Path)
    query.add_argument("words", nargs="+",
                       help="positive words; after --, a word prefixed with '-' is negative (king woman -- -man)")
    query.add_argument("--negative", nargs="+", action="extend", default=[], metavar="WORD",
                       help="negative words: king woman --negative man is the analogy man : king :: woman : ?")
    query.add_argument("--odd-one-out", action="store_true", help="print the word that does not fit")
    query.add_argument("--topn", type=o.at_least(1), default=10)
    query.add_argument("--json", action="store_true")
    query.set_defaults(run=run_neighbours)

    scaling = o.command(commands, "scaling", "accuracy grid over dimension x training words, law fit",
                        "Train a grid of dimensions x training words (or take a published grid), fit an error law "
                        "of (d, T) to it, and split a compute budget between d and T.",
                        "jaxscale word2vec scaling --published mikolov-2013a --out scaling --budget 1e12\n"
                        "jaxscale word2vec scaling enwiki_30k_articles.txt.gz --out scaling --law chinchilla")
    scaling.add_argument("corpus", type=Path, nargs="?", help="text corpus to train the grid on")
    scaling.add_argument("--published", choices=PUBLISHED, default=None,
                         help="fit a published grid instead of training (no corpus needed): Mikolov et al. 2013a, "
                         "Table 2")
    scaling.add_argument("--out", type=Path, required=True)
    scaling.add_argument("--law", default="word2vec-error-kaplan", metavar="NAME",
                         help="law whose fit gives the optimal split and frontier (both are fitted): "
                         "word2vec-error-kaplan or word2vec-error-chinchilla (or kaplan, chinchilla) "
                         "(default: %(default)s)")
    scaling.add_argument("--dims", type=o.at_least(1), nargs="+", help="default: 25 50 100 200")
    scaling.add_argument("--words", type=o.positive, nargs="+",
                         help="training words per cell (default: 4e6 8e6 16e6 32e6)")
    scaling.add_argument("--model", choices=("skipgram", "cbow"), help="default: cbow")
    scaling.add_argument("--loss", choices=("neg", "hs"), help="default: hs")
    scaling.add_argument("--epochs", type=o.at_least(1), help="default: 3")
    scaling.add_argument("--budget", type=o.positive, default=None, help="compute budget (Eq. 4/5 units) to split")
    scaling.add_argument("--json", action="store_true")
    scaling.set_defaults(run=run_scaling)


def _show(result: Any, args: argparse.Namespace) -> int:
    """Print the result's JSON (``--json``) or its text."""
    from jaxscale.cli._output import print_json

    if args.json:
        print_json(result.to_dict())
    else:
        print(result.text())
    return 0


def run_train(args: argparse.Namespace) -> int:
    o.check_out(args.out)
    from jaxscale import Word2VecDiverged, train_word2vec

    options = ("model", "loss", "dim", "window", "negative", "sample", "min_count", "epochs", "alpha", "phrases",
               "max_chars", "normalize", "seed", "batch", "neg_row_cap", "examples", "checkpoint_seconds")
    try:
        result = train_word2vec(args.corpus, args.out, write_text=args.text, progress=not args.json,
                                **{name: getattr(args, name) for name in options})
    except Word2VecDiverged as err:  # a failed run, not bad input: exit 1, no vectors written
        print(f"jaxscale word2vec: error: {err}", file=sys.stderr)
        return 1
    return _show(result, args)


def run_eval(args: argparse.Namespace) -> int:
    from jaxscale import score_vectors

    return _show(score_vectors(args.vectors, args.analogies, args.restrict), args)


def run_neighbours(args: argparse.Namespace) -> int:
    from jaxscale import query_vectors

    return _show(query_vectors(args.vectors, args.words, args.negative, args.topn, args.odd_one_out), args)


def run_scaling(args: argparse.Namespace) -> int:
    from jaxscale import word2vec_scaling

    if (args.published is not None) == (args.corpus is not None):
        raise ValueError("give either a CORPUS to train the grid on or --published mikolov-2013a (its Table 2)")
    o.check_out(args.out)
    result = word2vec_scaling(args.corpus, out=args.out, published=args.published, law=args.law, dims=args.dims,
                              words=args.words, model=args.model, loss=args.loss, epochs=args.epochs,
                              budget=args.budget, progress=not args.json)
    return _show(result, args)
