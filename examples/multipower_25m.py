"""The multi-power law against Tissue et al.'s on the 25M model's curves of Luo et al. (2025).

The split and protocol are the paper's: both laws are fitted to every checkpoint of
constant_24000, cosine_24000 and wsdcon_9 and predict every checkpoint of the other six runs. Both
are fitted under one rule, :mod:`jaxscale.curves.held_out_schedules` (declared there, and
committed, before its first measurement on the six predicted curves): each choice the fitted curves
leave open (the multi-power law's penalty on the loss drop's shape, or its posterior-predictive
mean instead, :mod:`jaxscale.inference.multipower_posterior`; the annealing law's decay factor, or
its posterior-predictive mean at lambda 0.999, :mod:`jaxscale.inference.annealing_posterior`) is
made by holding one of the three fitted runs out at a time, and the spread of those held-out errors
gives a 90% predictive interval at every predicted checkpoint.

Rates: the headline uses each run's schedule at every step from step 0, the 2,160 warmup steps
included, built from the data folder's README (linear warmup to 3e-4; cosine to 3e-5; WSD's
geometric and WSDLD's linear decay from step 20,000 to 3e-5; the two-stage runs' drop at step
8,000) and checked against the rate each CSV logs; the logged rates interpolated (``jaxscale curve
--lr-source recorded``) are reported beside it. The errors are |Lhat / L - 1|: the mean of the
per-run means (the paper's PredE) and the mean over every predicted checkpoint. Also: the
objective's plain minimum and the authors' own parameters under the same evaluation; with
``--profile``, the objective's profile in beta (the law refitted with beta held at each of
:data:`PROFILE`, the authors' 0.583 among them); and the schedule the law predicts to end lowest.

``--tissue-only``: Tissue et al.'s law under the rule alone, with both sources of rates.

Run: python examples/multipower_25m.py [--profile] [--tissue-only]   (tens of minutes on a CPU: the rule fits each
law 16 to 19 times, and each law's posterior is sampled three times per source of rates, four
where the rule chooses it: 41 min on two shared cores at load average 2-4; ../shared/data beside
the clone)
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jaxscale.curves import held_out_schedules, multipower_fit
from jaxscale.inference import annealing_posterior, curve_posterior, multipower_posterior
from jaxscale.laws import multipower
from jaxscale.optimum.best_schedule import optimal_schedule
from jaxscale.tables.learning_rates import run_learning_rates
from jaxscale.tables.table import read_runs_table

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "multipower_25m"
PEAK, WARMUP, FLOOR, TWO_STAGE_AT, DECAY_FROM = 3e-4, 2160, 3e-5, 8000, 20_000
FITTED = ["constant_24000", "cosine_24000", "wsdcon_9"]
PREDICTED = ["constant_72000", "cosine_72000", "wsd_20000_24000", "wsdld_20000_24000", "wsdcon_3", "wsdcon_18"]
#: Values of beta the law is refitted at: a profile from the fit's own beta to past the authors'.
PROFILE = (0.15, 0.25, 0.4, 0.583, 0.8)


def schedule(name: str, length: int) -> np.ndarray:
    """The rate of every update 0..length-1 of run ``name`` (the paper's definitions)."""
    i = np.arange(length, dtype=np.float64)
    kind, *rest = name.split("_")
    if kind == "constant":
        rates = np.full(length, PEAK)
    elif kind == "cosine":
        total = int(rest[0])
        rates = FLOOR + 0.5 * (PEAK - FLOOR) * (1 + np.cos(np.pi * np.clip(i - WARMUP, 0, None) / (total - WARMUP)))
    elif kind in ("wsd", "wsdld"):
        p = np.clip((i - DECAY_FROM) / (int(rest[1]) - DECAY_FROM), 0, 1)
        rates = PEAK ** (1 - p) * FLOOR ** p if kind == "wsd" else PEAK * (1 - p) + FLOOR * p
    else:  # wsdcon_K: 3e-4 to step 8,000, then K x 1e-5
        rates = np.where(i < TWO_STAGE_AT, PEAK, int(rest[0]) * 1e-5)
    return np.where(i < WARMUP, np.minimum(i / (WARMUP - 1), 1.0) * PEAK, rates)


def curves() -> tuple:
    """The nine runs as one runs table, and each run's rates eta_1..eta_T (eta_s: the update after step s - 1)."""
    frames, lrs = [], {}
    for path in sorted(DATA.glob("*.csv")):
        frame = pd.read_csv(path)
        if path.stem.endswith("_24000"):
            frame = frame[frame["step"] < 24_000]  # the last logged point is the schedule's end, as the paper drops it
        rates = schedule(path.stem, int(frame["step"].max()) + 1)
        logged = rates[frame["step"].to_numpy()]
        assert np.allclose(logged, frame["lr"], rtol=1e-6), path.stem  # the CSV's own rate at each step
        lrs[path.stem] = rates
        frames.append(frame.assign(run_id=path.stem, n_total=25e6, tokens=frame["step"] * 1.0, learning_rate=frame["lr"]))
    table = pd.concat(frames, ignore_index=True)[["run_id", "step", "n_total", "tokens", "loss", "learning_rate"]]
    return read_runs_table(table, sizes_vary=False), lrs


def recorded(table) -> dict:
    """Each run's rates interpolated from the rate its CSV logs (``jaxscale curve --lr-source recorded``)."""
    return run_learning_rates(table, source="recorded")


def errors(predictions: pd.DataFrame) -> tuple[float, float]:
    """Mean |relative error| over every checkpoint, and the mean of the per-run means (PredE)."""
    error = (predictions["predicted"] / predictions["loss"] - 1).abs()
    return float(error.mean()), float(error.groupby(predictions["run_id"]).mean().mean())


def _label(candidate: float | str) -> str:
    return candidate if isinstance(candidate, str) else f"{candidate:g}"


def show(law: str, judged: pd.DataFrame, rule: dict) -> tuple[float, float, float]:
    """Print a law's predictions under the rule: the choice, each run's error and coverage, and
    the PredE, every-point error and coverage; return the last three."""
    every, per_run = errors(judged)
    inside = (judged["predicted_lo"] <= judged["loss"]) & (judged["loss"] <= judged["predicted_hi"])
    runs = ", ".join(rule["held_out_runs"])
    scores = "; ".join(f"{_label(s['candidate'])}: {s['score']:.3%} ("
                       + ", ".join("undefined" if v is None else f"{v:.3%}" for v in s["per_run"]) + ")"
                       for s in rule["scores"])
    print(f"  {law}: chosen {_label(rule['chosen'])} (held-out PredE by candidate, then by the run held out, "
          f"{runs}: {scores})")
    for run, rows in judged.groupby("run_id", sort=False):
        print(f"    {run:<18} mean error {errors(rows)[0]:.3%}, in the 90% interval {inside[rows.index].mean():.0%}")
    print(f"    PredE (per-run mean) {per_run:.3%}, every point {every:.3%}; 90% intervals "
          f"(+/- {rule['interval_half_width']:.3%}) cover {inside.mean():.1%} of {len(judged)} points")
    return per_run, every, float(inside.mean())


def sampler_report(judged: pd.DataFrame, history: list) -> None:
    """Print the coverage of a posterior candidate's own intervals (where the rule chose it) and
    the diagnostics of every posterior it sampled."""
    if "posterior_lo" in judged:
        print(f"    the posterior's own 90% predictive intervals cover "
              f"{curve_posterior.posterior_coverage(judged):.1%} of the predicted points")
    for sampled in history:
        print(f"    NUTS given {', '.join(sampled['fitted_runs'])}: {sampled['divergences']} divergences, "
              f"largest R-hat {sampled['max_r_hat']:.3f}, smallest bulk ESS {sampled['min_ess_bulk']:.0f}, "
              f"{sampled['seconds']:.0f} s")


def multipower_under_rule(table, rates: dict) -> multipower_fit.MultiPowerFit:
    """The multi-power law under the rule, its posterior mean a candidate; printed, and returned."""
    posterior = multipower_posterior.PosteriorMean()
    fit = held_out_schedules.fit_multipower_held_out(table, rates, FITTED, PREDICTED, predictors=(posterior,))
    print(f"  multi-power law under the rule: {fit.params}")
    judged = fit.predictions[~fit.predictions["fitted"]]
    show("multi-power law, penalty lambda or posterior mean", judged, fit.rule)
    sampler_report(judged, posterior.history)
    plain = multipower_fit.fit_multipower(table, rates, FITTED, PREDICTED)
    every, per_run = errors(plain.predictions[~plain.predictions["fitted"]])
    print(f"  the objective's minimum (no rule): PredE {per_run:.3%}, every point {every:.3%}")
    return fit


def tissue_under_rule(table, rates: dict) -> None:
    """Tissue et al.'s law under the rule, its posterior mean at lambda 0.999 a candidate; printed."""
    posterior = annealing_posterior.AnnealingPosteriorMean()
    tissue = held_out_schedules.fit_annealing_held_out(table, rates, FITTED, PREDICTED, predictors=(posterior,))
    print(f"  Tissue et al.'s law under the rule: {tissue.fit.fit.params}")
    show("Tissue et al.'s law, decay factor or posterior mean", tissue.fit.predictions, tissue.choice.to_dict())
    sampler_report(tissue.fit.predictions, posterior.history)


def main(profile: bool = False, tissue_only: bool = False) -> None:
    table, lrs = curves()
    print("fit rule: jaxscale.curves.held_out_schedules (one fitted schedule held out at a time)")
    for source, rates in (("schedule", lrs), ("recorded", recorded(table))):
        print(f"rates from the {source}:")
        if not tissue_only:
            fit = multipower_under_rule(table, rates)
        tissue_under_rule(table, rates)
    if tissue_only:
        return
    with jax.enable_x64(True):
        published = pd.concat([pd.DataFrame({"run_id": run, "loss": d.loss, "predicted": np.asarray(
            multipower.loss(multipower.PUBLISHED_25M, jax.tree.map(jnp.asarray, d.curve)))})
            for run, d in zip(PREDICTED, multipower_fit.curve_data(table, lrs, PREDICTED))])
        objective = float(multipower_fit.objective(
            multipower.to_vector(multipower.PUBLISHED_25M),
            jax.tree.map(jnp.asarray, multipower_fit.curve_data(table, lrs, FITTED))))
    authors = errors(published)
    print(f"the authors' parameters (schedule rates): PredE {authors[1]:.3%}, every point {authors[0]:.3%}, "
          f"objective {objective:.6g}")
    if profile:
        print("profile in beta (the others refitted): beta, objective, mean error, per-run mean, cosine_72000's mean")
        for beta in PROFILE:
            held = multipower_fit.fit_multipower(table, lrs, FITTED, PREDICTED, fixed={"beta": beta})
            judged = held.predictions[~held.predictions["fitted"]]
            every, per_run = errors(judged)
            longest = errors(judged[judged["run_id"] == "cosine_72000"])[0]
            print(f"  {beta:.3f}  {held.objective:.6g}  {every:.3%}  {per_run:.3%}  {longest:.3%}")
    best = optimal_schedule(fit.params, 24_000, PEAK, WARMUP)
    print(f"optimised schedule under the recorded-rate fit: final loss {best.loss:.4f}; "
          + ", ".join(f"{name} {loss:.4f} (+{best.gains()[name]:.4f})" for name, (_, loss) in best.baselines.items()))


if __name__ == "__main__":
    main(profile="--profile" in sys.argv[1:], tissue_only="--tissue-only" in sys.argv[1:])
