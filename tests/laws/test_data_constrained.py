"""The data-constrained law of Muennighoff et al. (2023): its limits, the value of repeated
epochs, the compute-optimal run under a unique-token budget, and `jaxscale allocate`."""

from __future__ import annotations

import contextlib
import io
import json

import jax
import numpy as np
import pandas as pd
import pytest

from jaxscale.cli import main
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.laws import chinchilla
from jaxscale.laws.data_constrained import (
    LAW,
    MUENNIGHOFF,
    DataConstrainedParams,
    base_params,
    effective_data,
    loss,
    loss_floor,
)
from jaxscale.optimum.allocation import (
    optimal_allocation,
    optimal_allocation_given_unique_tokens,
)
from jaxscale.tables.table import read_runs_table

#: The same R*, on Hoffmann et al.'s base law, whose exponents differ (alpha != beta).
ON_HOFFMANN = DataConstrainedParams(*chinchilla.CHINCHILLA, MUENNIGHOFF.R_D_star, MUENNIGHOFF.R_N_star)


def _reference(n, d, u, p):
    """The law as Muennighoff et al. state it, in natural space with NumPy (Section 3 and the
    authors' README): U_D = min(U, D), U_N = min(N, N_opt(U_D)), N' and D' with exponential decay."""
    g = (p.alpha * p.A / (p.beta * p.B)) ** (1 / (p.alpha + p.beta))
    u_d = np.minimum(u, d)
    u_n = np.minimum(n, g * (g * u_d) ** (p.beta / p.alpha))
    r_d, r_n = d / u_d - 1, n / u_n - 1
    d_eff = u_d + u_d * p.R_D_star * (1 - np.exp(-r_d / p.R_D_star))
    n_eff = u_n + u_n * p.R_N_star * (1 - np.exp(-r_n / p.R_N_star))
    return p.E + p.A / n_eff ** p.alpha + p.B / d_eff ** p.beta


def _grid():
    n, d = (g.ravel() for g in np.meshgrid(np.geomspace(1e7, 1e12, 11), np.geomspace(1e8, 1e14, 13)))
    return n, d


@pytest.mark.parametrize("params", [MUENNIGHOFF, ON_HOFFMANN], ids=["muennighoff", "hoffmann-base"])
def test_log_form_equals_the_stated_law(params):
    n, d = _grid()
    for u in (1e9, 1e11, 1e13):
        with jax.enable_x64(True):
            np.testing.assert_allclose(loss(n, d, u, params), _reference(n, d, u, params), rtol=1e-12)


def test_authors_example_runs():
    """The two runs of Muennighoff et al.'s Figure 1 (right), whose losses the authors' README
    prints with their fitted constants: 6.34B parameters on 242B tokens and 8.67B on 178B, both
    from 25B unique tokens (comparison targets, not inputs)."""
    with jax.enable_x64(True):
        assert float(loss(6.34e9, 242e9, 25e9, MUENNIGHOFF)) == pytest.approx(2.2256440889984477, rel=1e-9)
        assert float(loss(8.67e9, 178e9, 25e9, MUENNIGHOFF)) == pytest.approx(2.2269634075087867, rel=1e-9)


def test_four_epochs_are_worth_three_point_seven_three():
    u = 1e11
    with jax.enable_x64(True):
        epochs = float(effective_data(4 * u, u, 15.39)) / u
        saturated = float(effective_data(1e9 * u, u, 15.39)) / u
    assert epochs == pytest.approx(1 + 15.39 * (1 - np.exp(-3 / 15.39)), rel=1e-14)
    assert round(epochs, 2) == 3.73
    assert saturated == pytest.approx(1 + 15.39, rel=1e-14)  # D' never exceeds U_D (1 + R*_D)


def test_infinite_decay_constants_give_chinchilla():
    n, d = _grid()
    forever = MUENNIGHOFF._replace(R_D_star=1e20, R_N_star=1e20)  # the gap is R/(2R*) < 1e-15
    with jax.enable_x64(True):
        np.testing.assert_allclose(effective_data(d, 1e9, 1e20), d, rtol=1e-14)
        for u in (1e9, 1e11):
            np.testing.assert_allclose(loss(n, d, u, forever), chinchilla.loss(n, d, base_params(forever)),
                                       rtol=1e-13)


def test_no_repetition_is_chinchilla_exactly_up_to_the_optimal_size():
    """D <= U_D and N <= N_opt(D): Chinchilla's law to the last bit. Beyond N_opt(D) the excess
    parameters are discounted even without repetition (U_N = min(N, N_opt(U_D)))."""
    params = ON_HOFFMANN
    n, d = _grid()
    g = (params.alpha * params.A / (params.beta * params.B)) ** (1 / (params.alpha + params.beta))
    n_opt = g * (g * d) ** (params.beta / params.alpha)
    small = n <= n_opt * (1 - 1e-9)
    with jax.enable_x64(True):
        np.testing.assert_allclose(chinchilla.compute_optimal_n(6 * n_opt * d, params), n_opt, rtol=1e-12)
        ours, theirs = np.asarray(loss(n, d, 1e15, params)), np.asarray(chinchilla.loss(n, d, base_params(params)))
    assert small.sum() > 20 and (~small).sum() > 20
    np.testing.assert_array_equal(ours[small], theirs[small])
    assert np.all(ours[~small] > theirs[~small])


def test_optimum_is_the_grid_minimum():
    """The generic solver against brute force: the stated law along C = 6ND on a fine grid of N,
    in the regimes of fresh data, a few epochs and many epochs (not so many that the loss is flat
    to float64 precision over the grid's resolution: at 343 epochs, C = 1e24 and U_D = 1e10 on
    Hoffmann et al.'s base, it is flat within 4e-16 over 2e-4 in N)."""
    epochs = []
    for params, u, budgets in ((MUENNIGHOFF, 1e11, [1e21, 1e23, 1e25]), (ON_HOFFMANN, 1e10, [1e20, 1e22, 1e23])):
        best = optimal_allocation_given_unique_tokens(LAW, params, budgets, u)
        epochs.extend(best.epochs)
        for c, n_star in zip(budgets, best.n):
            n = np.geomspace(n_star / 30, n_star * 30, 200_001)
            brute = n[np.argmin(_reference(n, c / (6 * n), u, params))]
            assert n_star == pytest.approx(brute, rel=1e-4)
        np.testing.assert_allclose(best.epochs, best.d / u, rtol=1e-15)
        np.testing.assert_allclose(6 * best.n * best.d, budgets, rtol=1e-12)
    assert min(epochs) < 1 and any(1 < e < 10 for e in epochs) and max(epochs) > 50


def test_authors_allocation_for_figure_one():
    """The authors' README grid-searches the run of Figure 1 (C of 8.67B parameters on 178B
    tokens, 25B unique) and reports 6.8B parameters, 227B tokens, 9.1 epochs (their grid steps
    about 0.4%): a comparison target with that tolerance."""
    best = optimal_allocation_given_unique_tokens(LAW, MUENNIGHOFF, 6 * 8.67e9 * 178e9, 25e9)
    assert best.n[0] == pytest.approx(6.8e9, rel=0.01)
    assert best.d[0] == pytest.approx(227e9, rel=0.01)
    assert best.epochs[0] == pytest.approx(9.1, rel=0.01)


def test_local_exponents_match_finite_differences():
    c, u, h = np.array([1e21, 1e23]), 1e10, 1e-3
    best = optimal_allocation_given_unique_tokens(LAW, ON_HOFFMANN, c, u)

    def log_n(c, u):
        return np.log(optimal_allocation_given_unique_tokens(LAW, ON_HOFFMANN, c, u).n)

    by_c = (log_n(c * np.exp(h), u) - log_n(c * np.exp(-h), u)) / (2 * h)
    by_u = (log_n(c, u * np.exp(h)) - log_n(c, u * np.exp(-h))) / (2 * h)
    np.testing.assert_allclose(best.n_exponent, by_c, rtol=1e-5)
    np.testing.assert_allclose(best.n_unique_exponent, by_u, rtol=1e-5)
    assert np.all(np.abs(best.n_exponent - chinchilla.allocation_exponents(ON_HOFFMANN)[0]) > 0.01)


def test_unlimited_unique_data_is_chinchillas_allocation():
    c = np.array([1e19, 1e22, 1e25])
    best = optimal_allocation_given_unique_tokens(LAW, ON_HOFFMANN, c, 1e30)
    fresh = optimal_allocation(chinchilla.LAW, chinchilla.CHINCHILLA, c)
    np.testing.assert_allclose(best.n, fresh.n, rtol=1e-10)
    np.testing.assert_allclose(best.loss, fresh.loss, rtol=1e-12)
    with jax.enable_x64(True):
        a = float(chinchilla.allocation_exponents(chinchilla.CHINCHILLA)[0])
    np.testing.assert_allclose(best.n_exponent, a, rtol=1e-10)
    np.testing.assert_allclose(best.n_unique_exponent, 0.0, atol=1e-12)


def test_past_the_floor_the_optimum_is_undetermined():
    """With 1e6 unique tokens and 1e22 FLOP both decays have saturated: the loss along the budget
    is flat at the floor to float64 precision, so N* is reported as undetermined (NaN)."""
    best = optimal_allocation_given_unique_tokens(LAW, MUENNIGHOFF, [1e15, 1e22], 1e6)
    assert np.isfinite(best.n[0]) and np.isnan(best.n[1]) and np.isnan(best.n_exponent[1])
    with jax.enable_x64(True):
        floor = float(loss_floor(1e6, MUENNIGHOFF))
    assert best.loss[1] == pytest.approx(floor, rel=1e-14) and best.loss[0] > floor


def test_the_law_needs_its_unique_tokens_held_fixed(tmp_path):
    with pytest.raises(ValueError, match="hold U_D fixed with law.given"):
        optimal_allocation(LAW, MUENNIGHOFF, 1e22)
    with pytest.raises(ValueError, match=r"holds \['U_D'\] fixed; got \['U'\]"):
        LAW.given(U=1e9)
    with pytest.raises(ValueError, match="needs a law of N, D and U_D; chinchilla is of"):
        optimal_allocation_given_unique_tokens(chinchilla.LAW, chinchilla.CHINCHILLA, 1e22, 1e9)
    with pytest.raises(ValueError, match="U_D must be > 0"):
        LAW.given(U_D=-1.0)
    runs = tmp_path / "runs.csv"
    runs.write_text("params,tokens,loss\n" + "".join(f"{n},{d},{3 - 0.1 * i}\n" for i, (n, d) in enumerate(
        [(1e8, 1e10), (1e9, 1e10), (1e8, 1e11), (1e9, 1e11), (1e10, 1e11), (1e10, 1e12), (1e9, 1e12), (1e8, 1e12)])))
    assert _cli(["fit", str(runs), "--law", "data-constrained"], status=2)[1] == (
        "jaxscale fit: error: this law needs U_D for every run: a column 'unique_tokens' (or u_d, unique_data) "
        "in the runs table\n")


def _cli(argv, status=0):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(argv) == status
    return out.getvalue(), err.getvalue()


def test_allocate_command(tmp_path):
    out, _ = _cli(["allocate", "--compute", "1e21", "1e23", "--unique-tokens", "1e11", "--json", "--out", str(tmp_path)])
    plot = tmp_path / "allocation.png"
    result = json.loads(out)
    best = optimal_allocation_given_unique_tokens(LAW, MUENNIGHOFF, [1e21, 1e23], 1e11)
    fresh = optimal_allocation(chinchilla.LAW, base_params(MUENNIGHOFF), [1e21, 1e23])
    for row, n, epochs, n_fresh in zip(result["budgets"], best.n, best.epochs, fresh.n):
        assert row["data_constrained"]["N"] == pytest.approx(n, rel=1e-12)
        assert row["data_constrained"]["epochs"] == pytest.approx(epochs, rel=1e-12)
        assert row["chinchilla"]["N"] == pytest.approx(n_fresh, rel=1e-12)
    many = result["budgets"][1]
    assert many["data_constrained"]["epochs"] > many["chinchilla"]["epochs"] > 1
    assert many["data_constrained"]["loss"] < many["chinchilla"]["loss_on_unique_tokens"]
    assert plot.stat().st_size > 10_000 and result["files"] == [str(plot)]
    text, _ = _cli(["allocate", "--compute", "1e23", "--unique-tokens", "1e11"])
    assert "epochs of U_D" in text and f"{best.epochs[1]:.3g}" in text


def test_allocate_any_law_at_a_published_set():
    out, _ = _cli(["allocate", "--law", "chinchilla", "--published", "epoch", "--compute", "1e24", "--json"])
    result = json.loads(out)
    fresh = optimal_allocation(chinchilla.LAW, chinchilla.EPOCH, [1e24])
    assert result["source"] == "published epoch" and result["N"][0] == pytest.approx(fresh.n[0], rel=1e-12)
    assert result["tokens_per_param"][0] == pytest.approx(fresh.d[0] / fresh.n[0], rel=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["--compute", "1e22", "--unique-tokens", "-1"], "argument --unique-tokens: must be a finite number > 0, got -1"),
    (["--compute", "1e22", "0", "--unique-tokens", "1e9"], "argument --compute: must be a finite number > 0, got 0"),
    (["--compute", "1e22", "--unique-tokens", "1e9", "--r-star-d", "nan"], "argument --r-star-d: must be a finite"),
    (["--compute", "1e22", "--unique-tokens", "1e9", "--out", "FILE"], "exists and is not a directory"),
    (["--compute", "1e22", "--unique-tokens", "lots"], "argument --unique-tokens: invalid number: 'lots'"),
    (["--compute", "1e22"], "the data-constrained law needs --unique-tokens"),
    (["--compute", "1e22", "--unique-tokens", "1e9", "--published", "gpt4"], "no published parameter set 'gpt4'"),
    (["--compute", "1e22", "--unique-tokens", "1e9", "--law", "chinchilla"], "--unique-tokens applies to a law of (N, D"),
])
def test_allocate_rejects_bad_input(argv, message, tmp_path):
    (tmp_path / "file").write_text("x")
    argv = [str(tmp_path / "file") if a == "FILE" else a for a in argv]
    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            status = main(["allocate", *argv])
        except SystemExit as exit_:
            status = exit_.code
    assert status == 2
    assert message in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1


def _repeated_data_runs(p: DataConstrainedParams) -> pd.DataFrame:
    """Runs of 5 sizes on 3 unique-token budgets at 1/2 to 64 epochs, losses from the law."""
    n, u, epochs = (a.ravel() for a in np.meshgrid(np.geomspace(1e8, 1e10, 5), [1e9, 1e10, 1e11],
                                                   2.0 ** np.arange(-1, 7), indexing="ij"))
    with jax.enable_x64(True):
        loss = np.asarray(LAW.evaluate(p, n, u * epochs, u))
    return pd.DataFrame({"params": n, "tokens": u * epochs, "unique_tokens": u, "loss": loss})


def test_fit_recovers_the_law_from_runs_that_repeat_their_data(tmp_path):
    truth = MUENNIGHOFF._replace(alpha=0.34, beta=0.28)
    path = tmp_path / "repeated.csv"
    _repeated_data_runs(truth).to_csv(path, index=False)
    fit = fit_approach3(read_runs_table(path), law=LAW)
    np.testing.assert_allclose(np.array(fit.params), np.array(truth), rtol=1e-3)
    out, _ = _cli(["fit", str(path), "--law", "data-constrained", "--json"])
    assert json.loads(out)["R_D_star"] == pytest.approx(truth.R_D_star, rel=1e-3)
