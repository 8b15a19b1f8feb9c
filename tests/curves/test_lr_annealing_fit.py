"""The learning-rate annealing law (Tissue et al. 2024): its schedule areas by hand, per-step rates
as training uses them, recovery from synthetic curves under three schedules, the `jaxscale curve`
command, and the (Mis)Fitting predictions."""

from __future__ import annotations

import json

import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.curves import lr_annealing_fit as lc
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.curves.every_checkpoint import compare_with_final, fit_every_checkpoint
from jaxscale.laws import chinchilla_annealing, lr_annealing
from jaxscale.laws.schedule_areas import schedule_areas
from jaxscale.tables import schema as rs
from jaxscale.tables.learning_rates import (
    Schedule,
    named_learning_rates,
    recorded_learning_rates,
    run_learning_rates,
)
from jaxscale.tables.table import read_runs_table
from tests.conftest import shared_data_file

TRUE = {11760: lr_annealing.LRAnnealingParams(L0=2.5, A=0.8, C=0.05, alpha=0.5),
        29664: lr_annealing.LRAnnealingParams(L0=2.2, A=0.9, C=0.08, alpha=0.4)}
KINDS = ("constant", "cosine", "wsd")


def test_areas_of_a_five_step_schedule_by_hand(x64):
    # eta = 1, 1, 0.5, 0.5, 0.25 with lambda = 0.5: increments 0, 0, 0.5, 0, 0.25;
    # m = 0, 0, 0.5, 0.25, 0.375; S2 = 0, 0, 0.5, 0.75, 1.125
    areas = schedule_areas(jnp.array([1.0, 1.0, 0.5, 0.5, 0.25]), 0.5)
    np.testing.assert_allclose(areas.forward, [1.0, 2.0, 2.5, 3.0, 3.25], rtol=1e-15)
    np.testing.assert_allclose(areas.annealing, [0.0, 0.0, 0.5, 0.75, 1.125], rtol=1e-15)
    # a warmup (0.5 -> 1) is not negative annealing: increments 0, 0, 0, 0.5, 0; with lambda = 0.9
    # m = 0, 0, 0, 0.5, 0.45 and S2 = 0, 0, 0, 0.5, 0.95
    areas = schedule_areas(jnp.array([0.5, 1.0, 1.0, 0.5, 0.5]), 0.9)
    np.testing.assert_allclose(areas.forward, [0.5, 1.5, 2.5, 3.0, 3.5], rtol=1e-15)
    np.testing.assert_allclose(areas.annealing, [0.0, 0.0, 0.0, 0.5, 0.95], rtol=1e-15)


def test_areas_batch_and_the_closed_form_at_lambda_one(x64):
    lrs = np.stack([named_learning_rates(k, 0.01, 200, 10) for k in KINDS])
    batch = schedule_areas(lrs, 1.0)
    for i, row in enumerate(lrs):
        one = schedule_areas(row, 1.0)
        np.testing.assert_allclose(batch.annealing[i], one.annealing, rtol=1e-14)
        # lambda = 1: m_i = eta_peak - eta_i after the peak, so S2(s) = sum_{i <= s} (eta_peak - eta_i)
        after_peak = np.arange(200) >= np.argmax(row)
        np.testing.assert_allclose(one.annealing, np.cumsum(np.where(after_peak, row.max() - row, 0.0)), atol=1e-15)
        np.testing.assert_allclose(one.forward, np.cumsum(row), rtol=1e-14)


def test_named_rates_are_the_training_schedule():
    for kind in ("constant", "cosine"):
        schedule = Schedule(0.003, 40, 5, kind, 0.1)
        lrs = named_learning_rates(kind, 0.003, 40, 5, 0.1, steps=45)
        np.testing.assert_allclose(lrs, [schedule(i - 1) for i in range(1, 46)], rtol=1e-6)
    wsd = named_learning_rates("wsd", 0.01, 100, 10, 0.1, decay_fraction=0.2)
    np.testing.assert_allclose(wsd[:80], named_learning_rates("constant", 0.01, 100, 10)[:80])
    np.testing.assert_allclose(wsd[79:], np.linspace(0.01, 0.001, 21), rtol=1e-12)
    # recorded rates every 4 steps of a linear piece are interpolated exactly
    np.testing.assert_allclose(recorded_learning_rates(np.array([4.0, 8.0]), np.array([0.4, 0.8]), 8),
                               np.arange(1, 9) / 10)
    with pytest.raises(ValueError, match="schedule must be one of"):
        named_learning_rates("linear", 0.01, 100)
    with pytest.raises(ValueError, match=r"final_fraction must be in \[0, 1\]; got 2"):
        named_learning_rates("cosine", 0.01, 100, 10, 2.0)  # a "decay" up to twice the peak


def synthetic_runs(steps: int = 400, every: int = 10) -> pd.DataFrame:
    """Checkpoints of a constant, a cosine and a WSD run of two sizes, losses from the law."""
    rows = []
    for n, params in TRUE.items():
        for kind in KINDS:
            lrs = named_learning_rates(kind, 0.01, steps, 20, 0.1)
            areas = schedule_areas(lrs, 0.999)
            for s in range(every, steps + 1, every):
                loss = params.L0 + params.A * areas.forward[s - 1] ** -params.alpha - params.C * areas.annealing[s - 1]
                rows.append({rs.RUN_ID: f"{n}_{kind}", rs.STEP: s, rs.N_TOTAL: n, rs.TOKENS: 256 * s,
                             rs.LOSS: float(loss), rs.SCHEDULE: kind, rs.PEAK_LR: 0.01, rs.TOTAL_STEPS: steps,
                             rs.WARMUP_STEPS: 20, rs.FINAL_FRACTION: 0.1})
    return pd.DataFrame(rows)


def test_law_recovers_its_parameters_from_three_schedules(x64):
    table = read_runs_table(synthetic_runs())
    curves = lc.with_areas(table, run_learning_rates(table))
    for n, params in TRUE.items():
        fit = fit_approach3(curves.select(curves.n == n), law=lr_annealing.LAW)
        np.testing.assert_allclose(np.array(fit.params), np.array(params), rtol=1e-4)


def test_fit_on_two_schedules_predicts_the_third(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    synthetic_runs().to_csv(path, index=False)
    fitted = ",".join(f"{n}_{k}" for n in TRUE for k in ("constant", "cosine"))
    code = main(["curve", str(path), "--fit-runs", fitted, "--predict", ",".join(f"{n}_wsd" for n in TRUE), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    numbers = json.loads(out)
    assert [g["n_total"] for g in numbers["groups"]] == list(TRUE)
    for group in numbers["groups"]:
        assert group["predicted_runs"] == 1 and group["final_mare"] < 1e-5 and group["curve_mare"] < 1e-5
        np.testing.assert_allclose([group[k] for k in ("L0", "A", "C", "alpha")], TRUE[group["n_total"]], rtol=1e-3)


@pytest.mark.parametrize("argv, message", [
    (["--fit-runs", "a"], "fit_runs and predict (--fit-runs, --predict) go together"),
    ([], "choose protocol sweep|misfitting (--protocol)"),
    (["--fit-runs", "11760_constant", "--predict", "nope"], "no run 'nope'"),
])
def test_curve_bad_options_exit_2(tmp_path, capsys, argv, message):
    path = tmp_path / "runs.csv"
    synthetic_runs().to_csv(path, index=False)
    assert main(["curve", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_one_model_size_is_enough_and_a_flat_curve_leaves_alpha_undefined(tmp_path, capsys):
    # the law is fitted per size, so a table of one size's runs is a whole input
    one_size = synthetic_runs()[lambda f: f[rs.N_TOTAL] == 11760]
    argv = ["--fit-runs", "11760_constant,11760_cosine", "--predict", "11760_wsd"]
    path = tmp_path / "one.csv"
    one_size.to_csv(path, index=False)
    assert main(["curve", str(path), *argv, "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["groups"]
    np.testing.assert_allclose([group[k] for k in ("L0", "A", "C", "alpha")], TRUE[11760], rtol=1e-3)
    # a loss that never moves: any alpha fits, so none is reported, while the predictions stay right
    one_size.assign(**{rs.LOSS: 3.0}).to_csv(path, index=False)
    assert main(["curve", str(path), *argv, "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["groups"]
    assert group["alpha"] is None and group["final_mare"] < 1e-9
    assert main(["curve", str(path), *argv]) == 0
    assert capsys.readouterr().out.splitlines()[3].endswith("| undefined |")


def test_a_table_of_final_losses_is_refused_naming_the_group(tmp_path, capsys):
    path = tmp_path / "final.csv"
    synthetic_runs().groupby(rs.RUN_ID).tail(1).to_csv(path, index=False)
    assert main(["curve", str(path), "--fit-runs", "11760_constant,11760_cosine", "--predict", "11760_wsd"]) == 2
    err = capsys.readouterr().err
    assert "n_total=11760: the fitted runs" in err and "have 2 checkpoints" in err and "give every checkpoint" in err


def test_moving_blocks_rebuild_each_run_from_consecutive_checkpoints():
    from jaxscale.fitting.bootstrap import moving_block_counts

    series = np.array(["a"] * 8 + ["b"] * 27)
    order = np.r_[np.arange(8)[::-1], np.arange(27)]  # run a listed last step first
    counts = moving_block_counts(series, order, 200, seed=0)
    assert (counts[:, :8].sum(1) == 8).all() and (counts[:, 8:].sum(1) == 27).all()
    np.testing.assert_array_equal(counts, moving_block_counts(series, order, 200, seed=0))
    # run b (27 checkpoints) is rebuilt from 9 blocks of 3: its first and last checkpoints lie in
    # one block each (the first and last), so they are drawn half as often as the middle on average
    b = counts[:, 8:].mean(0)
    assert b[0] == pytest.approx(9 / 25, rel=0.25) and b[13] == pytest.approx(27 / 25, rel=0.25)


def test_curve_bootstrap_gives_intervals_and_their_coverage(tmp_path, capsys):
    runs = synthetic_runs()
    runs[rs.LOSS] *= np.exp(np.random.default_rng(0).normal(0.0, 0.003, len(runs)))
    path = tmp_path / "runs.csv"
    runs.to_csv(path, index=False)
    argv = ["curve", str(path), "--fit-runs", "11760_constant,11760_cosine", "--predict", "11760_wsd",
            "--bootstrap", "50"]
    assert main([*argv, "--json"]) == 0
    numbers = json.loads(capsys.readouterr().out)
    (group,), (final,) = numbers["groups"], numbers["final_errors"]
    assert numbers["bootstrap"] == 50 and group["bootstrap_refits"] >= 45
    low, high = group["alpha_ci95"]
    assert low < group["alpha"] < high and high - low > 1e-4
    assert final["predicted_lo"] < final["predicted"] < final["predicted_hi"]
    assert group["final_coverage"] in (0.0, 1.0)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| alpha 95% | finals in 95% |" in out and "moving-block resamples of the fitted checkpoints cover" in out
    with pytest.raises(SystemExit) as parser_exit:
        main([*argv[:-1], "1"])
    assert parser_exit.value.code == 2 and "argument --bootstrap: must be 0 (none) or >= 2" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("sigma, rho", [(0.003, 0.0), (0.01, 0.0), (0.01, 0.7)])
def test_curve_intervals_coverage_of_the_true_final_loss(sigma, rho):
    """How often the 95% intervals hold the noise-free final loss of the predicted WSD run, over 15
    noisy copies of the synthetic runs (30 cases): log-normal noise of scale ``sigma``, AR(1) with
    lag-1 correlation ``rho`` along each run. docs/guides/curves.md ("Intervals") quotes the printed coverage; the floor
    only catches intervals far narrower than these."""
    clean = synthetic_runs(steps=400, every=4)
    hits = []
    for seed in range(15):
        rng = np.random.default_rng(seed)
        noisy = clean.copy()
        for idx in noisy.groupby(rs.RUN_ID).groups.values():
            e = np.zeros(len(idx))
            for i, z in enumerate(rng.normal(0.0, sigma * np.sqrt(1 - rho**2), len(idx))):
                e[i] = (rho * e[i - 1] if i else rng.normal(0.0, sigma)) + (z if i else 0.0)
            noisy.loc[idx, rs.LOSS] = clean.loc[idx, rs.LOSS] * np.exp(e)
        table = read_runs_table(noisy)
        for n in TRUE:
            fit = lc.fit_group(table, run_learning_rates(table), [f"{n}_constant", f"{n}_cosine"], [f"{n}_wsd"],
                               resamples=200, seed=seed)
            final = fit.final_errors().iloc[0]
            truth = clean[clean[rs.RUN_ID] == f"{n}_wsd"][rs.LOSS].iloc[-1]
            hits.append(final["predicted_lo"] <= truth <= final["predicted_hi"])
    print(f"sigma {sigma}, rho {rho}: 95% intervals cover the true final loss in {np.mean(hits):.0%} of {len(hits)}")
    assert np.mean(hits) >= 0.6


def test_named_runs_in_a_table_without_run_identity_are_refused(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    synthetic_runs().drop(columns=[rs.RUN_ID]).to_csv(path, index=False)
    assert main(["curve", str(path), "--fit-runs", "a", "--predict", "b"]) == 2  # an AttributeError before
    assert "learning curves need run identity" in capsys.readouterr().err


def test_fit_refuses_the_law_without_schedule_areas(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    synthetic_runs().to_csv(path, index=False)
    assert main(["fit", str(path), "--law", "lr-annealing"]) == 2
    err = capsys.readouterr().err
    assert "reads the schedule areas S1, S2" in err and "jaxscale curve" in err


def test_law_is_undefined_where_its_loss_would_be_negative(x64):
    params = TRUE[11760]
    log_l = lr_annealing.log_loss(params, jnp.log(jnp.array([4.0, 4.0])), jnp.log(jnp.array([1.0, 1e3])))
    assert float(log_l[0]) == pytest.approx(np.log(2.5 + 0.8 / 2 - 0.05))
    assert np.isnan(float(log_l[1]))


@pytest.mark.slow
def test_misfitting_longest_run_predicts_the_shorter_ones(tmp_path, capsys):
    table = pd.read_csv(shared_data_file("misfitting_scaling_results.csv"))
    path = tmp_path / "two_sizes.csv"
    table[table["model"].isin(["misfitting_400m", "misfitting_1b"])].to_csv(path, index=False)
    code = main(["curve", str(path), "--protocol", "misfitting", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    numbers = json.loads(out)
    # 400m: 3000-12000 steps at three peak rates; 1b: 10000 and 20000 steps at two (0.004 has one run)
    assert [g["predicted_runs"] for g in numbers["groups"]] == [3, 3, 3, 1, 1]
    errors = np.array([e["relative_error"] for e in numbers["final_errors"]])
    # fitted on the longest runs: at most 2.3% on these runs when this test was written
    assert np.isfinite(errors).all() and np.abs(errors).max() < 0.03


def test_fitted_and_judged_checkpoints_start_at_the_declared_number_of_warmups():
    table = read_runs_table(synthetic_runs())
    lrs = run_learning_rates(table)
    assert lc.warmup_steps(lrs["11760_cosine"]) == 20
    fitted = ["11760_constant", "11760_cosine"]
    rows = lc.in_domain(table, lrs, fitted, lc.TRANSIENT_WARMUPS)
    ids = table.run_id.astype(str)
    assert set(ids[rows]) == set(fitted)
    assert table.step[rows].min() == lc.TRANSIENT_WARMUPS * 20
    every = lc.in_domain(table, lrs, fitted, 0)
    np.testing.assert_array_equal(every, np.isin(ids, fitted))


def test_sweep_split_fits_the_one_budget_cosine_run_beside_a_longer_constant_run():
    runs = pd.DataFrame({
        rs.RUN_ID: ["A_constant_x1_lr0.01", "A_cosine_x0.5_lr0.01", "A_cosine_x1_lr0.01", "A_cosine_x2_lr0.01"],
        rs.SCHEDULE: ["constant", "cosine", "cosine", "cosine"], rs.PEAK_LR: 0.01,
        rs.TOTAL_STEPS: [3000, 500, 1000, 2000],  # the constant run goes on past the budget
    })
    assert lc.sweep_split(runs) == (["A_constant_x1_lr0.01", "A_cosine_x1_lr0.01"],
                                    ["A_cosine_x0.5_lr0.01", "A_cosine_x2_lr0.01"])


def test_every_checkpoint_law_is_fitted_by_the_common_fitter(x64):
    truth = chinchilla_annealing.ChinchillaAnnealingParams(E=1.8, A=400.0, B=400.0, C=1e-3, alpha=0.34, beta=0.28)
    rows = []
    for n in (1e6, 4e6, 1.6e7):
        for kind, steps in (("constant", 2000), ("cosine", 1000), ("cosine", 2000)):
            areas = schedule_areas(named_learning_rates(kind, 0.01, steps, 50, 0.1), 0.999)
            for s in range(100, steps + 1, 100):
                inputs = n, 4096 * areas.forward[s - 1] / 0.01, areas.annealing[s - 1] / 0.01
                rows.append({rs.RUN_ID: f"{n:g}_{kind}_{steps}", rs.STEP: s, rs.N_TOTAL: n, rs.TOKENS: 4096 * s,
                             rs.LOSS: float(chinchilla_annealing.LAW.evaluate(truth, *inputs)), rs.SCHEDULE: kind,
                             rs.PEAK_LR: 0.01, rs.TOTAL_STEPS: steps, rs.WARMUP_STEPS: 50, rs.FINAL_FRACTION: 0.1})
    table = read_runs_table(pd.DataFrame(rows))
    curves = lc.with_areas(table, run_learning_rates(table))
    fit = fit_every_checkpoint(curves)
    np.testing.assert_allclose(np.array(fit.params), np.array(truth), rtol=1e-3)
    assert fit.summary()["a"] == pytest.approx(0.28 / 0.62, rel=1e-3)
    compared = compare_with_final(curves, resamples=20)
    low, high = compared["every_checkpoint"]["ci95"]["a"]
    assert low <= compared["every_checkpoint"]["a"] <= high and compared["final_checkpoints"]["n_points"] == 6
    # the last checkpoints of 6 runs at two token counts do not determine the Chinchilla law
    assert "2 distinct values of D" in compared["final_checkpoints"]["undefined"]


def test_cluster_counts_draw_every_checkpoint_of_a_run_together():
    from jaxscale.fitting.bootstrap import cluster_counts

    runs = np.array(["a", "a", "b", "c", "c", "c"])
    counts = cluster_counts(runs, 50, seed=0)
    assert counts.shape == (50, 6)
    for r in counts:
        assert r[0] == r[1] and r[3] == r[4] == r[5] and r[0] + r[2] + r[3] == 3  # three runs drawn


def test_curve_refuses_to_call_a_fitted_run_a_prediction(tmp_path, capsys):
    # --fit-runs A,B --predict B printed B's in-sample error as a prediction error
    path = tmp_path / "runs.csv"
    synthetic_runs().to_csv(path, index=False)
    code = main(["curve", str(path), "--fit-runs", "11760_constant,11760_cosine", "--predict", "11760_cosine"])
    err = capsys.readouterr().err
    assert code == 2 and "predict 11760_cosine is also in --fit-runs: its error would be in-sample" in err


def test_the_curves_figures_draw_every_group_with_a_key_and_units():
    # 32 groups drew the first 16 panels, silently; no key said which colour was which run
    from jaxscale.plots.curves import PANELS_PER_PAGE, curves_figures

    table = read_runs_table(synthetic_runs())
    fits = lc.fit_groups(table, run_learning_rates(table), lc.explicit_split(
        [f"{n}_{k}" for n in TRUE for k in ("constant", "cosine")], [f"{n}_wsd" for n in TRUE]), ["n_total"],
        progress=False)
    many = fits * 10  # 20 groups: more than one page holds
    figures = curves_figures(many)
    assert list(figures) == ["curves_1", "curves_2"]
    panels = [ax for figure in figures.values() for ax in figure.axes if ax.get_visible()]
    assert len(panels) == len(many) and len(figures["curves_1"].axes) >= PANELS_PER_PAGE
    for ax in panels:
        assert ax.get_ylabel() == "loss (nats per token)"
        assert [t.get_text() for t in ax.get_legend().get_texts()][:1] == ["fitted"]
        assert any(t.get_text().startswith("predicted ") for t in ax.get_legend().get_texts())
    assert list(curves_figures(fits)) == ["curves"]


def test_the_curves_figure_draws_the_law_only_where_it_was_fitted_and_judged():
    # the law drawn into the excluded warmup of a predicted run stretched the y-axis far above the data
    from jaxscale.plots.curves import curves_figure

    runs = synthetic_runs()
    start = lc.TRANSIENT_WARMUPS * 20
    early = runs[rs.STEP] < start
    runs.loc[early, rs.LOSS] = runs.loc[early, rs.LOSS].clip(upper=3.6)  # a warmup the law does not describe
    table = read_runs_table(runs)
    fits = lc.fit_groups(table, run_learning_rates(table), lc.explicit_split(
        [f"{n}_{k}" for n in TRUE for k in ("constant", "cosine")], [f"{n}_wsd" for n in TRUE]), ["n_total"],
        progress=False)
    figure = curves_figure(fits)
    for ax, fit in zip(figure.axes, fits):
        judged = fit.predictions[fit.predictions["in_domain"]]
        shown = np.concatenate([fit.fit.runs.loss, judged[rs.LOSS], judged["predicted"]])
        for line in ax.get_lines():
            assert np.min(line.get_xdata()) >= start, line.get_label()
        low, high = ax.get_ylim()
        margin = 0.1 * np.ptp(shown)
        assert shown.min() - margin <= low and high <= shown.max() + margin


def test_a_prediction_far_outside_the_fitted_losses_is_implausible_and_left_out_of_the_headline():
    """A smoke sweep's group predicted 3,438 nats from checkpoints near 7 (12,662%), and the
    printed mean (4,221%) averaged it in; the group is now named implausible and left out of the
    headline, the same number in text and JSON."""
    from types import SimpleNamespace

    from jaxscale._api.curve import _headline
    from jaxscale.curves.lr_annealing_fit import implausible_prediction

    fitted = np.array([7.2, 6.9, 6.8])
    assert implausible_prediction(np.array([6.7, 6.6]), fitted) is None
    assert "a predicted final loss of 3438 lies far outside" in implausible_prediction(np.array([3438.0]), fitted)
    assert "far outside" in implausible_prediction(np.array([1.2]), fitted)

    def group(size, errors, reason):
        frame = pd.DataFrame({"relative_error": errors})
        return SimpleNamespace(group={"size": size}, final_errors=lambda: frame, implausible=lambda: reason)

    fits = [group("s1", [0.01, -0.03], None), group("s2", [126.62], "far outside")]
    headline = _headline(fits)
    assert headline["final_mare"] == pytest.approx(0.02)
    assert headline["implausible_groups"] == [{"size": "s2", "reason": "far outside"}]
