"""A sensitivity study from start to finish: which parameters, which runs and which of the
reconciliation's own choices drive the conclusions drawn from Epoch AI's Chinchilla runs.

Each step below is one cell of a notebook; ``jaxscale sensitivity RUNS --drop-highest 5`` runs
the same study in one command (:func:`jaxscale.sensitivities.study.fit_study`).

1. Fit the Chinchilla law by Approach 3 (Huber loss on log loss, Epoch's 4500 starts).
2. Name the quantities to study: N*(1e24), D*(1e24), the loss of a Chinchilla-sized run, the
   allocation exponents a and b, and Pearce & Song's reconciled exponent.
3. Elasticities d log q / d log theta at the fit, by forward-mode autodiff through the
   implicit compute-optimal solver (the tornado figure).
4. Their uncertainty: the delta method with the full covariance of the parameters (bootstrap
   refits, or ``--posterior laplace|nuts``) beside the spread over the draws, and what
   ignoring the correlations would have said.
5. Which runs drive the fit: each run's influence by implicit differentiation of the fit's
   stationarity condition, checked against the 240 exact leave-one-out refits.
6. Would Pearce & Song's 0.78 survive other choices? The reconciled exponent's derivatives with
   respect to the law, the embedding relation (gamma, delta) and Kaplan's size window.

Run: python examples/sensitivity_study.py [--fast] [--posterior laplace|nuts] [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.fitting.bootstrap import bootstrap
from jaxscale.laws import pearce_song
from jaxscale.plots import sensitivity as plots
from jaxscale.reconciliation.pipeline import EmbeddingFit
from jaxscale.reconciliation.choice_sensitivity import KNOBS, reconciliation_sensitivity
from jaxscale.tables.table import drop_highest_loss, read_runs_table
from jaxscale.sensitivities import influence
from jaxscale.sensitivities.delta_method import delta_method, log_covariance
from jaxscale.sensitivities.elasticity import values_and_elasticities
from jaxscale.sensitivities.quantities import evaluate_draws, law_quantities, stacked

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "chinchilla_svg_extracted_data.csv"
EMBEDDING = EmbeddingFit(pearce_song.GAMMA_PAPER, pearce_song.DELTA_KAPLAN)  # Table A9's gamma, delta = 1/3


def parameter_draws(fit, source: str, size: int):
    """Draws of the law's parameters: bootstrap refits, or a Laplace / NUTS posterior."""
    if source == "bootstrap":
        boot = bootstrap(fit, size)
        return type(boot.params)(*(v[boot.converged] for v in boot.params))
    from jaxscale.inference import refit
    from jaxscale.inference.sample import NutsConfig

    if source == "laplace":
        return refit.approximate_posterior(fit.runs, draws=size).params
    return refit.sample_posterior(fit.runs, config=NutsConfig(progress_bar=False)).params


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="200 draws instead of 1000")
    parser.add_argument("--posterior", choices=("bootstrap", "laplace", "nuts"), default="bootstrap",
                        help="where the parameter covariance comes from (default: %(default)s)")
    parser.add_argument("--data", type=Path, default=DATA, help="runs CSV (default: Epoch's extraction)")
    parser.add_argument("--out", type=Path, default=None, help="directory for the three figures")
    args = parser.parse_args(argv)

    # 1. The fit.
    fit = fit_approach3(drop_highest_loss(read_runs_table(args.data), 5))
    print("fit: " + ", ".join(f"{k}={v:.4g}" for k, v in fit.params._asdict().items()))

    # 2-3. Quantities and their elasticities at the fit.
    quantities = law_quantities(fit.law, budgets=(1e24,), planned=((7e10, 1.4e12),), embedding=EMBEDDING)
    names = list(quantities)
    values, e = values_and_elasticities(stacked(quantities), fit.params)
    print(f"\nelasticities d log q / d log theta\n{'quantity':<20} {'value':>10} "
          + " ".join(f"{p:>7}" for p in fit.params._fields))
    for j, q in enumerate(names):
        print(f"{q:<20} {values[j]:>10.4g} " + " ".join(f"{x:>+7.3f}" for x in e[j]))

    # 4. Uncertainty: first order with the full covariance, against the draws themselves.
    draws = parameter_draws(fit, args.posterior, 200 if args.fast else 1000)
    spread = delta_method(e, log_covariance(draws), np.log(evaluate_draws(quantities, draws)))
    print(f"\nSD of log q ({args.posterior}): delta method, ignoring correlations, over the draws")
    for j, q in enumerate(names):
        print(f"{q:<20} {spread.sd_log[j]:8.4f} {spread.sd_log_independent[j]:8.4f} {spread.sd_log_draws[j]:8.4f}")

    # 5. Which runs drive the fit, and does the first order match the leave-one-out refits?
    first = influence.influence(fit)
    linear = influence.linear_changes(influence.vector_gradient(e, fit.params, fit.law.log_scale), first.removal)
    jack = influence.jackknife(fit)
    log_q = np.log(evaluate_draws(quantities, fit.law.from_vector(np.vstack([jack.vectors, jack.base]))))
    exact = log_q[:-1] - log_q[-1]
    correlations = {q: influence.agreement(linear[:, j], exact[:, j]).correlation for j, q in enumerate(names)}
    print(f"\ninfluence against {jack.converged.sum()} leave-one-out refits ({first.quadratic.sum()} runs "
          f"in the Huber quadratic region):")
    n, d = fit.inputs
    for j, q in enumerate(names):
        top = np.argsort(-np.abs(linear[:, j]))[:3]
        runs = ", ".join(f"#{i} (N={n[i]:.2g}, D={d[i]:.2g})" for i in top)
        print(f"{q:<20} correlation {correlations[q]:.4f}; most influential: {runs}")

    # 6. The reconciliation's own choices.
    rec = reconciliation_sensitivity(fit.params, EMBEDDING.gamma, EMBEDDING.delta)
    print(f"\nreconciled exponent {rec.exponent:.4f} (Step-4 frontier {rec.frontier_exponent:.4f}); "
          f"factor on one knob that reaches {rec.target} to first order, and the exponent there:")
    for k, factor, there in zip(KNOBS, rec.factor, rec.exponent_at_factor):
        if np.isfinite(factor):
            print(f"  {k:<6} x{factor:.3g} -> {there:.4f}")

    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        figures = {
            "tornado": plots.tornado_figure({q: dict(zip(fit.params._fields, e[j])) for j, q in enumerate(names)}),
            "influence": plots.influence_figure(n, d, dict(zip(names, linear.T))),
            "jackknife": plots.jackknife_figure(dict(zip(names, linear.T)), dict(zip(names, exact.T)), correlations),
        }
        for name, fig in figures.items():
            fig.savefig(args.out / f"{name}.png", dpi=110)
    return {"values": dict(zip(names, values)), "elasticities": e, "delta_method": spread,
            "correlations": correlations, "reconciliation": rec}


if __name__ == "__main__":
    main()
