"""``jaxscale word2vec train|eval|neighbours|scaling``: train, evaluate and study word2vec."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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


def _load_vectors(path: Path):
    from jaxscale.word2vec.vector_files import load_word2vec

    return load_word2vec(path, binary=path.suffix == ".bin")


def run_train(args: argparse.Namespace) -> int:
    o.check_out(args.out)
    from jaxscale.cli._output import print_json
    from jaxscale.word2vec.train import Word2VecDiverged, train_from_file

    options = ("model", "loss", "dim", "window", "negative", "sample", "min_count", "epochs", "alpha", "seed", "batch",
               "neg_row_cap", "examples")
    try:
        summary = train_from_file(
            args.corpus,
            args.out,
            phrases=args.phrases,
            max_chars=args.max_chars,
            normalize=args.normalize,
            write_text=args.text,
            checkpoint_seconds=args.checkpoint_seconds,
            progress=not args.json,
            **{name: getattr(args, name) for name in options},
        )
    except Word2VecDiverged as err:  # a failed run, not bad input: exit 1, no vectors written
        print(f"jaxscale word2vec: error: {err}", file=sys.stderr)
        return 1
    if args.json:
        print_json(summary)
        return 0
    if summary["words_trained"]:
        print(
            f"trained {summary['model']}/{summary['loss']} d={summary['dim']} on {summary['words']:,} words "
            f"(vocabulary {summary['vocab_size']:,}) at {summary['words_per_second']:,.0f} words/s"
        )
    else:
        print(f"nothing left to train: {args.out / 'checkpoints'} holds this run, finished; vectors written from it")
    print(f"vectors: {summary['vectors']}")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from jaxscale.cli._output import print_json
    from jaxscale.word2vec.analogy import evaluate_analogies
    from jaxscale.word2vec.similarity import DATASETS, dataset_path, evaluate_similarity

    vectors, words = _load_vectors(args.vectors)
    result = evaluate_analogies(vectors, words, args.analogies, args.restrict).as_dict()
    result["similarity"] = {name: evaluate_similarity(vectors, words, dataset_path(name)) for name in DATASETS}
    if args.json:
        print_json(result)
        return 0
    for name, section in result["sections"].items():
        print(f"{name:30s} {_defined(section['accuracy'], '6.2f', '%')}  ({section['correct']}/{section['evaluated']})")
    print(
        f"semantic {_defined(result['semantic'], '.2f', '%')}  syntactic {_defined(result['syntactic'], '.2f', '%')}  "
        f"total {_defined(result['total'], '.2f', '%')}  "
        f"coverage {100 * result['coverage']:.1f}% of {result['questions']} questions"
    )
    for name, sim in result["similarity"].items():
        print(f"{name}: Spearman {_defined(sim['spearman'], '.3f')} on {sim['pairs']} pairs")
    return 0


def _defined(value: float | None, spec: str, unit: str = "") -> str:
    """A score, or "undefined" where no question or pair could be asked (None or NaN)."""
    return "undefined" if value is None or value != value else f"{value:{spec}}{unit}"


def run_neighbours(args: argparse.Namespace) -> int:
    from jaxscale.cli._output import print_json
    from jaxscale.word2vec.neighbours import nearest_neighbours, odd_one_out

    vectors, words = _load_vectors(args.vectors)
    if args.odd_one_out:
        answer = {"odd_one_out": odd_one_out(vectors, words, args.words)}
        print_json(answer) if args.json else print(answer["odd_one_out"])
        return 0
    positive = [w for w in args.words if not w.startswith("-")]
    negative = [w[1:] for w in args.words if w.startswith("-")] + args.negative
    found = nearest_neighbours(vectors, words, positive, negative, args.topn)
    if args.json:
        print_json({"neighbours": [{"word": w, "cosine": s} for w, s in found]})
    else:
        for word, score in found:
            print(f"{word:24s} {score:.4f}")
    return 0


def save_scaling_report(report: dict, out: Path) -> None:
    """``report.json``, the accuracy grid and the frontier figure under ``out``."""
    from jaxscale.plots.word2vec import accuracy_grid_figure, frontier_figure
    from jaxscale.support.json_native import write_json
    from jaxscale.word2vec.scaling import error_law_by_name, predicted_error

    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "report.json", report)
    law = error_law_by_name(report["law"])
    params = law.params_type(**report["params"])
    accuracy_grid_figure(report["rows"]).savefig(out / "accuracy_grid.png", dpi=120)
    frontier = frontier_figure(report["rows"], lambda d, t: predicted_error(law, params, d, t), report["kappa"],
                               report["optimal"], f"fitted {law.formula}")
    frontier.savefig(out / "frontier.png", dpi=120)


def run_scaling(args: argparse.Namespace) -> int:
    from jaxscale.cli._output import print_json
    from jaxscale.word2vec.scaling import (
        ScalingGrid,
        check_budget,
        error_law_by_name,
        run_published_study,
        run_scaling_study,
    )

    if (args.published is not None) == (args.corpus is not None):
        raise ValueError("give either a CORPUS to train the grid on or --published mikolov-2013a (its Table 2)")
    o.check_out(args.out)
    check_budget(args.budget)  # before the grid trains
    law = args.law.removeprefix("word2vec-error-")
    error_law_by_name(law)  # an unknown law: the choices, before the grid trains
    if args.published:
        report = run_published_study(law=law, budget=args.budget)
    else:
        given = {
            "dims": tuple(args.dims) if args.dims else None,
            "words": tuple(int(w) for w in args.words) if args.words else None,
            "model": args.model,
            "loss": args.loss,
            "epochs": args.epochs,
        }
        grid = ScalingGrid(**{k: v for k, v in given.items() if v is not None})
        report = run_scaling_study(args.corpus, args.out, grid, law=law, budget=args.budget,
                                   progress=not args.json)
    save_scaling_report(report, args.out)
    if args.json:
        print_json(report)
        return 0
    for name, fit in report["fits"].items():
        params = ", ".join(f"{k} = {v:.4g}" for k, v in fit["params"].items())
        print(f"{name:10s} {fit['formula']}\n{'':10s} {params}   (RMS {fit['rms_points']:.2f} accuracy points)")
    optimal = report["optimal"]
    if optimal is None:
        print(f"no compute-optimal split: a fitted {report['law']} exponent is <= 0 (error did not fall along d or T)")
    else:
        print(
            f"compute-optimal split of budget {optimal['budget']:.3g} ({report['law']} law): d* = {optimal['dim']:.0f}, "
            f"T* = {optimal['words']:.3g} words, predicted accuracy {optimal['predicted_accuracy']:.1f}%; "
            f"d* ~ budget^{optimal['exponent_dim']:.3f}, T* ~ budget^{optimal['exponent_words']:.3f}"
        )
    print(f"results: {args.out}")
    return 0
