"""``jaxscale fit``: fit a scaling law to a runs table (Chinchilla Approaches 1-3)."""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports its heavy modules only when a command runs
    from jaxscale.laws.law import Law
    from jaxscale.runs.table import RunsTable


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "fit",
        help="fit a scaling law to a table of training runs",
        description="Fit L(N, D) to a runs table (CSV with model size, tokens or compute, loss): "
        "Approach 3 (Huber loss, L-BFGS from Epoch AI's 4500-point grid, all starts at once), "
        "optionally bootstrapped; or Approach 1 (frontier of training curves) / 2 (isoFLOP "
        "parabolas). Writes a residual plot, the isoFLOP figure and the bootstrap draws.",
    )
    add_table_arguments(p)
    p.add_argument("--method", choices=("approach1", "approach2", "approach3"), default="approach3",
                   help="Hoffmann et al.'s approach (default: %(default)s)")
    p.add_argument("--bootstrap", type=int, default=0, metavar="N",
                   help="bootstrap resamples (Epoch: 4000; default: none)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    p.add_argument("--tied-exponents", action="store_true", help="fit alpha = beta (chinchilla law)")
    p.add_argument("--asymmetry", type=float, default=None, metavar="W",
                   help="weigh over-predictions of the loss W times more (for under-tuned small runs)")
    p.add_argument("--likelihood", action="store_true",
                   help="also fit the Huber likelihood form (scale sigma) and test Chinchilla's published values")
    p.add_argument("--holdout-threshold", type=float, default=None, metavar="X",
                   help="also fit on runs with N (or C, see --holdout-by) below X and report the error on the rest")
    p.add_argument("--holdout-by", choices=("n", "c"), default="n", help="holdout split variable (default: %(default)s)")
    p.add_argument("--compute", type=float, nargs="+", default=None, metavar="C",
                   help="budgets (FLOP) for the compute-optimal allocation (default: the largest in the table)")
    p.add_argument("--out", type=Path, default=Path("fit_results"),
                   help="directory for figures and the bootstrap CSV (default: %(default)s)")
    p.add_argument("--no-figures", action="store_true", help="write no files")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(run=run)


def add_table_arguments(p: argparse.ArgumentParser, required: bool = True) -> None:
    """The arguments of every command that fits a runs table: the CSV (optional positional
    unless ``required``), --law, --drop-highest and the column names (read them with
    :func:`load_table`)."""
    add_column_arguments(p, required)
    p.add_argument("--law", default="chinchilla", metavar="NAME",
                   help="the law to fit, any of jaxscale.laws (chinchilla: E + A/N^alpha + B/D^beta; "
                   "kaplan: Kaplan et al. Eq. 1.5; chinchilla-tied, kaplan-irreducible, pearce-song, ...; "
                   "an unknown name lists them) (default: %(default)s)")
    p.add_argument("--drop-highest", type=int, default=0, metavar="K",
                   help="drop the K highest-loss runs first (Epoch drops 5; default: %(default)s)")
    p.add_argument("--final-only", action="store_true",
                   help="keep only the last checkpoint of each run (finished, annealed runs, as Approach 3 wants)")
    p.add_argument("--tuned-only", action="store_true",
                   help="at each (N, D) keep only the lowest-loss row: of runs that differ only in a swept "
                   "hyperparameter (a learning-rate sweep), the tuned one")
    p.add_argument("--basis", choices=("total", "nonembedding"), default="total",
                   help="parameter basis of N and C: total (Chinchilla's N_T, C_T) or nonembedding (Kaplan's "
                   "N_\\E, C_\\E = 6 N_\\E D; needs a non-embedding size column) (default: %(default)s)")


def add_column_arguments(p: argparse.ArgumentParser, required: bool = True) -> None:
    """The CSV and how to read it: column names, --where, --run-by (read with :func:`load_columns`)."""
    p.add_argument("runs", type=Path, nargs=None if required else "?", default=None,
                   help="CSV of runs (e.g. Epoch's chinchilla_svg_extracted_data.csv)")
    for role, flag in (("model size N", "--n-col"), ("training tokens D", "--d-col"),
                       ("training compute C", "--c-col"), ("loss", "--loss-col")):
        p.add_argument(flag, default=None, metavar="NAME", help=f"column of {role} (default: recognised by name)")
    p.add_argument("--where", action="append", default=[], metavar="COL=VALUE",
                   help="keep only rows whose COL equals VALUE (repeatable), e.g. source=ml_scalefit")
    p.add_argument("--run-by", default=None, metavar="COLS",
                   help="comma-separated columns that together name a run, e.g. model,peak_lr,total_steps,sweep "
                   "(default: a run_id column if there is one)")


def where_conditions(items: list[str]) -> dict[str, str]:
    """``--where COL=VALUE`` arguments as a mapping."""
    pairs = [item.split("=", 1) for item in items]
    bad = [item for item, pair in zip(items, pairs) if len(pair) != 2 or not pair[0]]
    if bad:
        raise ValueError(f"--where takes COL=VALUE; got {bad[0]!r}")
    return dict(pairs)


def load_columns(args: argparse.Namespace, path: Path | None = None, sizes_vary: bool = True) -> RunsTable:
    """The validated runs table of :func:`add_column_arguments`' arguments (from ``path`` if given;
    ``sizes_vary``: see :func:`jaxscale.runs.table.load_runs`)."""
    from jaxscale.runs.table import load_runs

    run_by = [c.strip() for c in args.run_by.split(",")] if args.run_by else None
    return load_runs(args.runs if path is None else path, n_col=args.n_col, d_col=args.d_col, c_col=args.c_col,
                     loss_col=args.loss_col, run_by=run_by, where=where_conditions(args.where), sizes_vary=sizes_vary)


def load_table(args: argparse.Namespace) -> RunsTable:
    """The validated runs table named by :func:`add_table_arguments`' arguments: rows of
    ``--where``, runs named by ``--run-by``, their last checkpoints with ``--final-only``, the
    tuned run at each (N, D) with ``--tuned-only``, then without the ``--drop-highest``
    highest-loss rows, on the ``--basis``."""
    from jaxscale.runs.table import (
        best_per_size_and_tokens,
        drop_highest_loss,
        final_checkpoints,
    )

    if args.drop_highest < 0:
        raise ValueError(f"--drop-highest must be >= 0, got {args.drop_highest}")
    table = load_columns(args)
    if args.final_only:
        table = final_checkpoints(table)
    if args.tuned_only:
        table = best_per_size_and_tokens(table)
    return drop_highest_loss(table, args.drop_highest).in_basis(args.basis)


def chosen_law(args: argparse.Namespace) -> Law:
    """The law named by ``--law`` (``--tied-exponents`` turns chinchilla into chinchilla-tied)."""
    from jaxscale.laws.registry import law_by_name

    if getattr(args, "tied_exponents", False):
        if args.law != "chinchilla":
            raise ValueError("--tied-exponents applies to --law chinchilla only")
        return law_by_name("chinchilla-tied")
    return law_by_name(args.law)


def check_bootstrap(resamples: int) -> None:
    """``--bootstrap`` is 0 (no intervals) or at least 2 resamples."""
    if resamples < 0 or resamples == 1:
        raise ValueError(f"--bootstrap must be 0 (none) or >= 2, got {resamples}")


def _check_options(args: argparse.Namespace) -> None:
    check_bootstrap(args.bootstrap)
    if args.asymmetry is not None and not args.asymmetry > 0:
        raise ValueError(f"--asymmetry must be > 0, got {args.asymmetry}")
    if args.out.exists() and not args.out.is_dir() and not args.no_figures:
        raise NotADirectoryError(f"--out {args.out} exists and is not a directory")


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    _check_options(args)
    table = load_table(args)
    if args.method == "approach3":
        numbers = _approach3(args, table)
    else:
        numbers = _allocation_method(args, table)
    numbers["seconds"] = time.perf_counter() - start
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print)
    return 0


def _approach3(args: argparse.Namespace, table) -> dict:
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.fitting.bootstrap import bootstrap
    from jaxscale.optimum.allocation import allocation_table, decades_outside

    common = dict(law=chosen_law(args), asymmetry=args.asymmetry)
    fit = fit_approach3(table, **common)
    numbers = {"law": fit.law.name, "method": "approach3", **fit.summary(),
               "n_starts": fit.n_starts, "n_converged": fit.n_converged, "fit_seconds": fit.seconds}
    nonpositive, infinite = fit.nonpositive_exponents(), fit.infinite_parameters()
    if infinite:
        numbers["note"] = (f"fitted {' and '.join(infinite)} ran off to infinity on {fit.n_points} runs: they "
                           "settle no optimum, so the law's derived quantities are undefined (add runs)")
    elif nonpositive:
        numbers["note"] = (f"fitted {' and '.join(nonpositive)} <= 0: the loss does not fall along that input, so "
                           "the law has no compute-optimal allocation and what needs one is undefined")
    boot = None
    if args.bootstrap:
        boot = bootstrap(fit, args.bootstrap, seed=args.seed)
        numbers.update(se=boot.se(), ci95=boot.ci95(), undefined=boot.undefined(),
                       bootstrap_resamples=args.bootstrap, bootstrap_converged=int(boot.converged.sum()),
                       bootstrap_seconds=boot.seconds, seed=args.seed)
    if fit.law.inputs == ("N", "D"):
        budgets = args.compute or [float(table.c.max())]
        draws = None if boot is None else type(boot.params)(*(v[boot.converged] for v in boot.params))
        allocation = allocation_table(fit.law, fit.params, budgets, draws)
        allocation["N_decades_outside_runs"] = decades_outside(allocation["N"], table.n)
        allocation["D_decades_outside_runs"] = decades_outside(allocation["D"], table.d)
        numbers["allocation"] = allocation
    if args.likelihood:
        numbers["likelihood"] = _likelihood(args, table)
    if args.holdout_threshold is not None:
        from jaxscale.fitting.holdout import holdout_check

        held = holdout_check(table, args.holdout_threshold, by=args.holdout_by, **common)
        numbers["holdout"] = held.summary()
    if not args.no_figures:
        numbers["files"] = _write_approach3_files(fit, boot, args.out)
    return numbers


def _likelihood(args: argparse.Namespace, table) -> dict:
    from jaxscale.fitting.likelihood import fit_likelihood, likelihood_ratio_test
    from jaxscale.laws import chinchilla

    if chosen_law(args) is not chinchilla.LAW:
        raise ValueError("--likelihood applies to the chinchilla law with free exponents")
    ml = fit_likelihood(table)
    test = likelihood_ratio_test(table, chinchilla.CHINCHILLA, fit=ml)
    return {**ml.summary(), "lr_test_vs_chinchilla": test}


def _write_approach3_files(fit, boot, out: Path) -> list[str]:
    import pandas as pd

    from jaxscale.plots.fit import isoflop_figure, residual_figure

    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "residuals.png"]
    residual_figure(fit).savefig(paths[0], dpi=110)
    if fit.law.inputs == ("N", "D"):
        paths.append(out / "isoflop.png")
        isoflop_figure(fit).savefig(paths[-1], dpi=110)
    if boot is not None:
        paths.append(out / "bootstrap_draws.csv")
        pd.DataFrame(boot.table()).to_csv(paths[-1], index=False)
    return [str(p) for p in paths]


def _allocation_method(args: argparse.Namespace, table) -> dict:
    if args.method == "approach1":
        from jaxscale.fitting.approach1 import fit_approach1

        result = fit_approach1(table, bootstrap=args.bootstrap, seed=args.seed)
    else:
        from jaxscale.fitting.approach2 import fit_approach2

        result = fit_approach2(table, bootstrap=args.bootstrap, seed=args.seed)
    numbers = {"method": args.method, **result.summary()}
    if not args.no_figures:
        from jaxscale.plots.fit import allocation_figure

        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / f"{args.method}.png"
        allocation_figure(result).savefig(path, dpi=110)
        numbers["files"] = [str(path)]
    return numbers


def _fmt(value) -> str:
    if isinstance(value, (list, tuple)) or hasattr(value, "shape"):
        return "  ".join(_fmt(float(v)) for v in value)
    if isinstance(value, float):
        return "undefined" if math.isnan(value) else f"{value:.7g}"
    return str(value)


def _value_text(value, numbers: dict) -> str:
    """A value of the table; None where Approach 1 leaves the law undefined (too few sizes on
    its frontier, counted in ``n_sizes``)."""
    if value is None and "n_sizes" in numbers:
        from jaxscale.fitting.approach1 import undefined_exponent

        return undefined_exponent(numbers["n_sizes"])
    return _fmt(value)


def _print(numbers: dict) -> None:
    se, ci, undefined = numbers.get("se", {}), numbers.get("ci95", {}), numbers.get("undefined", {})
    print(f"jaxscale fit: {numbers.get('law', '')} {numbers['method']}")
    for key, value in numbers.items():
        if isinstance(value, dict) or key in ("law", "method", "files", "slices", "note"):
            continue
        extra = f"   se {se[key]:.4g}" if key in se and not math.isnan(se[key]) else ""
        extra += f"   95% [{ci[key][0]:.6g}, {ci[key][1]:.6g}]" if key in ci and not math.isnan(ci[key][0]) else ""
        extra += f"   undefined in {undefined[key]:.0%} of resamples" if key in undefined else ""
        print(f"  {key:<22} {_value_text(value, numbers)}{extra}")
    if "note" in numbers:
        print(f"  note: {numbers['note']}")
    for section in ("allocation", "likelihood", "holdout"):
        for key, value in numbers.get(section, {}).items():
            print(f"  {section + '.' + key:<34} {value if isinstance(value, dict) else _fmt(value)}")
    if "slices" in numbers:
        print(f"  {'isoFLOP slice':<14} {'points':>6} {'sizes':>5} {'N*':>10} {'L*':>8}  status")
        for s in numbers["slices"]:
            print(f"  {s['budget']:<14.3g} {s['points']:>6} {s['sizes']:>5} {s['n_star']:>10.3g} "
                  f"{s['loss_star']:>8.4f}  {s['status']}")
    for path in numbers.get("files", []):
        print(f"wrote {path}")
