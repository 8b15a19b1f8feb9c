"""Compare the word2vec architectures on one corpus, as Mikolov 2013a Tables 3-5 and 2013b Table 1 do.

Trains skip-gram and CBOW, each with negative sampling (k = 5) and the Huffman hierarchical
softmax, on the first ``--chars`` characters of the text8-normalised shared corpus, and prints
semantic / syntactic / total analogy accuracy (top-30k questions) and words/s for each.

    nice -n 10 python examples/word2vec_architectures.py [--chars 100000000] [--epochs 1] [--json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "enwiki_30k_articles.txt.gz"
sys.path.insert(0, str(ROOT))

from jaxscale.cli._output import print_json  # noqa: E402
from jaxscale.networks.word2vec import Word2VecConfig  # noqa: E402
from jaxscale.word2vec.analogy import evaluate_analogies  # noqa: E402
from jaxscale.word2vec.normalize import read_words  # noqa: E402
from jaxscale.word2vec.train import prepare_corpus, train_word2vec  # noqa: E402

ARCHITECTURES = (("skipgram", "neg"), ("cbow", "neg"), ("skipgram", "hs"), ("cbow", "hs"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=100_000_000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--only", nargs="+", default=[f"{m}/{l}" for m, l in ARCHITECTURES],
                        choices=[f"{m}/{l}" for m, l in ARCHITECTURES], help="architectures to run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    vocab, ids = prepare_corpus(read_words(CORPUS, args.chars), min_count=5)
    rows = []
    for model, loss in (name.split("/") for name in args.only):
        config = Word2VecConfig(model=model, loss=loss, dim=args.dim, epochs=args.epochs)
        result = train_word2vec(ids, vocab, config, progress=not args.json)
        score = evaluate_analogies(result.vectors, vocab.words)
        rows.append({"model": model, "loss": loss, "semantic": score.semantic, "syntactic": score.syntactic,
                     "total": score.total, "coverage": score.coverage, "words_per_second": result.words_per_second})
        if not args.json:
            print(f"{model:9s} {loss:3s}  semantic {score.semantic:5.2f}  syntactic {score.syntactic:5.2f}  "
                  f"total {score.total:5.2f}  ({result.words_per_second:,.0f} words/s)", flush=True)
    if args.json:
        print_json({"words": len(ids), "vocab_size": len(vocab), "epochs": args.epochs, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
