"""``jaxscale sensitivity``: elasticities, delta-method uncertainty, run influence and the
reconciliation's sensitivity to its own choices, for a fitted law or a published parameter set
(:func:`jaxscale.sensitivity`)."""

from __future__ import annotations

import argparse

from jaxscale.cli import _options as o

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
        "`jaxscale fit`, Approach 3) or of a published parameter set of --law (--published).",
        epilog=o.epilog("jaxscale sensitivity chinchilla_svg_extracted_data.csv --drop-highest 5 --out sensitivity\n"
                        "jaxscale sensitivity --published epoch --compute 1e22 1e24", QUANTITIES_HELP),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    o.add_table(p, required=False)
    o.add_law(p, what="the law to fit or whose --published parameters to study")
    o.add_published(p, "epoch or chinchilla for the chinchilla law, kaplan for kaplan (no covariance, no "
                       "influence), instead of a runs table")
    p.add_argument("--compute", type=o.positive, nargs="+", default=[1e24], metavar="C",
                   help="budgets (FLOP) of N*(C) and D*(C) (default: 1e24)")
    p.add_argument("--planned", type=o.positive, nargs=2, default=[7e10, 1.4e12], metavar=("N", "D"),
                   help="planned run whose loss is extrapolated (default: Chinchilla, 7e10 1.4e12)")
    o.add_bootstrap(p, default=1000, what="bootstrap refits for the parameter covariance")
    o.add_seed(p)
    p.add_argument("--table-embedding", action="store_true",
                   help="take gamma, delta from the table's own model sizes (it needs both parameter bases)")
    p.add_argument("--gamma", type=o.positive, default=None,
                   help="gamma of N_T = N + gamma N^delta (default: Pearce & Song's Table A9 fit, 47491)")
    p.add_argument("--delta", type=o.between(0, 1), default=None,
                   help="delta of the embedding relation, in (0, 1): the embedding grows slower than the model "
                   "(default: 1/3, fixed aspect ratio)")
    p.add_argument("--target", type=o.between(0, 1), default=None,
                   help="exponent a of N* ~ C^a, in (0, 1), that the reconciliation's first-order factors aim at "
                   "(default: Kaplan's 0.73)")
    p.add_argument("--top", type=o.at_least(1), default=5, help="runs listed per quantity (default: %(default)s)")
    o.add_out(p, "the figures")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import sensitivity

    if (args.runs is None) == (args.published is None):
        raise ValueError("give a runs table or --published NAME, not both and not neither")
    o.check_out(args.out)
    runs = None if args.runs is None else o.deferred_table(args)
    result = sensitivity(runs, published=args.published, law=args.law, compute=args.compute, planned=args.planned,
                         bootstrap=args.bootstrap, seed=args.seed, gamma=args.gamma, delta=args.delta,
                         table_embedding=args.table_embedding, target=args.target, top=args.top)
    return o.report(result, args, _print)


def _print(numbers: dict) -> None:
    print(f"jaxscale sensitivity: {numbers['law']} law, {numbers['source']}")
    print("  " + ", ".join(f"{k} = {v:.5g}" for k, v in numbers["params"].items()))
    _print_quantities(numbers["quantities"])
    if "influence" in numbers:
        _print_influence(numbers["influence"])
    if numbers.get("reconciliation") is not None:
        _print_reconciliation(numbers["reconciliation"])
    elif "reconciliation_undefined" in numbers:
        print(f"\nreconciled exponent: {numbers['reconciliation_undefined']}")
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
