"""``jaxscale curve``: fit the learning-rate annealing law to whole curves, predict other schedules."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from jaxscale.cli import _options as o

#: The laws of a schedule that curve fits (registry names).
CURVE_LAWS = ("lr-annealing", "multipower")

#: Options that fill a schedule column a table lacks (their destinations are the column names).
SCHEDULE_OPTIONS = ("schedule", "warmup_steps", "final_fraction")

#: Protocols: how runs are grouped and split, and the schedule columns a table lacks.
PROTOCOLS = {
    "sweep": {"group_by": "n_total", "split": "sweep", "defaults": {}, "run_by": None},
    "misfitting": {"group_by": "n_total,peak_lr", "split": "longest", "run_by": "model,peak_lr,total_steps,sweep",
                   "defaults": {"schedule": "cosine", "warmup_steps": 50, "final_fraction": 0.1}},
}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "curve", "fit the learning-rate annealing law to whole curves and predict other schedules",
        "Fit L(s) = L0 + A S1^-alpha - C S2 (Tissue et al. 2024) per group of runs (a model size) "
        "on every checkpoint of the runs fitted, predict the runs of other schedules or lengths, and print "
        "the relative error of their final losses. RUNS is a CSV or a jaxscale sweep directory (its runs.csv; "
        "protocol sweep). Protocols: sweep (fit the constant run and the 1x cosine run of each size, predict "
        "the other cosine lengths); misfitting (the (Mis)Fitting table: fit the longest run of each size and "
        "peak rate, predict the shorter ones). Or name the runs: --fit-runs A,B --predict C,D.",
        "jaxscale curve out/sweeps/cpu --bootstrap 200 --out curves\n"
        "jaxscale curve misfitting_scaling_results.csv --protocol misfitting --json",
    )
    o.add_runs(p)
    p.add_argument("--law", choices=CURVE_LAWS, default="lr-annealing",
                   help="the law of whole curves: lr-annealing (Tissue et al. 2024, a registry law of the schedule "
                   "areas) or multipower (Luo et al. 2025, a law of the whole schedule, fitted to every checkpoint "
                   "of the runs --fit-runs and predicting --predict) (default: %(default)s)")
    p.add_argument("--protocol", choices=tuple(PROTOCOLS), default=None,
                   help="how runs are grouped and split (default: sweep for a sweep directory)")
    p.add_argument("--fit-runs", default=None, metavar="IDS", help="comma-separated run ids to fit")
    p.add_argument("--predict", default=None, metavar="IDS", help="comma-separated run ids to predict")
    p.add_argument("--group-by", default=None, metavar="COLS",
                   help="columns whose values make one group, one law each (default: the protocol's, else n_total)")
    p.add_argument("--decay", type=o.fraction, default=0.999, metavar="LAMBDA",
                   help="decay factor lambda of the annealing momentum (Tissue et al.: 0.999) (default: %(default)s)")
    p.add_argument("--fit-decay", action="store_true",
                   help="profile lambda over 0.9 ... 0.9995 and keep the best fit per group")
    p.add_argument("--skip-warmups", type=o.nonnegative, default=None, metavar="K",
                   help="fit each run's checkpoints from K times its warmup on, 0 for every checkpoint "
                   "(default: the declared rule, TRANSIENT_WARMUPS of jaxscale.curves.lr_annealing_fit)")
    p.add_argument("--lr-source", choices=("named", "recorded"), default="named",
                   help="per-step rates from the schedule the run's columns name, or interpolated from the "
                   "learning_rate column (default: %(default)s)")
    for flag, kind, what in (("--schedule", str, "constant, cosine or wsd"),
                             ("--warmup-steps", o.at_least(0), "warmup steps"),
                             ("--final-fraction", o.fraction, "final rate / peak rate")):
        p.add_argument(flag, type=kind, default=None, help=f"{what}, for tables without that column")
    p.add_argument("--every-checkpoint", action="store_true",
                   help="also fit Chinchilla's law with annealing to every checkpoint of the tuned runs and "
                   "compare its exponents with Approach 3 on their last checkpoints")
    o.add_bootstrap(p, what="moving-block resamples of each fitted run's checkpoints behind 95%% intervals of "
                    "alpha and of every prediction, and how many predicted final losses they cover")
    o.add_seed(p)
    o.add_out(p, "the figure of the fitted and predicted curves (curves.png)")
    o.add_json(p)
    p.set_defaults(run=run)


def _ids(text: str | None) -> list[str]:
    return [r.strip() for r in text.split(",") if r.strip()] if text else []


def _plan(args: argparse.Namespace) -> tuple[str | Path, dict]:
    """The runs to read (a sweep directory's runs.csv) and the settings: the protocol's,
    overridden by explicit options."""
    sweep = Path(args.runs).is_dir() and (Path(args.runs) / "runs.csv").is_file()
    path = Path(args.runs) / "runs.csv" if sweep else args.runs
    name = args.protocol or ("sweep" if sweep else None)
    explicit = bool(args.fit_runs or args.predict)
    if explicit and not (args.fit_runs and args.predict):
        raise ValueError("--fit-runs and --predict go together")
    both = [r for r in _ids(args.predict) if r in _ids(args.fit_runs)]
    if both:
        raise ValueError(f"--predict {both[0]} is also in --fit-runs: its error would be in-sample, not a prediction")
    if name is None and not explicit:
        raise ValueError("choose --protocol sweep|misfitting, or name the runs with --fit-runs and --predict")
    protocol = dict(PROTOCOLS.get(name, {"group_by": "n_total", "split": None, "defaults": {}, "run_by": None}))
    given = _schedule_options(args)
    if given and args.lr_source == "recorded":
        raise ValueError(f"--{given[0].replace('_', '-')} names the schedule of --lr-source named; the recorded "
                         "rates need none")
    defaults = {**protocol["defaults"], **{key: getattr(args, key) for key in given}}
    args.run_by = args.run_by or protocol["run_by"]
    return path, {"group_by": _ids(args.group_by or protocol["group_by"]), "defaults": defaults,
                  "split": "explicit" if explicit else protocol["split"], "protocol": name}


def _schedule_options(args: argparse.Namespace) -> list[str]:
    """The schedule columns given as options (``--schedule``, ``--warmup-steps``, ``--final-fraction``)."""
    return [key for key in SCHEDULE_OPTIONS if getattr(args, key) is not None]


def _check_fills(args: argparse.Namespace, frame) -> None:
    """A schedule option fills a column the table lacks (or leaves empty); one the table holds in
    full would change nothing: refused, naming it."""
    for key in _schedule_options(args):
        if key in frame.columns and frame[key].notna().all():
            raise ValueError(f"--{key.replace('_', '-')}: the table's {key!r} column is complete, so the option "
                             "would change nothing (it fills tables without that column)")


def run(args: argparse.Namespace) -> int:
    o.check_out(args.out)
    from jaxscale.curves import lr_annealing_fit as lc
    from jaxscale.runs.learning_rates import run_learning_rates

    start = time.perf_counter()
    path, plan = _plan(args)
    if args.law == "multipower" and plan["split"] != "explicit":
        raise ValueError("--law multipower fits the runs --fit-runs and predicts the runs --predict: name both")
    table = o.load_columns(args, path, sizes_vary=False)  # one law per model size
    _check_fills(args, table.frame)
    if plan["split"] == "explicit":
        lc.check_named(table, _ids(args.fit_runs) + _ids(args.predict))
    split = {"sweep": lc.sweep_split, "longest": lc.longest_split}.get(plan["split"]) or lc.explicit_split(
        _ids(args.fit_runs), _ids(args.predict))
    lrs = run_learning_rates(table, source=args.lr_source, defaults=plan["defaults"])
    if args.law == "multipower":
        return _multipower(args, table, lrs, start)
    skip = lc.TRANSIENT_WARMUPS if args.skip_warmups is None else args.skip_warmups
    fits = lc.fit_groups(table, lrs, split, plan["group_by"], decay=None if args.fit_decay else args.decay,
                         skip_warmups=skip, resamples=args.bootstrap, seed=args.seed)
    groups = [f.summary() for f in fits]
    numbers = {"runs_table": str(path), "protocol": plan["protocol"], "lr_source": args.lr_source,
               "skip_warmups": skip, "bootstrap": args.bootstrap, "seed": args.seed, "groups": groups,
               "final_errors": [dict(e, **f.group) for f in fits for e in f.final_errors().to_dict("records")]}
    if args.every_checkpoint:
        from jaxscale.curves.every_checkpoint import compare_with_final

        numbers["every_checkpoint"] = compare_with_final(lc.with_areas(table, lrs, args.decay))
    numbers["seconds"] = time.perf_counter() - start
    if args.out is not None:
        from jaxscale._api._results import Figures
        from jaxscale.plots.curves import curves_figures

        numbers["files"] = [str(p) for p in Figures(curves_figures(fits)).save(args.out)]
    from jaxscale.cli._output import emit

    emit(numbers, args.json, _print)
    return 0


def _multipower(args: argparse.Namespace, table, lrs: dict, start: float) -> int:
    """``--law multipower``: the multi-power law fitted to the runs named and predicting the others."""
    from jaxscale.cli._output import emit
    from jaxscale.curves.multipower_fit import fit_multipower

    fit = fit_multipower(table, lrs, _ids(args.fit_runs), _ids(args.predict))
    numbers = {"law": "multipower", "lr_source": args.lr_source, **fit.summary(),
               "runs": fit.errors().to_dict("records")}
    numbers["seconds"] = time.perf_counter() - start
    if args.out is not None:
        from jaxscale._api._results import Figures
        from jaxscale.plots.schedules import multipower_figure

        numbers["files"] = [str(p) for p in Figures(multipower=multipower_figure(fit)).save(args.out)]
    emit(numbers, args.json, _print_multipower)
    return 0


def _print_multipower(numbers: dict) -> None:
    print(f"jaxscale curve --law multipower (rates {numbers['lr_source']}): L0 {numbers['L0']:.4g}, A {numbers['A']:.4g}, "
          f"alpha {numbers['alpha']:.4g}, B {numbers['B']:.4g}, C {numbers['C']:.4g}, beta {numbers['beta']:.4g}, "
          f"gamma {numbers['gamma']:.4g}")
    print("| run | fitted | points | mean abs. rel. error | max |\n|---|---|---|---|---|")
    for r in numbers["runs"]:
        print(f"| {r['run_id']} | {'yes' if r['fitted'] else 'no'} | {r['points']} | {_cell(r['mare'])} | "
              f"{_cell(r['max_are'])} |")
    print(f"over every predicted checkpoint ({numbers['predicted_points']}): mean {_cell(numbers['curve_mare'])}, "
          f"per-run mean {_cell(numbers['run_mare'])}, max {_cell(numbers['curve_max_are'])}")
    for path in numbers.get("files", []):
        print(f"wrote {path}")
    print(f"time: {numbers['seconds']:.1f} s")


#: The summary keys a bootstrap adds (:meth:`jaxscale.curves.lr_annealing_fit.CurveFit.summary`).
BOOTSTRAP_KEYS = ("alpha_ci95", "final_coverage", "bootstrap_refits")


def _cell(value) -> str:
    return "undefined" if value is None else f"{value:.3%}" if isinstance(value, float) else str(value)


def _print(numbers: dict) -> None:
    groups = numbers["groups"]
    keys = [k for k in groups[0] if k not in ("decay", "L0", "A", "C", "alpha", "fitted_runs", "fitted_points",
                                                 "predicted_runs", "final_mare", "final_max_are", "curve_mare",
                                                 *BOOTSTRAP_KEYS)]
    intervals = "final_coverage" in groups[0]
    print(f"jaxscale curve: {numbers['runs_table']} (protocol {numbers['protocol']}, rates {numbers['lr_source']})")
    header = [*keys, "lambda", "fitted runs", "points", "predicted", "final MARE", "final max", "curve MARE", "alpha",
              *(("alpha 95%", "finals in 95%") if intervals else ())]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for g in groups:
        cells = [*(f"{g[k]:g}" if isinstance(g[k], float) else str(g[k]) for k in keys), f"{g['decay']:g}",
                 str(len(g["fitted_runs"])), str(g["fitted_points"]), str(g["predicted_runs"]),
                 _cell(g["final_mare"]), _cell(g["final_max_are"]), _cell(g["curve_mare"]),
                 "undefined" if g["alpha"] is None else f"{g['alpha']:.3f}"]
        if intervals:
            ci = g["alpha_ci95"]
            coverage = g["final_coverage"]
            cells += ["undefined" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
                      "undefined" if coverage is None else f"{coverage:.0%}"]
        print("| " + " | ".join(cells) + " |")
    defined = [g["final_mare"] for g in groups if g["final_mare"] is not None]
    runs = sum(g["predicted_runs"] for g in groups)
    errors = [abs(e["relative_error"]) for e in numbers["final_errors"]]
    print(f"{len(groups)} groups, {runs} runs predicted; mean absolute relative error of the final loss over "
          f"runs: {_cell(sum(errors) / len(errors) if len(defined) == len(groups) else None)}")
    if intervals:
        covered = sum(e["predicted_lo"] <= e["loss"] <= e["predicted_hi"] for e in numbers["final_errors"])
        print(f"95% intervals from {numbers['bootstrap']} moving-block resamples of the fitted checkpoints cover "
              f"{covered} of {len(numbers['final_errors'])} predicted final losses (they hold the curves' noise, "
              "not a misfit of the law)")
    if "every_checkpoint" in numbers:
        for name, fit in numbers["every_checkpoint"].items():
            if "undefined" in fit:
                print(f"{name:<18} undefined ({fit['n_points']} points): {fit['undefined']}")
                continue
            low, high = fit["ci95"]["a"]
            print(f"{name:<18} alpha {fit['alpha']:.4f}  beta {fit['beta']:.4f}  a = beta/(alpha+beta) "
                  f"{fit['a']:.4f} [{low:.3f}, {high:.3f}]  E {fit['E']:.4g}  ({fit['n_points']} points)")
    for path in numbers.get("files", []):
        print(f"wrote {path}")
    print(f"time: {numbers['seconds']:.1f} s")
