"""The public API: the verbs import cheaply, each result's ``to_dict()`` is what ``jaxscale CMD
--json`` prints, summaries are tables of estimates and intervals, and fits, bootstraps and
posteriors share one draws type."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys

import jax
import numpy as np
import pandas as pd
import pytest

import jaxscale as js
from jaxscale.cli import main
from jaxscale.laws import chinchilla as ch


def _runs(noise: float = 0.01, seed: int = 0) -> pd.DataFrame:
    """18 runs of Epoch's law (6 sizes x 3 tokens per parameter), with log-normal noise."""
    n, ratio = (x.ravel() for x in np.meshgrid(np.geomspace(1e7, 1e9, 6), [5.0, 20.0, 80.0]))
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, ratio * n, ch.EPOCH))
    loss = loss * np.exp(noise * np.random.default_rng(seed).standard_normal(len(n)))
    return pd.DataFrame({"N": n, "D": ratio * n, "loss": loss})


@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("runs") / "runs.csv"
    _runs().to_csv(path, index=False)
    return str(path)


def _timeless(value):
    """``value`` without the wall times (keys ending in ``seconds``), which differ between runs."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if not k.endswith("seconds")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _timeless_text(text: str) -> str:
    """``text`` without the wall times (the numbers after ``seconds``), which differ between runs."""
    return re.sub(r"seconds +[0-9.e+-]+", "seconds X", text)


def _cli_text(argv: list[str]) -> str:
    """What ``jaxscale ARGV`` prints (the result's text), without the final newline."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue().removesuffix("\n")


def _cli_json(argv: list[str]) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--json"]) == 0
    return json.loads(out.getvalue())


def test_the_verbs_import_from_the_package():
    from jaxscale import allocate, allocate_data_constrained, bayes, bayes_grouped, fit, frontier, laws, load_runs
    from jaxscale import compare, design, hparams, loo, model_params, published_hparams, reconcile, schedule
    from jaxscale import sensitivity

    verbs = (allocate, allocate_data_constrained, bayes, bayes_grouped, compare, design, fit, frontier, hparams,
             load_runs, loo, model_params, published_hparams, reconcile, schedule, sensitivity)
    assert all(callable(verb) for verb in verbs)
    assert "chinchilla" in laws.names() and laws.get("kaplan").name == "kaplan"
    assert isinstance(laws.get("chinchilla"), js.Law) and laws.Law is js.Law
    assert set(js.__all__) <= set(dir(js))
    with pytest.raises(AttributeError, match="no attribute 'fitt'"):
        js.fitt


@pytest.mark.parametrize("statement, unloaded", [
    ("import jaxscale", ("jax", "numpy", "pandas", "numpyro", "arviz", "matplotlib")),
    ("import jaxscale; jaxscale.fit; jaxscale.bayes; jaxscale.sensitivity; jaxscale.reconcile; jaxscale.allocate",
     ("numpyro", "arviz", "matplotlib", "flax", "orbax", "tokenizers")),
])
def test_import_stays_cheap(statement, unloaded):
    code = f"import sys; {statement}; print(sorted({{m.split('.')[0] for m in sys.modules}} & set({unloaded!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_public_result_is_a_result():
    """Each verb's result shares summary, to_dict, plot, save and the repr (``Result``)."""
    from jaxscale._api._results import Result

    results = [name for name in js.__all__ if name.endswith(("Report", "Posterior", "Comparison", "Allocation",
                                                               "Hparams", "Params"))]
    assert {"HparamsReport", "PublishedHparams", "ScheduleReport", "ModelParams"} <= set(results)
    assert [name for name in results if not issubclass(getattr(js, name), Result)] == []


def test_hparams_to_dict_is_the_cli_json():
    result = js.published_hparams("deepseek", compute=1e24)
    assert isinstance(result, js.PublishedHparams)
    assert result.to_dict() == _cli_json(["hparams", "--published", "deepseek", "--compute", "1e24"])
    row = result.summary().set_index("quantity").loc["learning_rate"]
    assert row.estimate == pytest.approx(0.3118 * 1e24 ** -0.125, rel=1e-12) and np.isnan(row.lower)
    assert repr(result) == str(result) == _cli_text(["hparams", "--published", "deepseek", "--compute", "1e24"])
    assert str(result).startswith("jaxscale hparams: deepseek") and result.plot() == {}


def test_schedule_to_dict_is_the_cli_json():
    result = js.schedule(published="luo-25m", steps=600, peak_lr=3e-4, warmup_steps=60, iterations=50)
    numbers = _cli_json(["schedule", "--published", "luo-25m", "--steps", "600", "--peak-lr", "3e-4",
                         "--warmup-steps", "60", "--iterations", "50"])
    assert result.to_dict() == numbers
    summary = result.summary().set_index("quantity")
    assert summary.loc["final_loss_optimised", "estimate"] == pytest.approx(numbers["optimised_loss"])
    assert set(result.plot()) == {"schedule"}


def test_model_params_to_dict_is_the_cli_json(tmp_path):
    config = {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 2, "vocab_size": 100, "n_positions": 32}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = js.model_params(path)
    assert result.to_dict() == _cli_json(["params", str(path)])
    summary = result.summary().set_index("quantity")
    counts = summary.loc[["n_nonembedding", "n_embedding"], "estimate"]
    assert summary.loc["n_total", "estimate"] == counts.sum()  # N_T = N_\E + N_E (Pearce & Song, Eq. 1)
    assert js.model_params({"d_model": 64, "n_layer": 2, "n_head": 2, "vocab_size": 100,
                            "n_ctx": 32}).to_dict()["config"] == "mapping"


def test_load_runs_takes_a_path_or_a_frame_and_prepares_the_table(csv):
    from_path = js.load_runs(csv, drop_highest=3)
    from_frame = js.load_runs(pd.read_csv(csv), drop_highest=3)
    assert len(from_path) == len(from_frame) == 15 and from_path.dropped_highest == 3
    np.testing.assert_array_equal(from_path.loss, from_frame.loss)
    assert from_path.source == csv and from_frame.source == "table"
    assert js.load_runs(from_path, drop_highest=2).dropped_highest == 5
    with pytest.raises(ValueError, match="drop_highest must be >= 0"):
        js.load_runs(csv, drop_highest=-1)


def test_fit_to_dict_is_the_cli_json(csv):
    result = js.fit(js.load_runs(csv), bootstrap=16, seed=1, compute=[1e21, 1e23])
    cli = _cli_json(["fit", csv, "--bootstrap", "16", "--seed", "1", "--compute", "1e21", "1e23"])
    assert _timeless(result.to_dict()) == _timeless(cli)
    assert json.loads(json.dumps(result.to_dict())) == result.to_dict()  # JSON-native
    summary = result.summary()
    assert list(summary.columns[:4]) == ["quantity", "estimate", "lower", "upper"]
    row = summary.set_index("quantity").loc["alpha"]
    assert row["estimate"] == result.params.alpha and row["lower"] == cli["ci95"]["alpha"][0]
    assert "N*(1e+21)" in set(summary.quantity)
    text = _cli_text(["fit", csv, "--bootstrap", "16", "--seed", "1", "--compute", "1e21", "1e23"])
    assert _timeless_text(repr(result)) == _timeless_text(str(result)) == _timeless_text(text)
    assert "<table" in result._repr_html_()


def test_frontier_fit_to_dict_is_the_cli_json(tmp_path):
    budgets, rows = np.geomspace(1e18, 1e21, 4), []
    with jax.enable_x64(True):
        for c in budgets:
            best = float(ch.compute_optimal_n(c, ch.EPOCH))
            rows += [(n, c, float(ch.loss_at_compute(n, c, ch.EPOCH))) for n in np.geomspace(best / 6, best * 6, 9)]
    path = tmp_path / "isoflop.csv"
    pd.DataFrame(rows, columns=["params", "flops", "loss"]).to_csv(path, index=False)
    result = js.frontier(str(path), 2, bootstrap=20)
    assert isinstance(result, js.FrontierReport)
    assert _timeless(result.to_dict()) == _timeless(_cli_json(["fit", str(path), "--method", "approach2",
                                                                "--bootstrap", "20"]))
    a = result.summary().set_index("quantity").loc["a"]
    assert a["lower"] < a["estimate"] < a["upper"]
    with pytest.raises(ValueError, match="approach must be 1 or 2, got 3"):
        js.frontier(str(path), 3)


@pytest.mark.slow
def test_bayes_to_dict_is_the_cli_json(csv):
    result = js.bayes(csv, laplace=True, seed=2)
    assert _timeless(result.to_dict()) == _timeless(_cli_json(["bayes", csv, "--laplace", "--seed", "2"]))
    summary = result.summary().set_index("quantity")
    assert {"A", "alpha", "a", "sigma", "reconciled_exponent"} <= set(summary.index)
    assert (summary.lower <= summary.estimate).all() and (summary.estimate <= summary.upper).all()
    assert result.draws.kind == "laplace" and result.draws.interval_method == "hdi"


@pytest.mark.slow
def test_sensitivity_to_dict_is_the_cli_json(csv):
    published = js.sensitivity(published="epoch", compute=[1e22, 1e24])
    assert _timeless(published.to_dict()) == _timeless(_cli_json(["sensitivity", "--published", "epoch",
                                                                   "--compute", "1e22", "1e24"]))
    fitted = js.sensitivity(js.load_runs(csv), bootstrap=8, top=2)
    assert _timeless(fitted.to_dict()) == _timeless(_cli_json(["sensitivity", csv, "--bootstrap", "8", "--top", "2"]))
    summary = fitted.summary().set_index("quantity")
    assert {"N*(1e+24)", "a", "reconciled exponent"} <= set(summary.index) and "e_alpha" in summary
    assert (summary.lower < summary.estimate).all()  # the delta method's interval, from the refits


def test_reconcile_to_dict_is_the_cli_json():
    result = js.reconcile("chinchilla")
    assert _timeless(result.to_dict()) == _timeless(_cli_json(["reconcile", "--published", "chinchilla",
                                                                "--no-figures"]))
    summary = result.summary().set_index("quantity")
    assert summary.loc["exponent_nonembedding", "paper"] == 0.74
    names = ("fig1_embedding_fit", "fig2_local_exponent", "fig3_training_curves", "fig4_frontier")
    assert set(result.plot()) == {f"{name}_chinchilla" for name in names}
    with pytest.raises(ValueError, match="no published parameter set 'gpt4'"):
        js.reconcile("gpt4")


@pytest.mark.slow
def test_fits_and_posteriors_share_one_draws_type(csv):
    fitted = js.fit(csv, bootstrap=24, seed=0)
    posterior = js.bayes(csv, laplace=True)
    for draws, method in ((fitted.draws, "percentile"), (posterior.draws, "hdi")):
        assert isinstance(draws, js.Draws) and draws.interval_method == method
        assert set(draws.quantities()) >= {"A", "B", "E", "alpha", "beta", "a", "b", "G"}
        lo, hi = draws.interval(draws.quantities()["a"])
        assert lo < np.median(draws.quantities()["a"]) < hi
    for source in (fitted, posterior, posterior.draws):
        allocation = js.allocate(source, [1e22])
        assert allocation.table["N_lo"][0] < allocation.table["N"][0] < allocation.table["N_hi"][0]
    study = js.sensitivity(posterior, compute=[1e22])
    assert study.to_dict()["draws"]["kind"] == "laplace" and "influence" not in study.to_dict()
    assert study.to_dict()["quantities"]["a"]["sd_log_draws"] > 0


def test_a_law_without_chinchillas_form_says_why_nothing_reconciles():
    law = js.laws.get("kaplan")
    assert js.laws.get("chinchilla").chinchilla_undefined is None
    assert "kaplan is L(N, D) = [(N_c/N)" in law.chinchilla_undefined
    with pytest.raises(ValueError, match="the reconciled exponent is undefined for the kaplan law"):
        law.require_chinchilla("the reconciled exponent")
    assert js.laws.get("word2vec-error-chinchilla").chinchilla_undefined is not None  # a law of (dim, words)


def test_figures_save_and_show_in_a_notebook(csv, tmp_path):
    result = js.fit(csv, bootstrap=8)
    figures = result.plot()
    assert set(figures) == {"residuals", "isoflop"} and "data:image/png;base64," in figures._repr_html_()
    paths = result.save(tmp_path)
    assert sorted(p.rsplit("/", 1)[1] for p in paths) == ["bootstrap_draws.csv", "isoflop.png", "residuals.png"]


def test_the_api_reference_documents_every_public_name():
    """docs/api/index.md, the reference's entry page, has an entry for every name of ``__all__``,
    under its public name (``jaxscale.RunsTable``, not the module that defines it)."""
    from tests.conftest import REPO_ROOT

    page = (REPO_ROOT / "docs" / "api" / "index.md").read_text()
    entries = set(re.findall(r"^\.\. (?:autofunction|autoclass|py:type):: ([\w.]+)", page, re.MULTILINE))
    documented = {entry.removeprefix("jaxscale.") for entry in entries}
    assert sorted(set(js.__all__) - documented - {"__version__", "laws"}) == []
    assert "js.laws" in page and {"jaxscale.laws.names", "jaxscale.laws.get"} <= entries


def test_an_allocation_over_draws_prints_its_bands():
    """The text said 'bands over 3 bootstrap draws' and printed N*, D* and D*/N* without them."""
    spread = np.array([0.9, 1.0, 1.1])
    params = ch.EPOCH._replace(**{k: np.full(3, v) for k, v in ch.EPOCH._asdict().items()})
    draws = js.laws.Draws.of(ch.LAW, params._replace(alpha=params.alpha * spread, beta=params.beta * spread[::-1]),
                             "bootstrap")
    result = js.allocate(draws, [1e22, 1e24])
    numbers, text = result.to_dict(), result.text()
    assert "3 bootstrap draws" in text
    for i in range(2):
        assert f"{numbers['N_lo'][i]:.4g} to {numbers['N_hi'][i]:.4g}" in text
        assert f"{numbers['D_lo'][i]:.4g} to {numbers['D_hi'][i]:.4g}" in text


def test_a_parameter_the_law_lacks_is_named(capsys):
    """`jaxscale allocate --law chinchilla --r-star-d 5` said "Got unexpected field names: ['R_D_star']"."""
    with pytest.raises(ValueError, match=r"the chinchilla law has no parameter R_D_star; its parameters are A, B, E"):
        js.allocate("chinchilla", 1e22, params={"R_D_star": 5.0})
    assert main(["allocate", "--law", "chinchilla", "--compute", "1e22", "--r-star-d", "5"]) == 2
    assert "has no parameter R_D_star" in capsys.readouterr().err


def test_a_fit_without_a_bootstrap_prints_the_sandwich_intervals_its_json_holds(csv):
    """The identifiability report's 95% intervals (the sandwich's) were in the JSON only: the text
    and the summary showed the exponents and a, b without any."""
    result = js.fit(csv)
    judged = result.to_dict()["identifiability"]["intervals"]
    assert {"alpha", "beta", "a", "b"} <= set(judged)
    text = str(result)
    summary = result.summary().set_index("quantity")
    for key, (estimate, lower, upper) in judged.items():
        assert f"95% [{lower:.6g}, {upper:.6g}] (sandwich)" in text
        assert summary.loc[key, "source"] == "sandwich"
        assert summary.loc[key, ["lower", "upper"]].tolist() == [lower, upper]
        assert lower < estimate < upper
    assert np.isnan(summary.loc["E", "lower"]) and pd.isna(summary.loc["E", "source"])  # no interval: none shown


def test_an_allocation_of_a_fit_says_how_far_it_lies_outside_the_runs(csv):
    """`jaxscale allocate RUNS --compute 1e32` printed N* = 1.3e15 (4.9 decades beyond Epoch's
    largest run) as plainly as an optimum inside the runs."""
    allocation = js.allocate(js.fit(csv), [1e22, 1e28])
    numbers = allocation.to_dict()
    assert numbers["beyond_runs"] == [False, True]  # the runs span 2 decades of N: 1e22's N* lies 1 out
    assert len(numbers["warnings"]) == 1 and numbers["warnings"][0].startswith("at C = 1e+28 FLOP, N* lies")
    text = allocation.text()
    assert "decades outside runs" in text and f"warning: {numbers['warnings'][0]}" in text
    published = js.allocate("chinchilla", [1e28]).to_dict()  # no runs: nothing to be outside of
    assert "beyond_runs" not in published and "warnings" not in published


def test_a_grouped_posterior_does_not_advise_fitting_its_groups_one_at_a_time():
    """`jaxscale bayes isoflops_public.csv --group-by source` warned "rows of 3 studies; fit one at
    a time with --where source=NAME", the advice the grouped model makes needless."""
    import warnings

    frame = pd.concat([_runs(seed=k).assign(source=name, dataset="d", model="m")
                       for k, name in enumerate(("lab_a", "lab_b"))])
    frame = frame.assign(budget=6 * frame.N * frame.D).rename(columns={"N": "params", "D": "tokens"})
    with pytest.warns(UserWarning, match="fit one at a time with --where source=NAME"):
        js.load_runs(frame)
    for verb in (lambda: js.bayes_grouped(frame, "source", share="no_such"),
                 lambda: js.loo(frame, group_by="source", share="no_such")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # any warning fails the test before the bad share is refused
            with pytest.raises(ValueError, match="no_such"):
                verb()
    with pytest.warns(UserWarning, match="--where source=NAME"):  # grouped by another column: still said
        with pytest.raises(ValueError):
            js.bayes_grouped(frame, "dataset", share="no_such")
