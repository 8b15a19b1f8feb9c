"""``jaxscale fit``: a scaling law fitted to a runs table (:func:`jaxscale.fit`)."""

from __future__ import annotations

import argparse
import math

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "fit", "fit a scaling law to a table of training runs",
        "Fit L(N, D) to a runs table (CSV with model size, tokens or compute, loss): Approach 3 (Huber loss, "
        "L-BFGS from Epoch AI's 4500-point grid, all starts at once), optionally bootstrapped; or Approach 1 "
        "(frontier of training curves) / 2 (isoFLOP parabolas). With --out, writes a residual plot, the isoFLOP "
        "figure and the bootstrap draws.",
        "jaxscale fit chinchilla_svg_extracted_data.csv --drop-highest 5 --bootstrap 4000 --out fit_results",
    )
    o.add_table(p)
    o.add_law(p)
    p.add_argument("--method", choices=("approach1", "approach2", "approach3"), default="approach3",
                   help="Hoffmann et al.'s approach (default: %(default)s)")
    o.add_bootstrap(p, what="bootstrap resamples (Epoch: 4000)")
    o.add_seed(p)
    p.add_argument("--asymmetry", type=o.positive, default=None, metavar="W",
                   help="weigh over-predictions of the loss W times more (for under-tuned small runs)")
    p.add_argument("--likelihood", action="store_true",
                   help="also fit the Huber likelihood form (scale sigma) and test Chinchilla's published values")
    p.add_argument("--holdout-threshold", type=o.positive, default=None, metavar="X",
                   help="also fit on runs with N (or C, see --holdout-by) below X and report the error on the rest")
    p.add_argument("--holdout-by", choices=("n", "c"), default="n", help="holdout split variable (default: %(default)s)")
    p.add_argument("--compute", type=o.positive, nargs="+", default=None, metavar="C",
                   help="budgets (FLOP) for the compute-optimal allocation (default: the largest in the table)")
    o.add_out(p, "the figures and the bootstrap draws (bootstrap_draws.csv)")
    o.add_json(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale import fit, frontier

    o.check_out(args.out)
    if args.method != "approach3":
        _check_frontier_options(args)
        result = frontier(o.deferred_table(args), int(args.method[-1]), bootstrap=args.bootstrap, seed=args.seed)
    else:
        result = fit(o.deferred_table(args), args.law, bootstrap=args.bootstrap, seed=args.seed,
                     compute=args.compute, asymmetry=args.asymmetry, likelihood=args.likelihood,
                     holdout=args.holdout_threshold, holdout_by=args.holdout_by)
    return o.report(result, args, _print)


def _check_frontier_options(args: argparse.Namespace) -> None:
    """Approaches 1 and 2 fit no law: refuse the options of Approach 3 (:func:`jaxscale.frontier`)."""
    extra = [name for name, used in (("compute", args.compute is not None), ("asymmetry", args.asymmetry is not None),
                                      ("likelihood", args.likelihood),
                                      ("holdout", args.holdout_threshold is not None)) if used]
    if extra:
        raise ValueError(f"{', '.join(extra)} apply to approach3, not {args.method}")


def _fmt(value, spec: str = ".7g") -> str:
    """A value as text: lists joined, floats in ``spec``, None (undefined in JSON) as "undefined"."""
    if isinstance(value, list):
        return "  ".join(_fmt(v, spec) for v in value)
    if not _defined(value):
        return "undefined"
    return format(value, spec) if isinstance(value, float) else str(value)


def _value_text(value, numbers: dict) -> str:
    """A value of the table; None where Approach 1 leaves the law undefined (too few sizes on
    its frontier, counted in ``n_sizes``)."""
    if value is None and "n_sizes" in numbers:
        from jaxscale.fitting.approach1 import undefined_exponent

        return undefined_exponent(numbers["n_sizes"])
    return _fmt(value)


def _defined(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _print(numbers: dict) -> None:
    se, ci, undefined = numbers.get("se", {}), numbers.get("ci95", {}), numbers.get("undefined", {})
    print(f"jaxscale fit: {numbers.get('law', '')} {numbers['method']}")
    for key, value in numbers.items():
        if isinstance(value, dict) or key in ("law", "method", "files", "slices", "note", "identifiability"):
            continue
        extra = f"   se {se[key]:.4g}" if _defined(se.get(key)) else ""
        extra += f"   95% [{ci[key][0]:.6g}, {ci[key][1]:.6g}]" if key in ci and _defined(ci[key][0]) else ""
        extra += f"   undefined in {undefined[key]:.0%} of resamples" if key in undefined else ""
        print(f"  {key:<22} {_value_text(value, numbers)}{extra}")
    if "note" in numbers:
        print(f"  note: {numbers['note']}")
    if "columns" in numbers:
        print("  columns: " + ", ".join(f"{k} = {v}" for k, v in numbers["columns"].items()))
    if "identifiability" in numbers:
        from jaxscale.cli._output import print_identifiability

        print_identifiability(numbers["identifiability"])
    for section in ("allocation", "likelihood", "holdout"):
        for key, value in numbers.get(section, {}).items():
            print(f"  {section + '.' + key:<34} {value if isinstance(value, dict) else _fmt(value)}")
    if "slices" in numbers:
        print(f"  {'isoFLOP slice':<14} {'points':>6} {'sizes':>5} {'N*':>10} {'L*':>8}  status")
        for s in numbers["slices"]:
            print(f"  {s['budget']:<14.3g} {s['points']:>6} {s['sizes']:>5} {_fmt(s['n_star'], '.3g'):>10} "
                  f"{_fmt(s['loss_star'], '.4f'):>8}  {s['status']}")
    for path in numbers.get("files", []):
        print(f"wrote {path}")
