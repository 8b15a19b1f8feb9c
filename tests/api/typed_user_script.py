"""A user's script over the whole public API, read by a type checker (``tests/api/test_types.py``).

Not a test, and not run by the suite: mypy reads it as an IDE would, to check that every name of
``jaxscale.__all__`` resolves, and that results' attributes and methods are what a notebook reads
(the test fails when a public name has no use here). It is a real script, written the way a user
would write it: a tiny table of runs, each verb called with plausible arguments, results narrowed
with ``isinstance`` where a verb returns one of several results. It runs, in a minute or two on a
CPU: ``PYTHONPATH=. python tests/api/typed_user_script.py``.
"""

from __future__ import annotations

import tempfile

import numpy as np
import pandas as pd

import jaxscale as js


def tiny_runs(seed: int = 0) -> pd.DataFrame:
    """18 runs (6 sizes x 3 tokens per parameter) of a Chinchilla-like law with 1% noise."""
    n: np.ndarray = np.repeat(np.geomspace(1e7, 1e9, 6), 3)
    d = n * np.tile([5.0, 20.0, 80.0], 6)
    loss = 1.8 + 480.0 / n**0.35 + 2000.0 / d**0.37
    noise = np.exp(0.01 * np.random.default_rng(seed).standard_normal(len(n)))
    return pd.DataFrame({"N": n, "D": d, "loss": loss * noise})


def describe(result: js.FitReport | js.FrontierReport) -> str:
    """What a fit found: the law's parameters, or the frontier's power laws."""
    if isinstance(result, js.FrontierReport):
        return str(result.frontier)
    return f"{result.law.name}: {result.params} ({result.seconds:.1f} s)"


def main() -> None:
    print("jaxscale", js.__version__, "laws:", ", ".join(js.laws.names()))
    runs: js.Runs = tiny_runs()
    table: js.RunsTable = js.load_runs(runs, drop_highest=1)
    print(len(table), "runs; columns:", table.columns)

    law: js.Law = js.laws.get("chinchilla")
    fitted = js.fit(table, law, bootstrap=20)
    print(describe(fitted))
    assert isinstance(fitted, js.FitReport)
    draws: js.Draws | None = fitted.draws
    if draws is not None:
        print("bootstrap median:", draws.median(), "of", draws.n_valid, "refits")
    print(fitted.summary(), fitted.to_dict()["law"], sorted(fitted.plot()))

    posterior = js.bayes(table, law, laplace=True)
    if isinstance(posterior, (js.GroupedPosterior, js.LooComparison)):
        raise SystemExit("a single law on ungrouped runs gives one posterior")
    single: js.Posterior = posterior
    print(single.law.name, single.draws.interval_method, single.summary())

    study: js.SensitivityReport = js.sensitivity(fitted, compute=[1e24])
    print(study.summary().head(), study.source)

    allocation = js.allocate(single, compute=[1e22, 1e24])
    if isinstance(allocation, js.DataConstrainedAllocation):
        print(allocation.best)
    else:
        plain: js.Allocation = allocation
        print(plain.table["C"], plain.summary())

    reconciled: js.ReconcileReport = js.reconcile(published="epoch")
    print(reconciled.summary())

    plan: js.DesignReport = js.design(table, target="N*:1e24", budget=1e21, max_runs=2)
    print(plan.law.name, plan.summary())

    other = tiny_runs(seed=1).assign(loss=lambda frame: frame["loss"] * 0.98)
    multiplier: js.CompareReport = js.compare(runs, other, names=["baseline", "new"], compute=1e22, bootstrap=20)
    print(multiplier.summary())

    published = js.hparams(published="deepseek", compute=1e24)
    if isinstance(published, js.HparamsReport):
        print(published.agreement())
    else:
        optimum: js.PublishedHparams = published
        print(f"eta* = {optimum.lr:.2e}, B* = {optimum.batch:.3g} ({optimum.citation})")

    best: js.ScheduleReport = js.schedule(published="luo-25m", steps=600, peak_lr=3e-4, warmup_steps=60,
                                          iterations=50)
    print(best.summary())

    counts: js.ModelParams = js.model_params({"d_model": 64, "n_layer": 2, "n_head": 2, "vocab_size": 100,
                                              "n_ctx": 32})
    print(counts.counts["n_total"], counts.to_dict()["config"])

    with tempfile.TemporaryDirectory() as directory:
        print("wrote", len(fitted.save(directory)), "files")


if __name__ == "__main__":
    main()
