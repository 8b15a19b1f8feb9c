"""What the data cannot determine is refused or reported undefined, never printed as a number:
runs on one line in (log N, log D), two model sizes or token counts, a narrow range, as many runs as
parameters and a run decades from the rest are refused; implausible tables are warned about; a fitted exponent <= 0 leaves Chinchilla's a, b, G
and the allocation undefined; bootstrap intervals are taken over the resamples where a quantity is
defined, and say in how many it is not."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.core.intervals import interval, robust_normal
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.fitting.bootstrap import BootstrapResult
from jaxscale.fitting.determinable import ROUNDING_SPREAD, check_runs, spread_across_line
from jaxscale.laws import chinchilla as ch
from jaxscale.laws import lr_annealing
from jaxscale.optimum.allocation import optimal_allocation
from jaxscale.tables import schema as rs
from jaxscale.tables.table import from_arrays, read_runs_table
from tests.conftest import shared_data_file

GRID = ch.LAW.init_grid()[::45]


def law_runs(n, d, p=ch.EPOCH, noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        loss = np.asarray(ch.loss(n, d, p)) * np.exp(rng.normal(0.0, noise, np.size(n)))
    return from_arrays(n, d, loss)


def two_digits(x):
    """x written to two significant digits, as published tables write token counts."""
    return np.array([float(f"{v:.1e}") for v in x])


def test_spread_is_the_rms_distance_from_the_line_in_decades():
    t = np.repeat(np.linspace(8.0, 10.0, 20), 2)
    offsets = np.tile([0.05, -0.05], 20)  # perpendicular to the 45-degree line, in decades
    x1, x2 = 10 ** (t - offsets / np.sqrt(2)), 10 ** (t + 1.3 + offsets / np.sqrt(2))
    assert spread_across_line(x1, x2) == pytest.approx(0.05, rel=1e-9)
    assert spread_across_line(10 ** t, 10 ** (0.8 * t + 2)) < 1e-12


def test_one_tokens_per_parameter_ratio_is_refused_even_when_rounded():
    n = np.geomspace(7e7, 1.6e10, 30)
    with pytest.raises(ValueError, match=r"one line in \(log N, log D\): D ∝ N\^1\.00.*undetermined"):
        fit_approach3(law_runs(n, two_digits(20 * n)), grid=GRID)
    assert spread_across_line(n, two_digits(20 * n)) <= ROUNDING_SPREAD


def test_runs_at_three_ratios_are_fitted():
    n = np.repeat(np.geomspace(7e7, 1.6e10, 10), 3)
    runs = law_runs(n, n * np.tile([5.0, 20.0, 80.0], 10))
    check_runs(ch.LAW, runs)  # 0.24 decades across the line
    assert fit_approach3(runs, grid=GRID).params.beta > 0


def test_a_law_without_an_exponent_on_its_second_input_is_not_held_to_the_rule():
    n = np.geomspace(1e8, 1e10, 8)
    runs = read_runs_table(pd.DataFrame({rs.N_TOTAL: n, rs.TOKENS: 20 * n, rs.LOSS: 3.0 - 0.1 * np.arange(8),
                                   rs.FORWARD_AREA: n / 1e6, rs.ANNEALING_AREA: n / 1e7}))  # both pairs on a line
    check_runs(lr_annealing.LAW, runs)  # C S2: one line of runs determines it
    with pytest.raises(ValueError, match="one line"):
        check_runs(ch.LAW, runs)


def test_cli_refuses_a_one_line_table_with_exit_2(tmp_path, capsys):
    n = np.geomspace(1e8, 1e10, 8)
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n" + "".join(f"{a:.6g},{20 * a:.6g},{3.0 - 0.1 * i}\n" for i, a in enumerate(n)))
    code = main(["fit", str(path), "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "one line" in err and len(err.strip().splitlines()) == 1


def rising_with_d():
    """Runs whose loss rises slowly with D: the fit's beta is < 0, so no allocation exists."""
    rng = np.random.default_rng(1)
    n = np.exp(rng.uniform(np.log(1e7), np.log(1e11), 60))
    d = np.exp(rng.uniform(np.log(1e9), np.log(1e12), 60))
    return n, d, (1.7 + 400 * n ** -0.34) * (d / 1e10) ** 0.01


def rising_csv(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in zip(*rising_with_d())))
    return path


def test_a_negative_exponent_leaves_the_allocation_undefined():
    fit = fit_approach3(from_arrays(*rising_with_d()), grid=GRID)
    assert fit.params.beta < 0
    summary = fit.summary()
    assert all(np.isnan(summary[k]) for k in ("a", "b", "G"))
    assert np.isnan(optimal_allocation(fit.law, fit.params, [1e20, 1e22]).n).all()
    defined = fit.params._replace(beta=0.3)
    assert np.isfinite(optimal_allocation(fit.law, defined, [1e20, 1e22]).n).all()
    assert ch.closed_forms(defined)["a"] == pytest.approx(0.3 / (0.3 + fit.params.alpha))


def test_cli_prints_undefined_and_says_why(tmp_path, capsys):
    path = rising_csv(tmp_path)
    code = main(["fit", str(path), "--bootstrap", "50", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    numbers = json.loads(out)
    assert code == 0 and numbers["beta"] < 0
    assert numbers["a"] is None and numbers["allocation"]["N"] == [None]
    assert "beta <= 0" in numbers["note"]
    assert 0 < numbers["undefined"]["a"] <= 1 and 0 < numbers["allocation"]["undefined_fraction"][0] <= 1
    code = main(["fit", str(path)])
    out = capsys.readouterr().out
    assert code == 0 and "a                      undefined" in out and "allocation.N                       undefined" in out


def test_a_scale_that_overflowed_has_no_allocation():
    p = ch.EPOCH._replace(B=np.inf)
    assert np.isnan(optimal_allocation(ch.LAW, p, [1e22]).n).all()


def test_a_scale_at_infinity_leaves_every_closed_form_undefined():
    assert all(np.isnan(v) for v in ch.LAW.derived(ch.EPOCH._replace(A=np.inf)).values())
    assert all(np.isfinite(v) for v in ch.LAW.derived(ch.EPOCH).values())


def test_as_many_runs_as_parameters_are_refused_for_zero_degrees_of_freedom(capsys):
    # Epoch's table less its 240 highest losses: 5 runs for 5 parameters; every fit path says so
    table = ["fit", str(shared_data_file("chinchilla_svg_extracted_data.csv")), "--drop-highest", "240"]
    for command in (table, ["sensitivity", *table[1:]], ["bayes", *table[1:], "--no-progress"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "5 runs for the chinchilla law's 5 parameters: no degrees of freedom" in err
        assert len(err.strip().splitlines()) == 1


def two_values_table(n_values=None, d_values=None):
    """15 token counts at each of two sizes (or 15 sizes at each of two token counts), from alpha = 0.34,
    beta = 0.28: the fit put alpha at 2.4 on the first with exit 0."""
    p = ch.ChinchillaParams(A=400.0, B=410.0, E=1.69, alpha=0.34, beta=0.28)
    if n_values is not None:
        n, d = np.repeat(n_values, 15), np.tile(np.geomspace(1e9, 1e11, 15), len(n_values))
    else:
        n, d = np.tile(np.geomspace(1e7, 1e10, 15), len(d_values)), np.repeat(d_values, 15)
    return law_runs(n, d, p)


def test_two_model_sizes_are_refused_naming_what_they_cannot_separate():
    with pytest.raises(ValueError, match=r"^2 distinct values of N \(1e\+08, 1e\+09\) in 30 runs: the chinchilla "
                                         r"law's alpha and A cannot be separated.*at least 3 distinct values"):
        fit_approach3(two_values_table(n_values=[1e8, 1e9]), grid=GRID)
    check_runs(ch.LAW, two_values_table(n_values=[1e8, 3e8, 1e9]))  # a third size mends it


def test_two_token_counts_are_refused():
    with pytest.raises(ValueError, match=r"^2 distinct values of D \(2e\+09, 2e\+10\).*beta and B cannot be"):
        fit_approach3(two_values_table(d_values=[2e9, 2e10]), grid=GRID)


def test_sizes_within_rounding_count_as_one_and_a_narrow_range_is_refused():
    runs = two_values_table(n_values=[1.00e8, 1.04e8, 2e8])  # 0.017 decades apart: one size
    with pytest.raises(ValueError, match="2 distinct values of N"):
        check_runs(ch.LAW, runs)
    with pytest.raises(ValueError, match=r"N spans 0\.30 decades \(1e\+08 \.\. 2e\+08\): over less than 0\.5"):
        check_runs(ch.LAW, two_values_table(n_values=[1e8, 1.4e8, 2e8]))


def test_a_run_decades_away_from_the_rest_is_refused_naming_the_row(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = np.exp(rng.uniform(np.log(1e8), np.log(1e10), 40))
    d = n * np.exp(rng.uniform(np.log(5), np.log(100), 40))
    runs = law_runs(n, d)
    n[7] = 1e-300  # alone, it put a = 0.999 into the fit
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in zip(n, d, runs.loss)))
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "row 8: N = 1e-300 lies more than 3 decades from every other run's" in err


def test_swapped_columns_and_a_loss_in_another_unit_are_warned_about():
    from jaxscale.support.plausibility import PlausibilityWarning

    n = np.repeat(np.geomspace(1e8, 1e10, 8), 3)
    runs = law_runs(n, n * np.tile([5.0, 20.0, 80.0], 8))
    with pytest.warns(PlausibilityWarning, match=r"D < N on 24 of 24 runs .*swapped"):
        check_runs(ch.LAW, from_arrays(runs.d, runs.n, runs.loss))
    loss = runs.loss.copy()
    loss[4] *= 1000
    with pytest.warns(PlausibilityWarning, match=r"row 5: loss .* more than tenfold from every other run's"):
        check_runs(ch.LAW, from_arrays(runs.n, runs.d, loss))


def test_n_in_billions_is_warned_about():
    from jaxscale.support.plausibility import PlausibilityWarning

    n = np.repeat(np.geomspace(1e8, 1e10, 8), 3)
    runs = law_runs(n, n * np.tile([5.0, 20.0, 80.0], 8))
    with pytest.warns(PlausibilityWarning, match=r"tokens per parameter on the median run .*millions or billions"):
        check_runs(ch.LAW, from_arrays(runs.n / 1e9, runs.d, runs.loss))


def test_a_loss_rising_with_n_and_d_is_refused_with_exit_2(tmp_path, capsys):
    """A table whose loss grows with both inputs was fitted (alpha -5.4, beta -0.017) with exit 0."""
    n = np.repeat(np.geomspace(1e7, 1e9, 5), 5)
    d = np.tile(np.geomspace(1e9, 1e11, 5), 5)
    loss = 1.5 + 0.02 * np.log(n) + 0.03 * np.log(d)
    with pytest.raises(ValueError, match=r"the loss rises with scale: .* per e-fold of N and .* per e-fold of D"):
        check_runs(ch.LAW, from_arrays(n, d, loss))
    path = tmp_path / "rising.csv"
    path.write_text("N,D,loss\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in zip(n, d, loss)))
    code = main(["fit", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "rises with scale" in err


def test_the_cli_prints_a_plausibility_warning_once(tmp_path, capsys, recwarn):
    n = np.repeat(np.geomspace(1e8, 1e10, 8), 3)
    runs = law_runs(n, n * np.tile([5.0, 20.0, 80.0], 8))
    path = tmp_path / "runs.csv"
    path.write_text("N,D,loss\n" + "".join(f"{a:.17g},{b:.17g},{c:.17g}\n" for a, b, c in zip(runs.d, runs.n, runs.loss)))
    assert main(["fit", str(path), "--bootstrap", "4", "--json"]) == 0  # fits, then refits
    assert sum("are the columns of N and D swapped?" in str(w.message) for w in recwarn) == 1


def test_intervals_skip_undefined_draws_and_keep_infinite_bounds():
    draws = np.concatenate([np.arange(1.0, 101.0), [np.nan] * 50])
    lo, hi = interval(draws)
    assert (lo, hi) == pytest.approx(tuple(np.percentile(np.arange(1.0, 101.0), [2.5, 97.5])))
    lo, hi = interval(np.concatenate([np.arange(1.0, 91.0), [np.inf] * 10]))
    assert np.isfinite(lo) and hi == np.inf
    assert np.isnan(interval(np.full(5, np.nan))).all()


def test_bootstrap_summaries_count_undefined_resamples():
    beta = np.array([0.3, 0.25, -0.1, 0.35, 0.28, -0.05, 0.31, 0.29])
    params = ch.EPOCH._replace(**{k: np.full(8, v) for k, v in ch.EPOCH._asdict().items() if k != "beta"}, beta=beta)
    estimates = {k: 0.5 for k in ("A", "B", "E", "alpha", "beta", "a", "b", "G")}
    boot = BootstrapResult(law=ch.LAW, params=params, vectors=np.asarray(ch.LAW.to_vector(params)),
                           objective=np.zeros(8), converged=np.ones(8, bool), seed=0, seconds=0.0,
                           estimates=estimates)
    assert boot.undefined() == {"a": 0.25, "b": 0.25, "G": 0.25}
    a = boot.draws["a"][beta > 0]
    assert boot.se()["a"] == pytest.approx(np.std(a, ddof=1))
    assert boot.ci95()["a"] == pytest.approx(robust_normal(0.5, a))  # about the estimate, undefined draws left out
    assert boot.se()["beta"] == pytest.approx(np.std(beta, ddof=1))


def test_bayesian_start_moves_a_negative_exponent_into_the_prior_support():
    from jaxscale.inference.refit import MIN_START_EXPONENT, approach3_start

    runs = from_arrays(*rising_with_d())
    start, sigma = approach3_start(ch.LAW, runs)
    fit = fit_approach3(runs)
    assert fit.params.beta < 0 and start.beta == MIN_START_EXPONENT
    assert start.alpha == fit.params.alpha and start.A == fit.params.A and sigma > 0


def test_sensitivity_refuses_a_fit_without_an_optimum(tmp_path, capsys):
    path = rising_csv(tmp_path)
    code = main(["sensitivity", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "beta = -" in err and "do not exist" in err


def test_a_stationary_point_that_is_a_maximum_is_no_optimum():
    from jaxscale.optimum.solver import optimal_log_n, stationary_log_n

    def hump(n, d, params):  # the loss along any budget peaks at N = e^20
        return 5.0 - 0.01 * (jnp.log(n) - 20.0) ** 2

    with jax.enable_x64(True):
        log_c = jnp.log(jnp.asarray([1e20, 1e22]))
        assert np.allclose(stationary_log_n(hump, None, log_c), 20.0)
        assert np.isnan(optimal_log_n(hump, None, log_c)).all()


def test_an_exponent_at_or_below_zero_has_no_allocation_whatever_the_solver_finds():
    """With both exponents < 0 the loss grows with N and with D, and along a budget it still has a
    minimum; the law is outside its definition (exponents are positive) and has no allocation."""
    from jaxscale.optimum.solver import optimal_log_n

    upside_down = ch.EPOCH._replace(alpha=-0.3, beta=-0.3)
    with jax.enable_x64(True):
        assert np.isfinite(optimal_log_n(ch.LAW, upside_down, jnp.log(1e22)))
    assert np.isnan(optimal_allocation(ch.LAW, upside_down, [1e22]).n).all()
    assert np.isfinite(optimal_allocation(ch.LAW, ch.EPOCH, [1e22]).n).all()


def test_the_holdout_backtest_says_that_its_own_runs_are_too_narrow():
    from jaxscale.fitting.holdout import extrapolation_scale

    n = np.repeat([1e8, 1.2e8, 1.4e8, 1e9, 3e9, 1e10], 3)
    runs = law_runs(n, n * np.tile([5.0, 20.0, 80.0], 6))
    with pytest.raises(ValueError, match=r"holdout's backtest fits the runs with N below 3\.74e\+08, and: N spans 0\.15"):
        extrapolation_scale(runs, "n", grid=GRID)


def test_one_isoflop_budget_is_refused_as_one_line_not_as_a_rising_loss():
    """On one isoFLOP budget log N and log D are collinear, so no plane through log loss has
    determined slopes: the table was refused as 'the loss rises with scale ... an accuracy?'
    (Epoch's 6e18-FLOP profile), where the runs lying on one line is what it lacks."""
    n = np.geomspace(5e7, 6e8, 9)
    runs = law_runs(n, 6e18 / (6 * n), noise=0.0)
    with pytest.raises(ValueError, match=r"one line in \(log N, log D\).*other compute budgets .*6 N D ≈ 6e\+18"):
        check_runs(ch.LAW, runs)


def test_one_undefined_resample_in_many_is_not_printed_as_none():
    """One refit of 400 without an exponent > 0 was printed 'undefined in 0% of resamples'."""
    from jaxscale._api.fit import _fit_text

    numbers = {"law": "chinchilla", "method": "approach3", "a": 0.5, "ci95": {"a": [0.45, 0.55]},
               "undefined": {"a": 1 / 400}, "bootstrap_resamples": 400, "bootstrap_converged": 400}
    [line] = [text for text in _fit_text(numbers) if text.strip().startswith("a ")]
    assert "undefined in 1 of 400 resamples" in line and "0%" not in line
