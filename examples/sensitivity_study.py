"""Which parameter of the Chinchilla law drives a prediction? An autodiff sensitivity study.

Fits the posterior of L(N, D) = E + A/N^alpha + B/D^beta to Epoch AI's Chinchilla runs, then,
at the posterior mean, differentiates two predictions with respect to every law parameter:

- N*(1e24 FLOP), the compute-optimal model size at a GPT-4-class budget (Hoffmann Eq. 4);
- the reconciled exponent of Pearce & Song (the slope of log N*_\\E on log C_\\E over Kaplan's
  budget window), computed from the continuous optimum of Eq. 15 through the implicit-
  differentiation solver, since the 20-model frontier version is piecewise constant in the
  parameters.

It prints elasticities d log q / d log theta (percent change of q per percent change of theta)
and, multiplying each by the posterior SD of log theta, how far one posterior SD of that
parameter alone moves the prediction: the first-order attribution of the prediction's
uncertainty (correlations between parameters are ignored here; the full posterior of each
prediction, which includes them, is printed beside it).

Run: python examples/sensitivity_study.py [--fast]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from jaxscale.allocation import band, optimal_allocation
from jaxscale.inference import refit, sensitivity
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws import chinchilla
from jaxscale.runs import drop_highest_loss, load_runs
from jaxscale.simulate import continuous_optimum_exponent

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "chinchilla_svg_extracted_data.csv"
BUDGET = 1e24


def n_opt_at_budget(p: chinchilla.ChinchillaParams):
    return chinchilla.compute_optimal_n(BUDGET, p)


QUANTITIES = {
    "N*(1e24 FLOP)": n_opt_at_budget,
    "reconciled exponent": continuous_optimum_exponent,
}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="Laplace approximation instead of NUTS")
    parser.add_argument("--data", type=Path, default=DATA, help="runs CSV (default: Epoch's extraction)")
    args = parser.parse_args(argv)

    runs = drop_highest_loss(load_runs(args.data), 5)
    fit = (refit.approximate_posterior(runs, draws=2000) if args.fast
           else refit.sample_posterior(runs, config=NutsConfig(progress_bar=False)))
    mean = sensitivity.posterior_mean(fit.params)
    sd_log = {k: float(np.std(np.log(v))) for k, v in fit.params._asdict().items()}
    print(f"posterior ({fit.method}) mean: " + ", ".join(f"{k}={v:.4g}" for k, v in mean._asdict().items()))

    table = sensitivity.elasticity_table(QUANTITIES, mean)
    for name, e in table.items():
        value = float(QUANTITIES[name](mean))
        print(f"\n{name} at the posterior mean: {value:.4g}")
        print(f"  {'param':>6} {'elasticity':>11} {'1-SD move':>10}")
        for param, elasticity in e.items():
            print(f"  {param:>6} {elasticity:+11.4f} {elasticity * sd_log[param]:+10.2%}")

    n_star = band(optimal_allocation(fit.law, fit.params, [BUDGET]).n[:, 0])
    print(f"\nposterior of N*(1e24): median {n_star.median:.3g}, 95% [{n_star.lo:.3g}, {n_star.hi:.3g}] "
          f"(spread {np.log(n_star.hi / n_star.lo) / 3.92:.1%} per SD in log)")
    return {"posterior_mean": mean._asdict(), "elasticities": table, "n_opt_band": n_star._asdict()}


if __name__ == "__main__":
    main()
