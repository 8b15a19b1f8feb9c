"""``curve``: laws of whole learning curves fitted to the runs of some schedules and predicting
the runs of others: the learning-rate annealing law (Tissue et al. 2024) per group of runs, or the
multi-power law (Luo et al. 2025); and, beside them, Chinchilla's law with annealing fitted to
every checkpoint against Approach 3 on the last ones."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jaxscale._api._results import Figures, Result, bounds, rows
from jaxscale._api.runs import Runs, load_runs
from jaxscale.tables.table import RunsTable

if TYPE_CHECKING:
    from jaxscale.curves.lr_annealing_fit import CurveFit
    from jaxscale.curves.multipower_fit import MultiPowerFit

#: The laws of whole curves (registry names).
CURVE_LAWS = ("lr-annealing", "multipower")

#: The schedule columns that arguments of :func:`curve` fill where a table lacks them.
SCHEDULE_COLUMNS = ("schedule", "warmup_steps", "final_fraction")

#: Protocols: how runs are grouped and split, the columns naming a run, and the schedule
#: columns a table of that kind lacks.
PROTOCOLS = {
    "sweep": {"group_by": "n_total", "split": "sweep", "defaults": {}, "run_by": None},
    "misfitting": {"group_by": "n_total,peak_lr", "split": "longest", "run_by": "model,peak_lr,total_steps,sweep",
                   "defaults": {"schedule": "cosine", "warmup_steps": 50, "final_fraction": 0.1}},
}

#: The settings without a protocol: one group per model size, the runs named.
_NAMED = {"group_by": "n_total", "split": None, "defaults": {}, "run_by": None}

#: The summary keys a bootstrap adds (:meth:`jaxscale.curves.lr_annealing_fit.CurveFit.summary`).
BOOTSTRAP_KEYS = ("alpha_ci95", "final_coverage", "bootstrap_refits")


@dataclass(frozen=True, repr=False)
class CurveReport(Result):
    """Laws of whole curves fitted to some runs and predicting others.

    Attributes:
        origin: where the runs came from (the CSV read, or the table's source).
        law: ``"lr-annealing"`` or ``"multipower"``.
        protocol: the protocol that grouped and split the runs, or None (runs named).
        lr_source: ``"named"`` (rates of the schedule the columns name) or ``"recorded"``.
        fits: the annealing law's fit per group (empty for the multi-power law).
        multipower: the multi-power law's fit, or None.
        skip_warmups: the warmups after which checkpoints are fitted (annealing law).
        bootstrap: the moving-block resamples behind the intervals (0: none).
        seed: their seed.
        every_checkpoint: Chinchilla's law with annealing on every checkpoint against Approach 3
            on the last ones (:func:`jaxscale.curves.every_checkpoint.compare_with_final`), or None.
        seconds: the verb's wall time.
    """

    origin: str
    law: str
    protocol: str | None
    lr_source: str
    fits: tuple[CurveFit, ...]
    multipower: MultiPowerFit | None
    skip_warmups: float
    bootstrap: int
    seed: int
    every_checkpoint: dict[str, Any] | None
    seconds: float

    def _report(self) -> dict[str, Any]:
        if self.multipower is not None:
            return {"law": "multipower", "lr_source": self.lr_source, **self.multipower.summary(),
                    "runs": self.multipower.errors().to_dict("records"), "seconds": self.seconds}
        numbers = {"runs_table": self.origin, "protocol": self.protocol, "lr_source": self.lr_source,
                   "skip_warmups": self.skip_warmups, "bootstrap": self.bootstrap, "seed": self.seed,
                   "groups": [f.summary() for f in self.fits],
                   "final_errors": [dict(e, **f.group) for f in self.fits
                                    for e in f.final_errors().to_dict("records")]}
        numbers.update(_headline(self.fits))
        if self.every_checkpoint is not None:
            numbers["every_checkpoint"] = self.every_checkpoint
        return {**numbers, "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """Annealing law: per group (``GROUP: ...``), alpha with its 95% bootstrap interval and the
        mean absolute relative errors of the predicted final losses and curves; then the exponents
        of every-checkpoint and final-checkpoint fits (a with its interval). Multi-power law: its
        parameters, then the mean absolute relative error of each run."""
        numbers = self._numbers
        if self.multipower is not None:
            entries = [{"quantity": k, "estimate": numbers[k]} for k in self.multipower.params._fields]
            entries += [{"quantity": f"{r['run_id']}: mare", "estimate": r["mare"], "fitted": r["fitted"]}
                        for r in numbers["runs"]]
            return rows(entries)
        entries = []
        for fit, group in zip(self.fits, numbers["groups"]):
            label = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in fit.group.items())
            entries += [{"quantity": f"{label}: alpha", "estimate": group["alpha"], **bounds(group.get("alpha_ci95"))},
                        *({"quantity": f"{label}: {key}", "estimate": group[key]}
                          for key in ("final_mare", "final_max_are", "curve_mare"))]
        for name, fit in (numbers.get("every_checkpoint") or {}).items():
            if "undefined" not in fit:
                entries.append({"quantity": f"{name}: a", "estimate": fit["a"], **bounds(fit["ci95"]["a"])})
        return rows(entries)

    def plot(self) -> Figures:
        """``curves`` (the fitted and predicted curves of every group, several pages when there are
        many groups) or ``multipower`` (the multi-power law's curves)."""
        if self.multipower is not None:
            from jaxscale.plots.schedules import multipower_figure

            return Figures(multipower=multipower_figure(self.multipower))
        from jaxscale.plots.curves import curves_figures

        return Figures(curves_figures(self.fits))

    def _title(self) -> str:
        return f"CurveReport: {self.law} law on {self.origin}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        lines = _multipower_text(numbers) if self.multipower is not None else _annealing_text(numbers)
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", [])), f"time: {numbers['seconds']:.1f} s"]


def _ids(ids: str | Sequence[str] | None) -> list[str]:
    """Run ids given as a sequence or as comma-separated text."""
    if not ids:
        return []
    return [r.strip() for r in (ids.split(",") if isinstance(ids, str) else ids) if r.strip()]


def _plan(runs: Runs, law: str, protocol: str | None, fit_runs: list[str], predict: list[str],
          group_by: str | None, fills: dict[str, Any], lr_source: str) -> tuple[Runs, dict[str, Any]]:
    """The runs to read (a sweep directory's runs.csv) and the settings: the protocol's,
    overridden by explicit arguments; bad combinations raise ValueError, before any reading (the
    multi-power law may fit runs and predict none)."""
    sweep = isinstance(runs, (str, Path)) and Path(runs).is_dir() and (Path(runs) / "runs.csv").is_file()
    source = Path(runs) / "runs.csv" if sweep else runs
    name = protocol or ("sweep" if sweep else None)
    if name is not None and name not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {name!r}")
    explicit = bool(fit_runs or predict)
    if explicit and not (fit_runs and (predict or law == "multipower")):
        raise ValueError("fit_runs and predict (--fit-runs, --predict) go together")
    both = [r for r in predict if r in fit_runs]
    if both:
        raise ValueError(f"predict {both[0]} is also in fit_runs: its error would be in-sample, not a prediction")
    if name is None and not explicit:
        raise ValueError("choose protocol sweep|misfitting (--protocol), or name the runs with fit_runs and predict "
                         "(--fit-runs, --predict)")
    settings = PROTOCOLS.get(name, _NAMED)
    if fills and lr_source == "recorded":
        raise ValueError(f"{_spelled(next(iter(fills)))} names the schedule of lr_source named; the recorded rates "
                         "need none")
    return source, {"group_by": _ids(group_by or settings["group_by"]), "defaults": {**settings["defaults"], **fills},
                    "split": "explicit" if explicit else settings["split"], "protocol": name,
                    "run_by": settings["run_by"]}


def _check_fills(fills: Mapping[str, Any], frame: pd.DataFrame) -> None:
    """A schedule argument fills a column the table lacks (or leaves empty); one the table holds
    in full would change nothing: refused, naming it."""
    for key in fills:
        if key in frame.columns and frame[key].notna().all():
            raise ValueError(f"{_spelled(key)}: the table's {key!r} column is complete, so the argument would change "
                             "nothing (it fills tables without that column)")


def _spelled(argument: str) -> str:
    """An argument of :func:`curve` as Python and the command line spell it: ``warmup_steps (--warmup-steps)``."""
    return f"{argument} (--{argument.replace('_', '-')})"


def _read(source: Runs, reading: Mapping[str, Any] | None, run_by: str | None) -> RunsTable:
    """The runs (one law per group, so sizes need not vary), read with ``reading`` (the
    :func:`jaxscale.load_runs` keywords; the protocol's ``run_by`` unless given)."""
    if callable(source):
        source = source()
    if isinstance(source, RunsTable):
        if reading:
            raise ValueError(f"{', '.join(reading)} apply when reading runs; this table is read already")
        return source
    given = {k: v for k, v in (reading or {}).items() if v is not None}
    return load_runs(source, **{"run_by": run_by, **given}, sizes_vary=False)


def curve(runs: Runs, *, law: str = "lr-annealing", protocol: str | None = None,
          fit_runs: str | Sequence[str] | None = None, predict: str | Sequence[str] | None = None,
          group_by: str | None = None, decay: float = 0.999, fit_decay: bool = False,
          skip_warmups: float | None = None, lr_source: str = "named", schedule: str | None = None,
          warmup_steps: int | None = None, final_fraction: float | None = None, every_checkpoint: bool = False,
          bootstrap: int = 0, seed: int = 0, reading: Mapping[str, Any] | None = None) -> CurveReport:
    """Fit a law of whole curves to the runs of some schedules and predict the runs of others.

    The learning-rate annealing law L(s) = L0 + A S1^-alpha - C S2 (Tissue et al. 2024) is fitted
    per group of runs (a model size) to every checkpoint of the runs fitted; the multi-power law
    (Luo et al. 2025) to every checkpoint of the runs named. Protocols: ``"sweep"`` (a jaxscale
    sweep: the constant and the 1x cosine run of each size fitted, the other cosine lengths
    predicted) and ``"misfitting"`` (the (Mis)Fitting table: the longest run of each size and peak
    rate fitted, the shorter ones predicted); or name the runs with ``fit_runs`` and ``predict``.

    Args:
        runs: a runs table, a CSV path, a jaxscale sweep directory (its runs.csv; protocol sweep),
            a DataFrame, or a function returning a table.
        law: ``"lr-annealing"`` or ``"multipower"`` (which needs ``fit_runs``; ``predict`` may
            be empty, for a law fitted to be used elsewhere: :func:`jaxscale.schedule`).
        protocol: ``"sweep"`` or ``"misfitting"`` (default: sweep for a sweep directory).
        fit_runs: the runs fitted (a list, or comma-separated ids).
        predict: the runs predicted.
        group_by: comma-separated columns whose values make one group, one law each (default:
            the protocol's, else n_total).
        decay: lambda of the annealing momentum (Tissue et al.: 0.999).
        fit_decay: profile lambda over 0.9 ... 0.9995 and keep each group's best fit.
        skip_warmups: fit each run's checkpoints from this many times its warmup on, 0 for every
            checkpoint (default: TRANSIENT_WARMUPS of :mod:`jaxscale.curves.lr_annealing_fit`).
        lr_source: per-step rates from the schedule the run's columns name (``"named"``) or
            interpolated from its learning_rate column (``"recorded"``).
        schedule, warmup_steps, final_fraction: values of those columns for a table without
            them (named rates only).
        every_checkpoint: also fit Chinchilla's law with annealing to every checkpoint of the
            tuned runs and compare its exponents with Approach 3 on their last checkpoints.
        bootstrap: moving-block resamples of each fitted run's checkpoints behind 95% intervals
            of alpha and of every prediction (0: none).
        seed: the resamples' seed.
        reading: how to read ``runs`` given as a path or DataFrame: keywords of
            :func:`jaxscale.load_runs` (``n``, ``loss``, ``where``, ``run_by``, ``kind``, ...).

    Returns:
        A :class:`CurveReport`.
    """
    from jaxscale.curves import lr_annealing_fit as lc
    from jaxscale.tables.learning_rates import run_learning_rates

    start = time.perf_counter()
    if law not in CURVE_LAWS:
        raise ValueError(f"law must be one of {', '.join(CURVE_LAWS)}; got {law!r}")
    if bootstrap < 0 or bootstrap == 1:
        raise ValueError(f"bootstrap must be 0 (none) or >= 2, got {bootstrap}")
    fitted, predicted = _ids(fit_runs), _ids(predict)
    fills = {k: v for k, v in zip(SCHEDULE_COLUMNS, (schedule, warmup_steps, final_fraction)) if v is not None}
    source, plan = _plan(runs, law, protocol, fitted, predicted, group_by, fills, lr_source)
    if law == "multipower" and plan["split"] != "explicit":
        raise ValueError("law multipower fits the runs fit_runs (--fit-runs) and predicts the runs predict "
                         "(--predict): name them")
    table = _read(source, reading, plan["run_by"])
    _check_fills(fills, table.frame)
    if plan["split"] == "explicit":  # the runs named are the only ones read further: schedules included
        lc.check_named(table, fitted + predicted)
        table = table.select(np.isin(table.run_id.astype(str), fitted + predicted))
    lrs = run_learning_rates(table, source=lr_source, defaults=plan["defaults"])
    origin = str(source) if isinstance(source, (str, Path)) else table.source
    common = {"origin": origin, "law": law, "protocol": plan["protocol"], "lr_source": lr_source,
              "bootstrap": bootstrap, "seed": seed}
    if law == "multipower":
        from jaxscale.curves.multipower_fit import fit_multipower

        fit = fit_multipower(table, lrs, fitted, predicted)
        return CurveReport(**common, fits=(), multipower=fit, skip_warmups=0, every_checkpoint=None,
                           seconds=time.perf_counter() - start)
    split = {"sweep": lc.sweep_split, "longest": lc.longest_split}.get(plan["split"]) or lc.explicit_split(
        fitted, predicted)
    skip = lc.TRANSIENT_WARMUPS if skip_warmups is None else skip_warmups
    fits = lc.fit_groups(table, lrs, split, plan["group_by"], decay=None if fit_decay else decay,
                         skip_warmups=skip, resamples=bootstrap, seed=seed)
    compared = None
    if every_checkpoint:
        from jaxscale.curves.every_checkpoint import compare_with_final

        compared = compare_with_final(lc.with_areas(table, lrs, decay))
    return CurveReport(**common, fits=tuple(fits), multipower=None, skip_warmups=skip, every_checkpoint=compared,
                       seconds=time.perf_counter() - start)


def _cell(value: Any) -> str:
    return "undefined" if value is None else f"{value:.3%}" if isinstance(value, float) else str(value)


def _multipower_text(numbers: dict[str, Any]) -> list[str]:
    """The multi-power law's parameters and each run's errors."""
    lines = [f"jaxscale curve --law multipower (rates {numbers['lr_source']}): L0 {numbers['L0']:.4g}, "
             f"A {numbers['A']:.4g}, alpha {numbers['alpha']:.4g}, B {numbers['B']:.4g}, C {numbers['C']:.4g}, "
             f"beta {numbers['beta']:.4g}, gamma {numbers['gamma']:.4g}",
             "| run | fitted | points | mean abs. rel. error | max |", "|---|---|---|---|---|"]
    lines += [f"| {r['run_id']} | {'yes' if r['fitted'] else 'no'} | {r['points']} | {_cell(r['mare'])} | "
              f"{_cell(r['max_are'])} |" for r in numbers["runs"]]
    lines.append(f"over every predicted checkpoint ({numbers['predicted_points']}): mean {_cell(numbers['curve_mare'])}, "
                 f"per-run mean {_cell(numbers['run_mare'])}, max {_cell(numbers['curve_max_are'])}")
    if numbers["undetermined"]:
        lines.append(f"WARNING: {numbers['undetermined']}")
    return lines


def _headline(fits: Sequence[CurveFit]) -> dict[str, Any]:
    """The headline error, the same in text and JSON: the mean absolute relative error of the
    predicted final losses over the runs of the groups whose predictions are plausible
    (:func:`jaxscale.curves.lr_annealing_fit.implausible_prediction`), None if any of theirs is
    undefined; the implausible groups by name, with why."""
    reasons = [f.implausible() for f in fits]
    errors = [e for f, why in zip(fits, reasons) if why is None for e in f.final_errors()["relative_error"]]
    defined = bool(errors) and all(np.isfinite(errors))
    return {"final_mare": float(np.mean(np.abs(errors))) if defined else None,
            "implausible_groups": [{**f.group, "reason": why} for f, why in zip(fits, reasons) if why is not None]}


def _annealing_text(numbers: dict[str, Any]) -> list[str]:
    """A row per group (its fit and the errors of its predictions), the errors over every
    predicted run, the intervals' coverage and the every-checkpoint comparison."""
    groups = numbers["groups"]
    keys = [k for k in groups[0] if k not in ("decay", "L0", "A", "C", "alpha", "fitted_runs", "fitted_points",
                                                 "predicted_runs", "final_mare", "final_max_are", "curve_mare", "implausible",
                                                 *BOOTSTRAP_KEYS)]
    intervals = "final_coverage" in groups[0]
    header = [*keys, "lambda", "fitted runs", "points", "predicted", "final MARE", "final max", "curve MARE", "alpha",
              *(("alpha 95%", "finals in 95%") if intervals else ())]
    lines = [f"jaxscale curve: {numbers['runs_table']} (protocol {numbers['protocol']}, rates {numbers['lr_source']})",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for g in groups:
        cells = [*(f"{g[k]:g}" if isinstance(g[k], float) else str(g[k]) for k in keys), f"{g['decay']:g}",
                 str(len(g["fitted_runs"])), str(g["fitted_points"]), str(g["predicted_runs"]),
                 _cell(g["final_mare"]), _cell(g["final_max_are"]), _cell(g["curve_mare"]),
                 "undefined" if g["alpha"] is None else f"{g['alpha']:.3f}"]
        if intervals:
            ci, coverage = g["alpha_ci95"], g["final_coverage"]
            cells += ["undefined" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
                      "undefined" if coverage is None else f"{coverage:.0%}"]
        lines.append("| " + " | ".join(cells) + " |")
    runs = sum(g["predicted_runs"] for g in groups)
    for g in groups:
        if g["implausible"]:
            lines.append(f"WARNING: {', '.join(f'{k} {g[k]}' for k in keys)}: {g['implausible']}; left out of the mean below")
    lines.append(f"{len(groups)} groups, {runs} runs predicted; mean absolute relative error of the final loss over "
                 f"runs{' of the plausible groups' if numbers['implausible_groups'] else ''}: {_cell(numbers['final_mare'])}")
    if intervals:
        covered = sum(e["predicted_lo"] <= e["loss"] <= e["predicted_hi"] for e in numbers["final_errors"])
        lines.append(f"95% intervals from {numbers['bootstrap']} moving-block resamples of the fitted checkpoints "
                     f"cover {covered} of {len(numbers['final_errors'])} predicted final losses (they hold the "
                     "curves' noise, not a misfit of the law)")
    for name, fit in (numbers.get("every_checkpoint") or {}).items():
        if "undefined" in fit:
            lines.append(f"{name:<18} undefined ({fit['n_points']} points): {fit['undefined']}")
            continue
        low, high = fit["ci95"]["a"]
        lines.append(f"{name:<18} alpha {fit['alpha']:.4f}  beta {fit['beta']:.4f}  a = beta/(alpha+beta) "
                     f"{fit['a']:.4f} [{low:.3f}, {high:.3f}]  E {fit['E']:.4g}  ({fit['n_points']} points)")
    return lines
