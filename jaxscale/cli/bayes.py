"""``jaxscale bayes``: Bayesian refit of a runs table with NumPyro (posterior over the law)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from jaxscale.cli.fit import add_table_arguments, chosen_law, load_table

#: Default budgets (FLOP) of the N*(C) and loss bands.
BAND_BUDGETS = (1e18, 1e27)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bayes",
        help="Bayesian refit of a scaling law (NUTS) with posterior intervals",
        description="Sample the posterior of L(N, D) given a runs table (same columns and checks "
        "as `jaxscale fit`): Student-t likelihood on log loss, weakly informative priors, NUTS "
        "from the Approach-3 optimum; convergence diagnostics; posterior "
        "of a = beta/(alpha+beta) and of Pearce & Song's reconciled (Kaplan-basis) exponent.",
    )
    add_table_arguments(p)
    p.add_argument("--chains", type=int, default=4, help="NUTS chains (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=1000, help="warmup steps per chain (default: %(default)s)")
    p.add_argument("--samples", type=int, default=1000, help="draws per chain (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("--target-accept", type=float, default=0.8, help="NUTS target acceptance (default: %(default)s)")
    p.add_argument("--laplace", action="store_true",
                   help="fast path: Laplace approximation at the posterior mode instead of NUTS")
    p.add_argument("--gamma-uncertainty", action="store_true",
                   help="draw (gamma, delta) of Eq. 7 from a bootstrap of the Table A9 fit instead of "
                   "fixing the paper's gamma = 47491, delta = 1/3")
    p.add_argument("--compare", default=None, metavar="LAWS",
                   help="comma-separated laws (e.g. chinchilla,kaplan,kaplan-irreducible): sample each on the "
                   "same runs and rank them by PSIS-LOO (ArviZ compare), with Pareto-k diagnostics and a "
                   "posterior predictive figure per law in --out")
    p.add_argument("--group-by", default=None, metavar="COL",
                   help="the column naming each run's dataset (e.g. source): fit one law to every dataset at once, "
                   "the coordinates of --share common to all, the rest (and the noise) per dataset, and report "
                   "the posterior of their differences between datasets")
    p.add_argument("--share", default=None, metavar="COORDS",
                   help="with --group-by: comma-separated coordinates of the law's vector shared by every dataset, "
                   "e.g. alpha,beta or log_A,log_B,log_E (default: the law's exponents)")
    p.add_argument("--compare-sharing", action="store_true",
                   help="with --group-by: also sample the model that shares nothing (each dataset its own law) and "
                   "rank the two by PSIS-LOO: do the datasets share the --share coordinates?")
    p.add_argument("--table-embedding", action="store_true",
                   help="compute the reconciled exponent from the table's own gamma, delta (fitted to its model "
                   "sizes, which needs both parameter bases) over its own size range, instead of Table A9's")
    p.add_argument("--holdout-threshold", type=float, default=None, metavar="X",
                   help="sample on runs with N (or C, see --holdout-by) below X only and report the errors and "
                   "the 50/80/90%% predictive-interval coverage on the rest")
    p.add_argument("--holdout-by", choices=("n", "c"), default="n", help="holdout split variable (default: %(default)s)")
    p.add_argument("--out", type=Path, default=None,
                   help="directory for posterior.nc (ArviZ InferenceData) and the figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(run=run, prepare=one_cpu_device_per_chain)


def host_device_flags(xla_flags: str, chains: int) -> str:
    """``XLA_FLAGS`` that give the CPU platform one device per chain, so that NumPyro runs the
    chains in parallel (``chain_method="auto"``, :mod:`jaxscale.inference.sample`); flags that
    already set a device count are kept as they are."""
    if "xla_force_host_platform_device_count" in xla_flags:
        return xla_flags
    return f"{xla_flags} --xla_force_host_platform_device_count={chains}".strip()


def one_cpu_device_per_chain(args: argparse.Namespace) -> None:
    """Before JAX starts its backend: ask for one CPU device per chain (no effect on GPU/TPU).
    Once a backend is running (``main`` called from Python) the flags would change nothing in
    this process and leak into its children, so they are left alone."""
    from jax._src import xla_bridge  # JAX exposes no public test of a started backend

    if not xla_bridge.backends_are_initialized():
        os.environ["XLA_FLAGS"] = host_device_flags(os.environ.get("XLA_FLAGS", ""), max(args.chains, 1))


def _check_options(args: argparse.Namespace) -> None:
    _config(args)  # the sampler's own checks: chains, samples, warmup, target acceptance
    if args.gamma_uncertainty and args.table_embedding:
        raise ValueError("--gamma-uncertainty (Table A9 bootstrap) and --table-embedding exclude each other")
    if args.gamma_uncertainty and args.law != "chinchilla":
        raise ValueError("--gamma-uncertainty applies to --law chinchilla only")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise NotADirectoryError(f"--out {args.out} exists and is not a directory")
    grouped_only = [flag for flag, on in (("--share", args.share is not None),
                                          ("--compare-sharing", args.compare_sharing)) if on]
    if grouped_only and args.group_by is None:
        raise ValueError(f"{grouped_only[0]} needs --group-by COL")
    if args.group_by is not None and (args.compare is not None or args.laplace or args.holdout_threshold is not None
                                      or args.table_embedding or args.gamma_uncertainty):
        raise ValueError("--group-by samples one grouped model with NUTS on all runs: not with --compare, --laplace, "
                         "--holdout-threshold, --table-embedding or --gamma-uncertainty")
    if args.compare is not None and (args.laplace or args.holdout_threshold is not None or args.table_embedding):
        raise ValueError("--compare samples every law with NUTS on all runs: not with --laplace, --holdout-threshold "
                         "or --table-embedding")


def _config(args: argparse.Namespace):
    from jaxscale.inference.sample import NutsConfig

    return NutsConfig(chains=args.chains, warmup=args.warmup, samples=args.samples, seed=args.seed,
                      target_accept=args.target_accept, progress_bar=not args.no_progress)


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    _check_options(args)
    if args.compare is not None:
        return run_comparison(args, start)
    if args.group_by is not None:
        return run_grouped(args, start)
    from jaxscale.inference import refit

    table = load_table(args)
    law = chosen_law(args)
    heldout = None
    if args.holdout_threshold is not None:
        from jaxscale.fitting.holdout import split

        table, heldout = split(table, args.holdout_threshold, args.holdout_by)
    if args.laplace:
        fit = refit.approximate_posterior(table, law, seed=args.seed)
    else:
        fit = refit.sample_posterior(table, law, _config(args))
    reconciled = (refit.reconciled_exponent_draws(fit, args.gamma_uncertainty, args.seed,
                                                  table=table if args.table_embedding else None)
                  if args.law == "chinchilla" else None)
    numbers = refit.report(fit, table, reconciled)
    numbers["drop_highest"] = args.drop_highest
    if heldout is not None:
        numbers["holdout"] = {"by": args.holdout_by, "threshold": args.holdout_threshold,
                              **refit.holdout_calibration(fit, table, heldout, args.holdout_by, args.seed)}
    if args.out is not None:
        numbers["files"] = _write_outputs(fit, reconciled, args.out)
    numbers["seconds"] = time.perf_counter() - start
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print)
    return 0


def run_comparison(args: argparse.Namespace, start: float) -> int:
    """``jaxscale bayes --compare LAWS``: :mod:`jaxscale.inference.compare`."""
    from jaxscale.inference.compare import compare_laws, report

    table = load_table(args)
    comparison = compare_laws(table, [name.strip() for name in args.compare.split(",")], _config(args))
    numbers = {"n_points": len(table), **report(comparison)}
    if args.out is not None:
        numbers["files"] = _write_predictive_figures(comparison.fits, table, args.out, args.seed)
    numbers["seconds"] = time.perf_counter() - start
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print_comparison)
    return 0


def run_grouped(args: argparse.Namespace, start: float) -> int:
    """``jaxscale bayes --group-by COL [--share COORDS] [--compare-sharing]``:
    :mod:`jaxscale.inference.grouped`."""
    from jaxscale.inference import grouped

    table = load_table(args)
    law = chosen_law(args)
    shared = law.exponent_names if args.share is None else tuple(c.strip() for c in args.share.split(",") if c.strip())
    grouped.split(table, args.group_by, shared, law)  # bad column or coordinate: exit 2 before sampling
    if args.compare_sharing:
        comparison = grouped.compare_sharing(table, args.group_by, shared, law, _config(args))
        numbers, fits = grouped.sharing_report(comparison), comparison.fits
    else:
        fit = grouped.sample_grouped(table, args.group_by, shared, law, _config(args))
        numbers, fits = grouped.report(fit), {f"share {','.join(shared) or 'none'}": fit}
    numbers |= {"group_by": args.group_by, "n_points": len(table), "drop_highest": args.drop_highest}
    if args.out is not None:
        numbers["files"] = _write_predictive_figures(fits, table, args.out, args.seed)
    numbers["seconds"] = time.perf_counter() - start
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print_sharing if args.compare_sharing else _print_grouped)
    return 0


def _write_predictive_figures(fits: dict, table, out: Path, seed: int) -> list[str]:
    """A posterior predictive figure per fit, and its InferenceData (netCDF) for grouped fits."""
    import numpy as np

    from jaxscale.inference.diagnostics import posterior_predictive, save_netcdf
    from jaxscale.inference.grouped import GroupedFit
    from jaxscale.plots.bayes import predictive_figure

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fit in fits.items():
        params, sigma = fit.row_params()
        replicas = np.exp(posterior_predictive(fit.law, params, sigma, fit.df, table.law_inputs(fit.law.inputs), seed))
        lo, median, hi = np.quantile(replicas, [0.05, 0.5, 0.95], axis=0)
        slug = name.replace(" ", "_").replace(",", "-")
        paths.append(out / f"predictive_{slug}.png")
        predictive_figure(table.loss, median, lo, hi, name).savefig(paths[-1], dpi=110)
        if isinstance(fit, GroupedFit):
            paths.append(save_netcdf(fit.idata, out / f"posterior_{slug}.nc"))
    return [str(p) for p in paths]


def _print_differences(differences: dict, title: str) -> None:
    print(f"\n{title}")
    print(f"{'':8} {'groups':<38} {'median':>9} {'95% HDI':>21} {'P(>0)':>6}")
    for name, pairs in differences.items():
        for pair, d in pairs.items():
            hdi = f"[{d['hdi95'][0]:+.4f}, {d['hdi95'][1]:+.4f}]"
            print(f"{name:8} {pair:<38} {d['median']:>+9.4f} {hdi:>21} {d['p_positive']:>6.3f}")


def _print_grouped(numbers: dict) -> None:
    print(f"Bayesian refit (NUTS) of the {numbers['law']} law on {numbers['n_points']} runs in "
          f"{len(numbers['groups'])} groups by {numbers['group_by']} "
          + ", ".join(f"{g} ({k})" for g, k in numbers["runs_per_group"].items())
          + f"; shared: {', '.join(numbers['shared']) or 'nothing'}\n")
    _print_posterior(numbers["posterior"], 28)
    _print_differences(numbers["differences"], "differences between groups (first minus second)")
    print(f"\ndivergences: {numbers['divergences']}, largest R-hat {numbers['r_hat_max']:.4f}, E-BFMI: "
          + ", ".join(f"{v:.2f}" for v in numbers["bfmi"]))
    for problem in numbers["problems"]:
        print(f"WARNING: {problem}")
    print(f"sampler {numbers['sampler_seconds']:.1f} s")
    _print_files_and_total(numbers)


def _print_sharing(numbers: dict) -> None:
    print(f"Do the groups by {numbers['group_by']} ({', '.join(numbers['groups'])}) share "
          f"{', '.join(numbers['shared'])}? Models ranked by PSIS-LOO on {numbers['n_points']} runs\n")
    _print_ranking(numbers)
    _print_differences(numbers["differences_unshared"],
                       "in the model that shares nothing, differences between groups (first minus second)")
    _print_files_and_total(numbers)


def _print_files_and_total(numbers: dict) -> None:
    for f in numbers.get("files", []):
        print(f"wrote {f}")
    print(f"\ntotal {numbers['seconds']:.1f} s")


def _print_ranking(numbers: dict) -> None:
    print(f"{'model':<22} {'elpd_loo':>10} {'se':>7} {'elpd_diff':>10} {'dse':>7} {'p_loo':>7} {'weight':>7}"
          f" {'k max':>6} {'k>' + str(numbers['pareto_k_threshold']):>6} {'div.':>5} {'R-hat':>6}")
    for name, r in numbers["ranking"].items():
        print(f"{name:<22} {r['elpd_loo']:>10.1f} {r['se']:>7.1f} {r['elpd_diff']:>10.1f} {r['dse']:>7.1f} "
              f"{r['p_loo']:>7.1f} {r['weight']:>7.2f} {r['pareto_k_max']:>6.2f} {r['pareto_k_above']:>6} "
              f"{r['divergences']:>5} {r['r_hat_max']:>6.3f}")


def _print_comparison(numbers: dict) -> None:
    print(f"Laws ranked by PSIS-LOO on {numbers['n_points']} runs (higher elpd predicts left-out runs better)\n")
    _print_ranking(numbers)
    _print_files_and_total(numbers)


def _write_outputs(fit, reconciled, out: Path) -> list[str]:
    import numpy as np

    from jaxscale.inference import diagnostics
    from jaxscale.optimum.allocation import optimal_allocation
    from jaxscale.plots import bayes as plots

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    if fit.idata is not None:
        paths.append(diagnostics.save_netcdf(fit.idata, out / "posterior.nc"))
    scales = [f for f, log in zip(fit.law.param_names, fit.law.log_scale) if log and f != "E"]
    figures = {"corner": plots.corner_figure(fit.draws, names=fit.law.param_names, log_scale=scales,
                                             law=fit.law.name)}
    if fit.law.inputs == ("N", "D"):
        bands = optimal_allocation(fit.law, fit.params, np.logspace(*np.log10(BAND_BUDGETS), 40))
        figures["optimal_bands"] = plots.optimal_bands_figure(bands)
    if reconciled is not None:
        figures["reconciled_exponent"] = plots.reconciled_exponent_figure(reconciled.exponents)
    for name, fig in figures.items():
        paths.append(out / f"{name}.png")
        fig.savefig(paths[-1], dpi=110)
    return [str(p) for p in paths]


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.4g}"


def _print_posterior(posterior: dict, width: int) -> None:
    print(f"{'':{width}} {'mean':>10} {'sd':>10} {'95% HDI':>23} {'R-hat':>7} {'ESS bulk':>9}")
    for name, s in posterior.items():
        hdi = f"[{_fmt(s['hdi95'][0])}, {_fmt(s['hdi95'][1])}]"
        print(f"{name:{width}} {_fmt(s['mean']):>10} {_fmt(s['sd']):>10} {hdi:>23} "
              f"{_fmt(s['r_hat']):>7} {_fmt(s['ess_bulk']):>9}")


def _print(numbers: dict) -> None:
    print(f"Bayesian refit ({numbers['method']}) of the {numbers['law']} law on "
          f"{numbers['n_points']} runs (dropped the {numbers['drop_highest']} highest-loss)\n")
    _print_posterior(numbers["posterior"], 8)
    if "reconciled_exponent" in numbers:
        for key, label in (("reconciled_exponent", "Kaplan-basis exponent N*_\\E ∝ C_\\E^g"),
                           ("total_exponent", "total-basis exponent N*_T ∝ C_T^a")):
            r = numbers[key]
            print(f"\n{label}: median {r['median']:.4f}, 95% HDI [{r['hdi95'][0]:.4f}, {r['hdi95'][1]:.4f}]",
                  end="")
        print(f"\n  (gamma: {numbers['embedding']}; Pearce & Song report 0.78 Epoch / 0.74 Chinchilla; Kaplan 0.73)")
    if "holdout" in numbers:
        h = numbers["holdout"]
        coverage = ", ".join(f"{level} interval covers {v:.1%} ({h['coverage_without_extrapolation_term'][level]:.1%} "
                             "without the extrapolation term)" for level, v in h["coverage"].items())
        print(f"\nheld out {h['n_heldout']} runs with {h['by'].upper()} >= {h['threshold']:g}: MAE {h['mae_nats']:.4f} nats, "
              f"mean signed error {h['mean_signed_error_nats']:+.4f}; {coverage}")
    ppc = numbers["predictive_check"]
    print(f"\nposterior predictive: median |log residual| {ppc['residual_median_abs']:.4f}, "
          f"{ppc['level']:.0%} interval covers {ppc['coverage']:.1%} of runs")
    if "divergences" in numbers:
        print(f"divergences: {numbers['divergences']}, E-BFMI: "
              + ", ".join(f"{v:.2f}" for v in numbers["bfmi"]))
        for problem in numbers["problems"]:
            print(f"WARNING: {problem}")
    for f in numbers.get("files", []):
        print(f"wrote {f}")
    print(f"\nsampler {numbers['sampler_seconds']:.1f} s, total {numbers['seconds']:.1f} s")
