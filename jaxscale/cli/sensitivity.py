"""``jaxscale sensitivity``: elasticities, delta-method uncertainty, run influence and the
reconciliation's sensitivity to its own choices, for a fitted law or a published preset."""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from jaxscale.cli.fit import (
    add_table_arguments,
    check_bootstrap,
    chosen_law,
    load_table,
)

QUANTITIES_HELP = """quantities (each a positive function of the law's parameters):
  N*(C), D*(C)   compute-optimal size and tokens at each --compute budget C (C = 6ND)
  L(N, D)        the loss the law predicts for the --planned run
  a, b           the allocation exponents N* ~ C^a, D* ~ C^b (laws with closed forms: chinchilla)
  reconciled exponent
                 Pearce & Song's Kaplan-basis exponent (chinchilla law) under N_T = N + gamma N^delta,
                 the power law of N*(C) over the budgets where N* spans Kaplan's sizes 10^2.9-10^9.2

for each: elasticities d log q / d log theta (the tornado figure); with a table, the delta-method SD
of log q from the bootstrap covariance (sqrt(e' Sigma e), and ignoring correlations) beside the SD
of log q over the bootstrap refits; each run's influence on log q (implicit differentiation of the
Huber fit) against exact leave-one-out refits. For the chinchilla law, the reconciled exponent's
derivatives with respect to A, B, E, alpha, beta, gamma, delta and the size window's bounds, and
the factor on each that would move it to --target to first order."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sensitivity",
        help="autodiff sensitivity study: elasticities, delta method, run influence, reconciliation",
        description="Sensitivity study of a law fitted to a runs table (same table arguments as "
        "`jaxscale fit`, Approach 3) or of a published preset (--preset).",
        epilog=QUANTITIES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_table_arguments(p, required=False)
    p.add_argument("--preset", choices=("epoch", "chinchilla"), default=None,
                   help="published Chinchilla parameters instead of a table (no covariance, no influence)")
    p.add_argument("--compute", type=float, nargs="+", default=[1e24], metavar="C",
                   help="budgets (FLOP) of N*(C) and D*(C) (default: 1e24)")
    p.add_argument("--planned", type=float, nargs=2, default=[7e10, 1.4e12], metavar=("N", "D"),
                   help="planned run whose loss is extrapolated (default: Chinchilla, 7e10 1.4e12)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="R",
                   help="bootstrap refits for the parameter covariance (0: none; default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    p.add_argument("--table-embedding", action="store_true",
                   help="take gamma, delta from the table's own model sizes (it needs both parameter bases)")
    p.add_argument("--gamma", type=float, default=None,
                   help="gamma of N_T = N + gamma N^delta (default: Pearce & Song's Table A9 fit, 47491)")
    p.add_argument("--delta", type=float, default=None,
                   help="delta of the embedding relation (default: 1/3, fixed aspect ratio)")
    p.add_argument("--target", type=float, default=None,
                   help="exponent the reconciliation's first-order factors aim at (default: Kaplan's 0.73)")
    p.add_argument("--top", type=int, default=5, help="runs listed per quantity (default: %(default)s)")
    p.add_argument("--out", type=Path, default=None, help="directory for the figures (default: none)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    p.set_defaults(run=run)


def _settings(args: argparse.Namespace):
    from jaxscale.reconciliation.pipeline import EmbeddingFit
    from jaxscale.sensitivities.study import StudySettings

    if (args.runs is None) == (args.preset is None):
        raise ValueError("give a runs table or --preset, not both and not neither")
    if args.table_embedding and (args.preset is not None or args.gamma is not None or args.delta is not None):
        raise ValueError("--table-embedding takes gamma, delta from a runs table: not with --preset, --gamma or --delta")
    if args.preset is not None and args.law != "chinchilla":
        raise ValueError("--preset gives chinchilla parameters; --law does not apply")
    check_bootstrap(args.bootstrap)
    if args.top < 1:
        raise ValueError(f"--top must be >= 1, got {args.top}")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise NotADirectoryError(f"--out {args.out} exists and is not a directory")
    default = StudySettings()
    embedding = EmbeddingFit(*(d if a is None else a for a, d in zip((args.gamma, args.delta), default.embedding)))
    return StudySettings(budgets=tuple(args.compute), planned=(tuple(args.planned),), embedding=embedding,
                         n_bootstrap=args.bootstrap, seed=args.seed, top=args.top,
                         target=default.target if args.target is None else args.target)


def _table_embedding(table):
    """gamma, delta of N_T = N_E + gamma N_E^delta fitted to the table's model sizes."""
    from jaxscale.reconciliation.on_runs import model_sizes
    from jaxscale.reconciliation.pipeline import EmbeddingFit, fit_gamma_delta

    return EmbeddingFit(*(float(v) for v in fit_gamma_delta(*model_sizes(table))))


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    settings = _settings(args)
    from jaxscale.sensitivities import study

    if args.preset is not None:
        from jaxscale.laws import chinchilla

        numbers = {"source": f"preset {args.preset}", **study.preset_study(chinchilla.preset(args.preset), settings)}
    else:
        from jaxscale.fitting.approach3 import fit_approach3
        from jaxscale.optimum.allocation import check_nd

        law = chosen_law(args)
        check_nd(law)  # the study's quantities need a law of N and D: say so before fitting
        table = load_table(args)
        if args.table_embedding:
            settings = dataclasses.replace(settings, embedding=_table_embedding(table))
        fit = fit_approach3(table, law=law)
        numbers = {"source": str(args.runs), "drop_highest": args.drop_highest, **study.fit_study(fit, settings)}
    if args.out is not None:
        numbers["files"] = _write_figures(numbers, args.out)
    numbers["seconds"] = time.perf_counter() - start
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print)
    return 0


def _write_figures(numbers: dict, out: Path) -> list[str]:
    from jaxscale.plots import sensitivity as plots

    out.mkdir(parents=True, exist_ok=True)
    figures = {"tornado": plots.tornado_figure({q: v["elasticities"] for q, v in numbers["quantities"].items()})}
    if "influence" in numbers:
        runs = numbers["influence"]["per_run"]
        figures["influence"] = plots.influence_figure(runs["N"], runs["D"], runs["linear"])
        correlations = {q: v["correlation_jackknife"] for q, v in numbers["influence"]["quantities"].items()}
        figures["jackknife"] = plots.jackknife_figure(runs["linear"], runs["exact"], correlations)
    paths = []
    for name, fig in figures.items():
        paths.append(out / f"{name}.png")
        fig.savefig(paths[-1], dpi=110)
    return [str(p) for p in paths]


def _print(numbers: dict) -> None:
    print(f"jaxscale sensitivity: {numbers['law']} law, {numbers['source']}")
    print("  " + ", ".join(f"{k} = {v:.5g}" for k, v in numbers["params"].items()))
    _print_quantities(numbers["quantities"])
    if "influence" in numbers:
        _print_influence(numbers["influence"])
    if "reconciliation" in numbers:
        _print_reconciliation(numbers["reconciliation"])
    for path in numbers.get("files", []):
        print(f"wrote {path}")
    print(f"\n{numbers['seconds']:.1f} s")


def _print_quantities(quantities: dict) -> None:
    params = list(next(iter(quantities.values()))["elasticities"])
    print("\nelasticities d log q / d log theta")
    print(f"  {'quantity':<22} {'value':>11} " + " ".join(f"{p:>8}" for p in params))
    for q, v in quantities.items():
        print(f"  {q:<22} {v['value']:>11.5g} " + " ".join(f"{v['elasticities'][p]:>+8.4f}" for p in params))
    if "sd_log_delta" not in next(iter(quantities.values())):
        return
    print("\nSD of log q: delta method (full covariance, independent parameters) against the draws")
    print(f"  {'quantity':<22} {'delta':>8} {'indep.':>8} {'draws':>8}   variance shares")
    for q, v in quantities.items():
        shares = " ".join(f"{p} {s:+.2f}" for p, s in v["shares"].items())
        print(f"  {q:<22} {v['sd_log_delta']:>8.4f} {v['sd_log_independent']:>8.4f} {v['sd_log_draws']:>8.4f}   {shares}")


def _print_influence(section: dict) -> None:
    print(f"\ninfluence of each run (first order, Delta log q when the run is left out) against "
          f"{section['jackknife_converged']} leave-one-out refits; {section['quadratic_runs']} of "
          f"{section['n_runs']} runs in the Huber quadratic region")
    for q, v in section["quantities"].items():
        print(f"  {q:<22} correlation {v['correlation_jackknife']:.4f} "
              f"(through d theta/d log L alone: {v['correlation_jackknife_log_loss_route']:.4f})")
        for label, key in (("most influential", "most_influential"), ("worst matched", "worst_matched")):
            rows = "; ".join(f"#{r['run']} N={r['N']:.3g} D={r['D']:.3g}: {r['linear']:+.4f}/{r['exact']:+.4f}"
                             f" h={r['leverage']:.2f}" for r in v[key])
            print(f"    {label:<16} (linear/exact, leverage) {rows}")


def _print_reconciliation(section: dict) -> None:
    print(f"\nreconciled exponent {section['exponent']:.4f} (smooth window; Step-4 frontier "
          f"{section['frontier_exponent']:.4f}), gamma = {section['gamma']:.6g}, delta = {section['delta']:.4g}")
    print(f"  {'knob':<8} {'value':>10} {'da/dx':>11} {'elasticity':>10} {'factor to ' + format(section['target'], 'g'):>14} "
          f"{'a there':>8}")
    for k, v in section["knobs"].items():
        print(f"  {k:<8} {v['value']:>10.4g} {v['derivative']:>+11.4g} {v['elasticity']:>+10.4f} "
              f"{_or_dash(v['factor_to_target'], 14, '.4g')} {_or_dash(v['exponent_at_factor'], 8, '.4f')}")
    print("  (da/dx per decade of N for the window bounds N_min, N_max; factors beyond 100x either way: —)")


def _or_dash(value: float | None, width: int, spec: str) -> str:
    """``value`` formatted, or a dash where it is undefined (NaN, or null from JSON)."""
    return f"{value:>{width}{spec}}" if value is not None and value == value else f"{'—':>{width}}"
