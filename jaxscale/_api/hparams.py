"""``jaxscale.hparams``: the optimal peak learning rate and batch size, from a runs table or a published law.

From a table of hyperparameter grids (runs at many learning rates and batch sizes per (N, D)):
the two routes of :mod:`jaxscale.hyperparameters.per_group` (each group's optimum by a declared rule,
then Step Law's power laws through the optima, with bootstrap intervals) and
:mod:`jaxscale.hyperparameters.joint` (one law L(N, D, eta, B) whose optimum comes from the
implicit-differentiation solver), and whether they agree; optionally the joint law's posterior by NUTS
(:mod:`jaxscale.inference.joint_hyperparameters`), with intervals on eta*, B* and their exponents.
From a published law (Step Law, DeepSeek): eta* and B* of a planned run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jaxscale._api._results import COLUMNS, Figures, Result, rows
from jaxscale._api.runs import Runs, as_runs
from jaxscale.core.numerics import float64
from jaxscale.hyperparameters import per_group as hp
from jaxscale.hyperparameters import joint as jh
from jaxscale.inference import joint_hyperparameters as jp
from jaxscale.laws import deepseek_hparams, steplaw
from jaxscale.laws.law import Law
from jaxscale.support.significant import format_or_undefined

#: Published laws by name: the learning-rate law and its constants, the batch law and its constants.
PUBLISHED = {
    "steplaw": (steplaw.LR_LAW, steplaw.PUBLISHED_LR, steplaw.BATCH_LAW, steplaw.PUBLISHED_BATCH),
    "deepseek": (deepseek_hparams.LR_LAW, deepseek_hparams.PUBLISHED_LR, deepseek_hparams.BATCH_LAW,
                 deepseek_hparams.PUBLISHED_BATCH),
}


def _finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True, repr=False)
class PublishedHparams(Result):
    """eta* and B* (tokens) of a planned run under a published law (``name``), with the inputs used
    (``compute`` C = 6 N D where a law of C was given N and D: ``note`` says so). The published
    laws carry no intervals: lower and upper are undefined."""

    name: str
    lr: float
    batch: float
    inputs: dict[str, float]
    citation: str
    formulas: tuple[str, str]
    note: str = ""

    def _report(self) -> dict[str, Any]:
        return {"published": self.name, "inputs": self.inputs, "learning_rate": self.lr, "batch_tokens": self.batch,
                "interval": None, "formulas": list(self.formulas), "citation": self.citation, "note": self.note or None}

    def summary(self) -> pd.DataFrame:
        """eta* (``learning_rate``) and B* (``batch_tokens``), without intervals (NaN)."""
        return rows([{"quantity": "learning_rate", "estimate": self.lr},
                     {"quantity": "batch_tokens", "estimate": self.batch}])

    def _title(self) -> str:
        inputs = ", ".join(f"{k} = {v:.4g}" for k, v in self.inputs.items())
        return f"PublishedHparams: {self.name} at {inputs}"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        inputs = ", ".join(f"{k} = {v:.4g}" for k, v in numbers["inputs"].items())
        lines = [f"jaxscale hparams: {numbers['published']} ({numbers['citation']})", f"  {inputs}",
                 f"  peak learning rate eta* = {_shown(numbers['learning_rate'])}   ({numbers['formulas'][0]})",
                 f"  batch size B* = {_shown(numbers['batch_tokens'])} tokens   ({numbers['formulas'][1]})",
                 "  intervals: undefined (the published law gives none)"]
        return [*lines, f"  note: {numbers['note']}"] if numbers["note"] else lines


@float64
def _evaluate(law: Law, params: Any, inputs: dict[str, float]) -> float:
    return float(law.evaluate(params, *(np.float64(inputs[name]) for name in law.inputs)))


def published_hparams(name: str, *, n: float | None = None, tokens: float | None = None,
                      compute: float | None = None) -> PublishedHparams:
    """The optimal peak learning rate eta* and batch size B* (tokens) of a planned run under a
    published law: Step Law's (Li et al. 2025: eta* = 1.79 N^-0.713 D^0.307, B* = 0.58 D^0.571)
    or DeepSeek's (DeepSeek-AI 2024, Eq. 1: eta_opt = 0.3118 C^-0.125, B_opt = 0.2920 C^0.3271).
    The published laws carry no intervals.

    Args:
        name: ``"steplaw"`` (needs ``n`` and ``tokens``) or ``"deepseek"`` (``compute``, or ``n``
            and ``tokens`` for C = 6 N D).
        n: parameters of the planned run.
        tokens: its training tokens.
        compute: its training FLOPs.

    Returns:
        A :class:`PublishedHparams`.
    """
    if name not in PUBLISHED:
        raise ValueError(f"unknown published law {name!r}; choose one of {sorted(PUBLISHED)}")
    for label, value in (("n", n), ("tokens", tokens), ("compute", compute)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"--{label} must be a number > 0, got {value}")
    lr_law, lr_params, batch_law, batch_params = PUBLISHED[name]
    inputs, note = {}, ""
    if n is not None:
        inputs["N"] = n
    if tokens is not None:
        inputs["D"] = tokens
    if compute is not None:
        inputs["C"] = compute
    elif n is not None and tokens is not None and "C" in lr_law.inputs:
        inputs["C"] = 6.0 * n * tokens
        note = "C = 6 N D (DeepSeek's own C is non-embedding FLOPs per token times D)"
    read = {*lr_law.inputs, *batch_law.inputs}
    missing = sorted(read - set(inputs))
    if missing:
        flags = {"N": "--n", "D": "--tokens", "C": "--compute (or --n and --tokens)"}
        raise ValueError(f"the {name} law needs {', '.join(flags[m] for m in missing)}")
    if "C" in read and compute is not None and (n is not None or tokens is not None):
        raise ValueError(f"the {name} law reads C: give --compute, or --n and --tokens for C = 6 N D, not both")
    routes = read | ({"N", "D"} if note else set())  # N and D that gave C = 6 N D are read through it
    unread = [flag for key, flag in (("N", "--n"), ("D", "--tokens"), ("C", "--compute"))
              if key in inputs and key not in routes]
    if unread:  # printed beside the law's own inputs, they would read as the planned run's
        raise ValueError(f"the {name} law does not read {' or '.join(unread)}; its inputs are "
                         f"{', '.join(sorted(read))}")
    return PublishedHparams(name, _evaluate(lr_law, lr_params, inputs), _evaluate(batch_law, batch_params, inputs),
                            {k: float(v) for k, v in inputs.items()}, lr_law.citation,
                            (lr_law.formula, batch_law.formula), note)


@dataclass(frozen=True, repr=False)
class HparamsReport(Result):
    """Both routes on a table of hyperparameter grids: ``per_group`` (each group's optimum and the
    power laws through them, with bootstrap intervals), ``joint`` (the joint law and its optima
    by implicit differentiation; None when not fitted) and ``posterior`` (the joint law's NUTS
    posterior; None when not sampled); ``runs`` the grids read."""

    runs: hp.GridRuns
    per_group: hp.HyperparameterFit
    joint: jh.JointFit | None = None
    source: str = field(default="table")
    posterior: jp.JointPosterior | None = None

    def agreement(self) -> dict[str, dict[str, Any]]:
        """Per exponent (alpha, beta of eta*; beta_batch of B*): the joint law's, by implicit
        differentiation, the per-group route's 95% interval, and whether the first lies in the second
        (None where either is undefined)."""
        if self.joint is None:
            return {}
        out = {}
        for name, (which, field_) in jh.EXPONENTS.items():
            interval = getattr(self.per_group, which).interval(field_)
            value = _finite(self.joint.exponents[name])
            inside = None if interval is None or value is None else bool(interval[0] <= value <= interval[1])
            out[name] = {"joint": value, "per_group_ci95": None if interval is None else list(interval),
                         "inside": inside}
        return out

    def summary(self) -> pd.DataFrame:
        """One row per exponent and scale of the per-group route's laws (estimate and 95% interval,
        Step Law's published value), then the joint law's exponents (no interval), then, with a
        posterior, its exponents (posterior median and 95% interval)."""
        frame = self.per_group.summary().assign(route="per-group")
        if self.joint is not None:
            joint = [{"law": "hparam-bowl", "quantity": name, "estimate": value, "lower": math.nan, "upper": math.nan,
                      "published": None, "route": "joint"} for name, value in self.joint.exponents.items()]
            frame = pd.concat([frame, pd.DataFrame(joint)], ignore_index=True)
        if self.posterior is not None:
            rows_ = self.posterior.summary().head(len(jh.EXPONENTS)).assign(law="hparam-bowl", route="joint posterior")
            frame = pd.concat([frame, rows_], ignore_index=True)
        return frame[[*COLUMNS, *(c for c in frame.columns if c not in COLUMNS)]]

    def _report(self) -> dict[str, Any]:
        posterior = None
        if self.posterior is not None:
            posterior = {**self.posterior.to_dict(), "agreement": self.posterior.agreement(self.per_group)}
        return {"source": self.source, "runs": len(self.runs.loss), "groups": len(self.per_group.optima),
                "per_group": self.per_group.to_dict(),
                "joint": None if self.joint is None else self.joint.to_dict(), "agreement": self.agreement(),
                "posterior": posterior}

    def plot(self) -> Figures:
        """``landscapes``: each group's loss over (eta, B) with its optima; ``lr_law``: the optima and
        the fitted eta*(N, D) with its band, Step Law's published law dashed; with a posterior,
        ``agreement``: each group's own optimum and the joint law's eta*, both with 95% intervals."""
        from jaxscale.plots.hparams import agreement_figure, landscape_figure, lr_law_figure

        published = steplaw.PUBLISHED_LR if self.per_group.lr.law is steplaw.LR_LAW else None
        figures = {"landscapes": landscape_figure(self.runs, self.per_group, self.joint),
                   "lr_law": lr_law_figure(self.per_group, published)}
        if self.posterior is not None:
            figures["agreement"] = agreement_figure(self.per_group, self.posterior)
        return Figures(**figures)

    def _title(self) -> str:
        return f"HparamsReport ({self.source})"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        per_group = numbers["per_group"]
        lines = [f"jaxscale hparams: {numbers['source']}: {numbers['runs']} runs in {numbers['groups']} (N, D) groups; "
                 f"loss column {per_group['loss_column']!r}, window {per_group['window']:.0%}",
                 "| N | D | runs | window | eta* | B* (tokens) |", "|---|---|---|---|---|---|"]
        lines += [f"| {g['N']:.4g} | {g['D']:.4g} | {g['runs']} | {g['window_runs']} | "
                  f"{_shown(g['lr_opt'])}{_group_interval(g, 'lr_opt')} | "
                  f"{_shown(g['batch_opt'])}{_group_interval(g, 'batch_opt')} |" for g in per_group["groups"]]
        resamples = per_group["resamples"]
        lines += ["", "power laws through the optima ("
                  + (f"95% intervals from {resamples} resamples of runs within groups" if resamples else
                     "no intervals: no resamples") + "):"]
        for name, law in per_group["laws"].items():
            for q, v in law["params"].items():
                pub = per_group["published"].get(f"{name}.{q}")
                ci = "" if v["lower"] is None else f" [{v['lower']:.4g}, {v['upper']:.4g}]"
                lines.append(f"  {name:<14} {q:<6} {_shown(v['estimate'])}{ci}"
                             + (f"   published {pub:g}" if pub is not None else ""))
        if numbers["joint"] is not None:
            lines += _joint_text(numbers["joint"], numbers["agreement"])
        if numbers.get("posterior") is not None:
            lines += _joint_posterior_text(numbers["posterior"])
        return [*lines, *(f"wrote {path}" for path in numbers.get("files", []))]


def hparams(runs: Runs, *, lr_col: str | None = None, batch_col: str | None = None, smoothed_col: str | None = None,
            sequence_length: float = 1.0, bootstrap: int = 1000, seed: int = 0, joint: bool = True,
            posterior: bool = False, chains: int = 4, warmup: int = 1000, samples: int = 1000,
            progress: bool = True) -> HparamsReport:
    """The optimal peak learning rate and batch size, fitted to hyperparameter grids (a published
    law's at a planned run: :func:`published_hparams`).

    Step Law's forms (Li et al. 2025) are fitted: eta*(N, D) = A N^-alpha D^beta and
    B*(D) = A_B D^beta_B. From ``runs``, two routes: each (N, D) group's optimum over
    (log eta, log B) by the declared rule of :mod:`jaxscale.hyperparameters.per_group`, then the power
    laws through the optima by least squares in logs, with a bootstrap of runs within groups for
    95% intervals; and (``joint``) one law L(N, D, eta, B), a Chinchilla-type law plus a bowl in
    log eta - log eta*(N, D) and log B - log B*(D), whose optimum comes from the
    implicit-differentiation solver (:mod:`jaxscale.hyperparameters.joint`).

    Args:
        runs: hyperparameter grids (a table, CSV path, DataFrame or a function returning a table):
            runs at several peak learning rates and batch sizes per (N, D).
        lr_col: the column of the peak learning rate (default: recognised by name).
        batch_col: the column of the batch size (default: recognised by name).
        smoothed_col: the column of the smoothed loss the optimum rule reads (default: a smoothed
            loss column if there is one, else the loss).
        sequence_length: tokens per unit of the batch column (1: the column counts tokens; Step
            Law's counts sequences of 2048).
        bootstrap: resamples of runs within groups for the intervals (0: none).
        seed: the resamples' seed.
        joint: also fit the joint law L(N, D, eta, B).
        posterior: also sample the joint law's posterior by NUTS
            (:mod:`jaxscale.inference.joint_hyperparameters`; needs ``joint``): 95% intervals on eta*
            and B* at every group's (N, D) and on their exponents, and the declared comparison with
            the per-group route.
        chains, warmup, samples: NUTS chains, warmup steps and draws per chain (with ``posterior``).
        progress: NumPyro's progress bars, where they redraw in place.

    Returns:
        A :class:`HparamsReport`.
    """
    if bootstrap < 0:
        raise ValueError(f"--bootstrap must be >= 0, got {bootstrap}")
    if posterior and not joint:
        raise ValueError("the posterior is the joint law's: it cannot be sampled without the joint law")
    config = jp.nuts_config(chains=chains, warmup=warmup, samples=samples, seed=seed,
                            progress_bar=progress) if posterior else None
    grids = hp.grid_runs(as_runs(runs), lr_col=lr_col, batch_col=batch_col, smoothed_col=smoothed_col,
                         sequence_length=sequence_length)
    per_group = hp.fit_hyperparameters(grids, resamples=bootstrap, seed=seed)
    fitted = jh.fit_joint(grids, per_group) if joint else None
    sampled = jp.sample_joint(grids, fitted, config) if posterior else None
    return HparamsReport(grids, per_group, fitted, str(runs) if isinstance(runs, (str, Path)) else "table", sampled)


def _shown(value: float | None) -> str:
    return format_or_undefined(value, ".4g")


def _group_interval(group: dict[str, Any], name: str) -> str:
    lower, upper = group.get(f"{name}_lower"), group.get(f"{name}_upper")
    return "" if lower is None or upper is None else f" [{lower:.4g}, {upper:.4g}]"


def _joint_text(joint: dict[str, Any], agreement: dict[str, Any]) -> list[str]:
    """The joint law's exponents, each inside or outside the per-group interval."""
    lines = ["", f"joint law ({joint['formula']}), {joint['n_points']} runs, {joint['n_converged']} of "
             f"{joint['n_starts']} starts converged; exponents by implicit differentiation:"]
    for name, a in agreement.items():
        ci = a["per_group_ci95"]
        where = "" if a["inside"] is None else (" inside" if a["inside"] else " outside")
        lines.append(f"  {name:<11} {_shown(a['joint'])}{where} the per-group interval"
                     + ("" if ci is None else f" [{ci[0]:.4g}, {ci[1]:.4g}]"))
    return lines


def _joint_posterior_text(posterior: dict[str, Any]) -> list[str]:
    """The joint law's posterior exponents against the per-group intervals, and its eta* group by group."""
    agreement = posterior["agreement"]
    lines = ["", f"joint law's posterior (NUTS, {posterior['sampler_seconds']:.0f} s; {posterior['divergences']} "
             f"divergent transitions, largest R-hat {posterior['r_hat_max']:.3f}): medians, 95% intervals"]
    for row in posterior["posterior"]:
        if row["quantity"] in agreement["exponents"]:
            a = agreement["exponents"][row["quantity"]]
            ci = a["per_group_ci95"]
            overlap = "" if a["overlap"] is None else (" overlaps" if a["overlap"] else " does not overlap")
            lines.append(f"  {row['quantity']:<11} {_shown(row['estimate'])} [{_shown(row['lower'])}, "
                         f"{_shown(row['upper'])}]{overlap} the per-group interval"
                         + ("" if ci is None else f" [{ci[0]:.4g}, {ci[1]:.4g}]"))
    lines.append(f"  eta*(N, D) of the joint law inside the group's own 95% interval: {agreement['groups_inside']} "
                 f"of {agreement['groups_compared']} groups")
    return [*lines, *(f"  warning: {problem}" for problem in posterior["problems"])]
