"""The per-group optimum rule and the power laws through the optima (jaxscale.hyperparameters.per_group),
on synthetic grids whose optima are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jaxscale.fitting.bootstrap import within_group_counts
from jaxscale.hyperparameters import per_group as hp
from jaxscale.laws import chinchilla, steplaw
from jaxscale.tables.table import read_runs_table

LRS = 2.0 ** np.arange(-12.0, -5.4, 0.5)  # a sqrt(2) grid, as Step Law's
BATCHES = np.array([32, 64, 96, 128, 192, 256, 352, 512, 736, 1024, 2048.0])
SIZES, TOKENS = (2e8, 4e8, 1e9), (4e9, 2e10, 1e11)
TRUE_LR = steplaw.StepLawLRParams(A=1.2, alpha=0.65, beta=0.32)
TRUE_BATCH = steplaw.StepLawBatchParams(A=0.4, beta=0.6)


def _grid(noise: float = 0.0, seed: int = 0, sizes=SIZES, tokens=TOKENS, lrs=LRS) -> pd.DataFrame:
    """Runs whose log smoothed loss is a quadratic bowl in (log eta, log B) about the true optima
    (B in sequences of 2,048 tokens), with relative noise ``noise``."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        for d in tokens:
            lr_opt = TRUE_LR.A * n ** -TRUE_LR.alpha * d ** TRUE_LR.beta
            batch_opt = TRUE_BATCH.A * d ** TRUE_BATCH.beta / 2048
            for lr in lrs:
                for bs in BATCHES:
                    u, v = np.log(lr / lr_opt), np.log(bs / batch_opt)
                    log_l = np.log(2.5) + 0.01 * u * u + 0.002 * u * v + 0.004 * v * v + noise * rng.normal()
                    rows.append({"N": n, "D": d, "lr": lr, "bs": bs, "loss": 2.6, "smooth loss": np.exp(log_l)})
    return pd.DataFrame(rows)


def _runs(frame: pd.DataFrame) -> hp.GridRuns:
    return hp.grid_runs(read_runs_table(frame), sequence_length=2048)


def test_the_rule_finds_each_groups_optimum_of_a_quadratic_bowl_and_the_power_laws_through_them():
    runs = _runs(_grid())
    assert runs.loss_column == "smooth loss"
    optima = hp.group_optima(runs)
    table = runs.groups
    want_lr = np.log(TRUE_LR.A * table["N"] ** -TRUE_LR.alpha * table["D"] ** TRUE_LR.beta)
    want_batch = np.log(TRUE_BATCH.A * table["D"] ** TRUE_BATCH.beta)
    assert optima.lr_defined.all() and optima.batch_defined.all()
    np.testing.assert_allclose(optima.log_lr, want_lr, atol=1e-9)
    np.testing.assert_allclose(optima.log_batch, want_batch, atol=1e-9)
    fit = hp.fit_hyperparameters(runs, resamples=0)
    np.testing.assert_allclose(np.array(fit.lr.params), np.array(TRUE_LR), rtol=1e-8)
    np.testing.assert_allclose(np.array(fit.batch.params), np.array(TRUE_BATCH), rtol=1e-8)
    assert fit.lr.interval("alpha") is None and fit.to_dict()["laws"]["steplaw-lr"]["params"]["alpha"]["lower"] is None


def test_an_optimum_past_the_grids_edge_is_undefined_and_left_out():
    frame = _grid()
    # the smallest model on the most data wants the highest rate: cut its grid just below it
    n, d = SIZES[0], TOKENS[-1]
    lr_opt = TRUE_LR.A * n ** -TRUE_LR.alpha * d ** TRUE_LR.beta
    frame = frame[~((frame["N"] == n) & (frame["D"] == d) & (frame["lr"] > lr_opt / 1.2))]
    runs = _runs(frame)
    optima = hp.group_optima(runs)
    edge = int(np.flatnonzero((runs.groups["N"] == n).to_numpy() & (runs.groups["D"] == d).to_numpy())[0])
    assert not optima.lr_defined[edge] and np.isnan(optima.log_lr[edge])
    assert optima.batch_defined[edge] and optima.lr_defined.sum() == len(SIZES) * len(TOKENS) - 1
    fit = hp.fit_hyperparameters(runs, resamples=0)
    assert fit.lr.groups == 8 and fit.batch.groups == 9
    np.testing.assert_allclose(np.array(fit.lr.params), np.array(TRUE_LR), rtol=1e-8)
    assert fit.to_dict()["groups"][edge]["lr_opt"] is None


def test_bootstrap_intervals_over_runs_within_groups_cover_the_truth_of_a_noisy_grid():
    runs = _runs(_grid(noise=2e-4, seed=3))
    fit = hp.fit_hyperparameters(runs, resamples=200, seed=1)
    assert fit.lr.resamples_used >= 190
    for law_fit, truth in ((fit.lr, TRUE_LR), (fit.batch, TRUE_BATCH)):
        for name in truth._fields[1:]:
            lo, hi = law_fit.interval(name)
            assert lo < getattr(truth, name) < hi, (name, lo, hi)
            assert hi - lo < 0.1
    summary = fit.summary()
    assert list(summary.columns[:5]) == ["law", "quantity", "estimate", "lower", "upper"]
    assert summary.set_index("quantity").loc["alpha", "published"] == steplaw.PUBLISHED_LR.alpha


def test_resampling_keeps_each_groups_size():
    group = np.array([0, 0, 0, 1, 1, 2])
    counts = within_group_counts(group, 50, seed=0)
    np.testing.assert_array_equal(np.stack([counts[:, group == g].sum(1) for g in range(3)], 1),
                                  np.tile([3, 2, 1], (50, 1)))


def test_grid_columns_are_found_or_named_with_the_bad_row():
    frame = _grid().rename(columns={"lr": "peak_lr", "bs": "batch_size"})
    assert hp.grid_runs(read_runs_table(frame)).batch[0] == frame["batch_size"].iloc[0]
    frame.loc[4, "peak_lr"] = -1.0
    with pytest.raises(ValueError, match=r"row 5, column 'peak_lr': must be a number > 0"):
        hp.grid_runs(read_runs_table(frame))
    with pytest.raises(ValueError, match="no column 'eta'"):
        hp.grid_runs(read_runs_table(frame), lr_col="eta")


def test_only_a_law_linear_in_its_vector_is_fitted_by_least_squares_in_logs():
    with pytest.raises(ValueError, match="not linear in its vector"):
        hp.fit_log_linear(chinchilla.LAW, [np.array([1e8, 1e9]), np.array([1e10, 1e11])], np.array([3.0, 2.8]))
