"""``jaxscale bayes``: the posterior of a law given a runs table (:func:`jaxscale.bayes`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "bayes", "Bayesian refit of a scaling law (NUTS) with posterior intervals",
        "Sample the posterior of L(N, D) given a runs table (same columns and checks as `jaxscale fit`): "
        "Student-t likelihood on log loss, weakly informative priors, NUTS from the Approach-3 optimum; "
        "convergence diagnostics; posterior of a = beta/(alpha+beta) and of Pearce & Song's reconciled "
        "(Kaplan-basis) exponent. With --out, writes posterior.nc (ArviZ InferenceData) and the figures.",
        "jaxscale bayes chinchilla_svg_extracted_data.csv --drop-highest 5 --chains 4 --out posterior\n"
        "jaxscale bayes isoflops_public.csv --group-by source --share alpha,beta --compare-sharing",
    )
    o.add_table(p)
    o.add_law(p)
    o.add_nuts(p)
    o.add_seed(p, "seed of the sampler")
    p.add_argument("--target-accept", type=o.between(0, 1), default=0.8,
                   help="NUTS target acceptance (default: %(default)s)")
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
    p.add_argument("--holdout-threshold", type=o.positive, default=None, metavar="X",
                   help="sample on runs with N (or C, see --holdout-by) below X only and report the errors and "
                   "the 50/80/90%% predictive-interval coverage on the rest")
    p.add_argument("--holdout-by", choices=("n", "c"), default="n", help="holdout split variable (default: %(default)s)")
    o.add_out(p, "posterior.nc (ArviZ InferenceData) and the figures")
    o.add_json(p)
    p.set_defaults(run=run, prepare=o.one_cpu_device_per_chain)


def run(args: argparse.Namespace) -> int:
    o.check_out(args.out)
    from jaxscale import bayes, bayes_grouped, loo

    _check_modes(args)
    table = o.deferred_table(args)
    nuts = dict(chains=args.chains, warmup=args.warmup, samples=args.samples, seed=args.seed,
                target_accept=args.target_accept, progress=not args.no_progress)
    if args.compare is not None:
        result, text = loo(table, args.compare, **nuts), _print_comparison
    elif args.compare_sharing:
        result, text = loo(table, group_by=args.group_by, share=args.share, law=args.law, **nuts), _print_sharing
    elif args.group_by is not None:
        result, text = bayes_grouped(table, args.group_by, args.law, share=args.share, **nuts), _print_grouped
    else:
        result = bayes(table, args.law, laplace=args.laplace, gamma_uncertainty=args.gamma_uncertainty,
                       table_embedding=args.table_embedding, holdout=args.holdout_threshold,
                       holdout_by=args.holdout_by, **nuts)
        text = _print
    return o.report(result, args, text)


def _check_modes(args: argparse.Namespace) -> None:
    """The options of one mode (one verb) given with another's, refused before any work."""
    grouped_only = [name for name, on in (("share", args.share is not None),
                                          ("compare_sharing", args.compare_sharing)) if on]
    if grouped_only and args.group_by is None:
        raise ValueError(f"{grouped_only[0]} needs group_by")
    posterior_only = [name for name, on in (("laplace", args.laplace), ("holdout", args.holdout_threshold is not None),
                                            ("table_embedding", args.table_embedding),
                                            ("gamma_uncertainty", args.gamma_uncertainty)) if on]
    if args.group_by is not None and (args.compare is not None or posterior_only):
        raise ValueError("group_by samples one grouped model with NUTS on all runs: not with compare, laplace, "
                         "holdout, table_embedding or gamma_uncertainty")
    if args.compare is not None and posterior_only:
        raise ValueError("compare samples every law with NUTS on all runs: not with laplace, holdout, "
                         "table_embedding or gamma_uncertainty")


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
    print(f"\ndivergences: {numbers['divergences']}, largest R-hat {_fmt(numbers['r_hat_max'])}, E-BFMI: "
          + ", ".join(f"{v:.2f}" for v in numbers["bfmi"]))
    _print_checks(numbers["problems"])
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
              f"{r['divergences']:>5} {_fmt(r['r_hat_max']):>6}")


def _print_comparison(numbers: dict) -> None:
    print(f"Laws ranked by PSIS-LOO on {numbers['n_points']} runs (higher elpd predicts left-out runs better)\n")
    _print_ranking(numbers)
    _print_files_and_total(numbers)


def _print_checks(problems: list[str]) -> None:
    """One line on the convergence checks: each failed one was warned on stderr as sampling
    ended (and is listed under "problems" in --json), not repeated here."""
    print("convergence checks: " + (f"{len(problems)} failed, each warned on stderr" if problems else "all passed"))


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
    if "reconciled_exponent_undefined" in numbers:
        print(f"\nreconciled exponent: {numbers['reconciled_exponent_undefined']}")
    elif "reconciled_exponent" in numbers:
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
        _print_checks(numbers["problems"])
    if "identifiability" in numbers:
        from jaxscale.cli._output import print_identifiability

        print_identifiability(numbers["identifiability"])
    for f in numbers.get("files", []):
        print(f"wrote {f}")
    print(f"\nsampler {numbers['sampler_seconds']:.1f} s, total {numbers['seconds']:.1f} s")
