"""A user's script over the whole public API, read by a type checker (``tests/api/test_types.py``).

Not a test, and not run by the suite: mypy reads it as an IDE would, to check that every name of
``jaxscale.__all__`` resolves, and that results' attributes and methods are what a notebook reads
(the test fails when a public name has no use here). It is a real script, written the way a user
would write it: a tiny table of runs, each verb called with plausible arguments, results narrowed
each with the one result type it returns. It runs, in a minute or two on a CPU: ``PYTHONPATH=. python tests/api/typed_user_script.py``
(``--train`` also trains a smoke sweep and word vectors: a few minutes more).
"""

from __future__ import annotations

import sys
import tempfile

import numpy as np
import pandas as pd

import jaxscale as js
from jaxscale.accuracy.synthetic_ladder import draw_ladder  # a ladder's evaluations from a known law
from tests.curves.test_lr_annealing_fit import synthetic_runs  # loss curves under three schedules
from tests.hyperparameters.test_per_group import _grid  # a learning-rate x batch-size grid per (N, D)


def tiny_runs(seed: int = 0) -> pd.DataFrame:
    """18 runs (6 sizes x 3 tokens per parameter) of a Chinchilla-like law with 1% noise."""
    n: np.ndarray = np.repeat(np.geomspace(1e7, 1e9, 6), 3)
    d = n * np.tile([5.0, 20.0, 80.0], 6)
    loss = 1.8 + 480.0 / n**0.35 + 2000.0 / d**0.37
    noise = np.exp(0.01 * np.random.default_rng(seed).standard_normal(len(n)))
    return pd.DataFrame({"N": n, "D": d, "loss": loss * noise})


def describe(result: js.Fitted) -> str:
    """What a fitted law found: its name and parameters."""
    return f"{result.law.name}: {result.params}"


def wings(directory: str, train: bool) -> None:
    """The training wings: a sweep's progress and word2vec's published grid; with ``train``, a smoke
    sweep and word vectors trained on the shared corpus, then scored and queried (a few minutes)."""
    progress: js.SweepProgress = js.sweep_status(preset="smoke", out=f"{directory}/sweep")
    print(progress.summary())
    law: js.Word2VecScaling = js.word2vec_scaling(published="mikolov-2013a", out=f"{directory}/scaling", budget=1e12)
    print(law.summary(), law.report["optimal"])
    if not train:
        return
    sweep: js.SweepReport = js.sweep(preset="smoke", out=f"{directory}/sweep", progress=False)
    print(sweep.summary(), sweep.out)
    try:
        vectors: js.Word2VecTraining = js.train_word2vec("../shared/data/enwiki_30k_articles.txt.gz",
                                                         f"{directory}/w2v", dim=32, max_chars=2_000_000)
    except js.Word2VecDiverged as failed:
        print("diverged:", failed)
        return
    scores: js.VectorScores = js.score_vectors(vectors.report["vectors"])
    nearest: js.Neighbours = js.query_vectors(vectors.report["vectors"], ["king", "woman"], negative=["man"])
    print(scores.summary(), nearest.found)


def main() -> None:
    print("jaxscale", js.__version__, "laws:", ", ".join(js.laws.names()))
    runs: js.Runs = tiny_runs()
    table: js.RunsTable = js.load_runs(runs, drop_highest=1)
    print(len(table), "runs; columns:", table.columns)

    law: js.Law = js.laws.get("chinchilla")
    fitted: js.FitReport = js.fit(table, law, bootstrap=20)
    print(describe(fitted), f"({fitted.seconds:.1f} s)")
    isoflops = pd.DataFrame([(n, c, 1.8 + 480.0 / n**0.35 + 2000.0 / (c / (6 * n)) ** 0.37)
                             for c in (1e18, 1e19, 1e20, 1e21) for n in np.geomspace(3e7 * (c / 1e18) ** 0.5 / 6,
                                                                                      3e7 * (c / 1e18) ** 0.5 * 6, 9)],
                            columns=["params", "flops", "loss"])
    frontier: js.FrontierReport = js.frontier(isoflops, approach=2)
    print(frontier.frontier)
    rules: js.IsoflopReport = js.isoflop(isoflops, resamples=20)
    print(rules.summary(), rules.diagnostics.warnings)
    draws: js.Draws | None = fitted.draws
    if draws is not None:
        print("bootstrap median:", draws.median(), "of", draws.n_valid, "refits")
    print(fitted.summary(), fitted.to_dict()["law"], sorted(fitted.plot()))

    single: js.Posterior = js.bayes(table, law, laplace=True)
    print(describe(single), single.draws.interval_method, single.summary())
    grouped_runs = pd.concat([tiny_runs(seed=2).assign(data="a"), tiny_runs(seed=3).assign(data="b")])
    grouped: js.GroupedPosterior = js.bayes_grouped(grouped_runs, "data", law, chains=1, warmup=50, samples=50,
                                                    progress=False)
    print(grouped.summary())
    ranked: js.LooComparison = js.loo(table, ["chinchilla", "kaplan-irreducible"], chains=1, warmup=50, samples=50,
                                      progress=False)
    print(ranked.summary())

    study: js.SensitivityReport = js.sensitivity(fitted, compute=[1e24])
    print(study.summary().head(), study.source)

    plain: js.Allocation = js.allocate(single, compute=[1e22, 1e24])
    print(plain.table["C"], plain.summary())
    repeated: js.DataConstrainedAllocation = js.allocate_data_constrained(9.26e21, 25e9)
    print(repeated.best)

    reconciled: js.ReconcileReport = js.reconcile(published="epoch")
    print(reconciled.summary())

    plan: js.DesignReport = js.design(table, target="N*:1e24", budget=1e21, max_runs=2)
    print(plan.law.name, plan.summary())

    other = tiny_runs(seed=1).assign(loss=lambda frame: frame["loss"] * 0.98)
    multiplier: js.CompareReport = js.compare(runs, other, names=["baseline", "new"], compute=1e22, bootstrap=20)
    print(multiplier.summary())

    optimum: js.PublishedHparams = js.published_hparams("deepseek", compute=1e24)
    print(f"eta* = {optimum.lr:.2e}, B* = {optimum.batch:.3g} ({optimum.citation})")
    tuned: js.HparamsReport = js.hparams(_grid(noise=0.002), sequence_length=2048, bootstrap=20, joint=False)
    print(tuned.summary())

    best: js.ScheduleReport = js.schedule(published="luo-25m", steps=600, peak_lr=3e-4, warmup_steps=60,
                                          iterations=50)
    print(best.summary())

    counts: js.ModelParams = js.model_params({"d_model": 64, "n_layer": 2, "n_head": 2, "vocab_size": 100,
                                              "n_ctx": 32})
    print(counts.counts["n_total"], counts.to_dict()["config"])

    curves = synthetic_runs(steps=200)
    learned: js.CurveReport = js.curve(curves, law="multipower", fit_runs=["11760_constant", "11760_cosine"],
                                       predict=["11760_wsd"])
    print(learned.summary())
    held: js.RunsReport = js.runs(curves)
    print(held.summary())

    ladder = draw_ladder(0).frame  # evaluations of a ladder (70M-2.8B) and their intermediate loss
    scored: js.DownstreamReport = js.downstream(ladder[ladder["n_params"] <= 1e9], "synthetic", target=(2.8e9, 3e11),
                                                chance=0.25, intermediate="loss:loss", bootstrap=20)
    print(scored.summary())

    with tempfile.TemporaryDirectory() as directory:
        print("wrote", len(fitted.save(directory)), "files")
        wings(directory, train="--train" in sys.argv)


if __name__ == "__main__":
    main()
