"""The word2vec benchmark and example run end to end on a small slice of the shared corpus and
keep their JSON contracts (the full-size runs are minutes long; their figures are in
docs/guides/word2vec.md and docs/benchmarks.md)."""

from __future__ import annotations

import importlib.util
import json
import statistics
from pathlib import Path

import pytest

from tests.conftest import shared_data_file

ROOT = Path(__file__).resolve().parents[2]


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def corpus():
    return shared_data_file("enwiki_30k_articles.txt.gz")


def test_benchmark_reports_both_tools(corpus, capsys):
    bench = load(ROOT / "benchmarks" / "bench_word2vec.py")
    assert bench.main(["--chars", "600000", "--epochs", "1", "--repeats", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("gensim_words_per_second", "jaxscale_words_per_second", "ratio", "gensim_accuracy",
                "jaxscale_accuracy"):
        assert report[key] >= 0, key
    for tool in ("gensim", "jaxscale"):  # the medians of the alternating runs
        runs = report[f"{tool}_runs_words_per_second"]
        assert len(runs) == 2 and report[f"{tool}_words_per_second"] == pytest.approx(statistics.median(runs))
    assert report["ratio"] == pytest.approx(report["jaxscale_words_per_second"] / report["gensim_words_per_second"])
    assert report["corpus_words"] > 90_000 and report["epochs"] == 1


def test_batch_sweep_compares_the_fastest_batch_that_keeps_the_accuracy(corpus, capsys):
    bench = load(ROOT / "benchmarks" / "bench_word2vec.py")
    assert bench.main(["--chars", "600000", "--epochs", "1", "--batches", "256,1024", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = report["rows"]
    assert [row["batch"] for row in rows] == [256, 1024]
    for row in rows:
        assert row["counts"] == (row["jaxscale_accuracy"] >= report["gensim_accuracy"] - report["accuracy_tolerance"])
        assert row["ratio"] == pytest.approx(row["jaxscale_words_per_second"] / report["gensim_words_per_second"])
    counted = [row for row in rows if row["counts"]]
    if counted:
        best = max(counted, key=lambda row: row["jaxscale_words_per_second"])
        assert report["chosen_batch"] == best["batch"] and report["ratio"] == best["ratio"]
    else:
        assert report["chosen_batch"] is None and report["ratio"] is None


def test_batch_sweep_refuses_bad_sizes(capsys):
    bench = load(ROOT / "benchmarks" / "bench_word2vec.py")
    for argv, message in ((["--batches", "64,abc"], "--batches"), (["--batches", "0,64"], "batch must be >= 1"),
                          (["--batches", "64", "--batch", "32"], "--batches and --batch"),
                          (["--batches", "1000"], "multiple of neg_block"),
                          (["--batch", "64", "--neg-row-cap", "-1"], "neg_row_cap must be > 0")):
        with pytest.raises(SystemExit) as exit_:
            bench.main(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_benchmark_refuses_no_repeats(capsys):
    bench = load(ROOT / "benchmarks" / "bench_word2vec.py")
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--repeats", "0"])
    assert exit_.value.code == 2 and "--repeats must be >= 1" in capsys.readouterr().err


def test_architectures_example_runs(corpus, capsys):
    example = load(ROOT / "examples" / "word2vec_architectures.py")
    assert example.main(["--chars", "300000", "--only", "cbow/hs", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["model"], r["loss"]) for r in rows] == [("cbow", "hs")]
    assert 0 <= rows[0]["total"] <= 100 and rows[0]["words_per_second"] > 0
