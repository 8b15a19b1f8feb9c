"""Bayesian refit of the Chinchilla runs from Python: posterior, derived quantities, reconciliation.

Refits Hoffmann et al.'s (2022) parametric law to Epoch AI's 240 extracted runs (the 5
highest-loss dropped, as Besiroglu et al. 2024 do) with NUTS, then carries the posterior
through to the numbers people argue about: the allocation exponent a = beta/(alpha+beta),
N*(C) at a large budget, the loss of a planned run, and Pearce & Song's reconciled
(Kaplan-basis) exponent. A Laplace fit on 80% of the runs checks calibration on the other 20%.

Run: python examples/bayes_refit.py [--fast] [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from jaxscale.core.intervals import interval
from jaxscale.inference import diagnostics, refit
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws.chinchilla import EPOCH
from jaxscale.optimum.allocation import loss_draws, optimal_allocation
from jaxscale.plots import bayes as plots
from jaxscale.tables.table import drop_highest_loss, read_runs_table

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "chinchilla_svg_extracted_data.csv"
PLANNED = (70e9, 1.4e12)  # Chinchilla itself: 70B parameters, 1.4T tokens


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="2 short chains, few reconciliation draws")
    parser.add_argument("--data", type=Path, default=DATA, help="runs CSV (default: Epoch's extraction)")
    parser.add_argument("--out", type=Path, default=Path("bayes_refit_output"), help="output directory")
    args = parser.parse_args(argv)

    runs = drop_highest_loss(read_runs_table(args.data), 5)
    config = (NutsConfig(chains=2, warmup=150, samples=150, progress_bar=False) if args.fast
              else NutsConfig())
    fit = refit.sample_posterior(runs, config=config)
    summary = refit.summarize(fit)
    print(f"NUTS: {config.chains} chains x {config.samples} draws in {fit.seconds:.1f} s, "
          f"{fit.diagnostics.divergences} divergences, max R-hat {max(fit.diagnostics.r_hat.values()):.3f}")
    print(f"\n{'':6} {'mean':>9} {'sd':>8}   95% HDI              Epoch (2024)  |mean-Epoch|/sd")
    for name in ("A", "B", "E", "alpha", "beta", "a", "b"):
        s = summary[name]
        epoch = getattr(EPOCH, name, None)
        gap = "" if epoch is None else f"{epoch:12.4g}  {abs(s['mean'] - epoch) / s['sd']:8.2f}"
        print(f"{name:6} {s['mean']:9.4g} {s['sd']:8.3g}   [{s['hdi95'][0]:.4g}, {s['hdi95'][1]:.4g}]".ljust(52) + gap)

    budgets = np.logspace(18, 27, 37)
    bands = optimal_allocation(fit.law, fit.params, budgets)
    at_1e24 = bands.n[:, np.argmin(np.abs(budgets - 1e24))]
    planned = loss_draws(fit.law, fit.params, *PLANNED)
    (n_lo, n_hi), (l_lo, l_hi) = interval(at_1e24), interval(planned)
    print(f"\nN*(1e24 FLOP): median {np.median(at_1e24):.3g}, 95% [{n_lo:.3g}, {n_hi:.3g}] parameters")
    print(f"loss of a 70B model on 1.4T tokens: {np.median(planned):.4f} [{l_lo:.4f}, {l_hi:.4f}]")

    reconciled = refit.reconciled_exponent_draws(fit.parameter_draws, max_draws=100 if args.fast else None)
    kaplan_basis = refit.median_and_hdi(reconciled.exponents.nonembedding)
    total_basis = refit.median_and_hdi(reconciled.exponents.total)
    print(f"\nreconciled exponent N*_\\E ∝ C_\\E^g: median {kaplan_basis['median']:.4f}, 95% HDI "
          f"[{kaplan_basis['hdi95'][0]:.4f}, {kaplan_basis['hdi95'][1]:.4f}] (paper: 0.78 Epoch, 0.74 Chinchilla; Kaplan 0.73)")
    print(f"total-basis exponent N*_T ∝ C_T^a:   median {total_basis['median']:.4f}, 95% HDI "
          f"[{total_basis['hdi95'][0]:.4f}, {total_basis['hdi95'][1]:.4f}]")

    fit_rows, held_rows = diagnostics.holdout_split(len(runs), 0.2, seed=0)
    # The mode search starts from the full-data Approach-3 optimum (no second multistart fit).
    quick = refit.approximate_posterior(runs.select(fit_rows), start=(fit.init, float(np.median(fit.draws["sigma"]))))
    held = refit.predictive_checks(quick, runs.select(held_rows))
    print(f"\nLaplace fit on {len(fit_rows)} runs: its 95% predictive interval covers "
          f"{held['coverage']:.1%} of the {len(held_rows)} held-out runs")

    args.out.mkdir(parents=True, exist_ok=True)
    diagnostics.save_netcdf(fit.idata, args.out / "posterior.nc")
    for name, fig in (("corner", plots.corner_figure(fit.draws)),
                      ("optimal_bands", plots.optimal_bands_figure(bands)),
                      ("reconciled_exponent", plots.reconciled_exponent_figure(reconciled.exponents))):
        fig.savefig(args.out / f"{name}.png", dpi=110)
    print(f"\nwrote posterior.nc and figures to {args.out}/")
    return {"summary": summary, "reconciled_exponent": kaplan_basis, "total_exponent": total_basis,
            "held_out_coverage": held["coverage"], "diagnostics": fit.diagnostics}


if __name__ == "__main__":
    main()
