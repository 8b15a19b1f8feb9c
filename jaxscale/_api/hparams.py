"""``jaxscale.hparams``: the optimal peak learning rate and batch size, from a runs table or a published law.

From a table of hyperparameter grids (runs at many learning rates and batch sizes per (N, D)):
the two routes of :mod:`jaxscale.fitting.hyperparameters` (each group's optimum by a declared rule,
then Step Law's power laws through the optima, with bootstrap intervals) and
:mod:`jaxscale.fitting.joint_hyperparameters` (one law L(N, D, eta, B) whose optimum comes from the
implicit-differentiation solver), and whether they agree. From a published law (Step Law, DeepSeek):
eta* and B* of a planned run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from jaxscale.core.numerics import float64
from jaxscale.fitting import hyperparameters as hp
from jaxscale.fitting import joint_hyperparameters as jh
from jaxscale.laws import deepseek_hparams, steplaw
from jaxscale.laws.law import Law
from jaxscale.runs.table import RunsTable, load_runs

#: Published laws by name: the learning-rate law and its constants, the batch law and its constants.
PUBLISHED = {
    "steplaw": (steplaw.LR_LAW, steplaw.PUBLISHED_LR, steplaw.BATCH_LAW, steplaw.PUBLISHED_BATCH),
    "deepseek": (deepseek_hparams.LR_LAW, deepseek_hparams.PUBLISHED_LR, deepseek_hparams.BATCH_LAW,
                 deepseek_hparams.PUBLISHED_BATCH),
}
#: The joint law's exponents and the per-group route's parameters they correspond to.
MATCHED = {"alpha": ("lr", "alpha"), "beta": ("lr", "beta"), "beta_batch": ("batch", "beta")}


def _finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class PublishedHparams:
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

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame([{"quantity": "learning_rate", "estimate": self.lr, "lower": math.nan, "upper": math.nan},
                             {"quantity": "batch_tokens", "estimate": self.batch, "lower": math.nan,
                              "upper": math.nan}])

    def to_dict(self) -> dict[str, Any]:
        return {"published": self.name, "inputs": self.inputs, "learning_rate": self.lr, "batch_tokens": self.batch,
                "interval": None, "formulas": list(self.formulas), "citation": self.citation, "note": self.note or None}

    def plot(self) -> dict[str, Figure]:
        return {}

    def __repr__(self) -> str:
        return f"{self.name}: eta* = {self.lr:.4g}, B* = {self.batch:.4g} tokens ({self.inputs})"


@float64
def _evaluate(law: Law, params: Any, inputs: dict[str, float]) -> float:
    return float(law.evaluate(params, *(np.float64(inputs[name]) for name in law.inputs)))


def published_hparams(name: str, *, n: float | None = None, tokens: float | None = None,
                      compute: float | None = None) -> PublishedHparams:
    """eta* and B* of the published law ``name`` (``steplaw``: needs ``n`` and ``tokens``;
    ``deepseek``: ``compute`` in FLOPs, or ``n`` and ``tokens`` for C = 6 N D)."""
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
    missing = sorted({*lr_law.inputs, *batch_law.inputs} - set(inputs))
    if missing:
        flags = {"N": "--n", "D": "--tokens", "C": "--compute (or --n and --tokens)"}
        raise ValueError(f"the {name} law needs {', '.join(flags[m] for m in missing)}")
    return PublishedHparams(name, _evaluate(lr_law, lr_params, inputs), _evaluate(batch_law, batch_params, inputs),
                            {k: float(v) for k, v in inputs.items()}, lr_law.citation,
                            (lr_law.formula, batch_law.formula), note)


@dataclass(frozen=True)
class HparamsReport:
    """Both routes on a table of hyperparameter grids: ``per_group`` (each group's optimum and the
    power laws through them, with bootstrap intervals) and ``joint`` (the joint law and its optima
    by implicit differentiation; None when not fitted); ``runs`` the grids read."""

    runs: hp.GridRuns
    per_group: hp.HyperparameterFit
    joint: jh.JointFit | None = None
    source: str = field(default="table")

    def agreement(self) -> dict[str, dict[str, Any]]:
        """Per exponent (alpha, beta of eta*; beta_batch of B*): the joint law's, by implicit
        differentiation, the per-group route's 95% interval, and whether the first lies in the second
        (None where either is undefined)."""
        if self.joint is None:
            return {}
        out = {}
        for name, (which, field_) in MATCHED.items():
            interval = getattr(self.per_group, which).interval(field_)
            value = _finite(self.joint.exponents[name])
            inside = None if interval is None or value is None else bool(interval[0] <= value <= interval[1])
            out[name] = {"joint": value, "per_group_ci95": None if interval is None else list(interval),
                         "inside": inside}
        return out

    def summary(self) -> pd.DataFrame:
        """One row per exponent and scale of the per-group route's laws (estimate and 95% interval,
        Step Law's published value), then the joint law's exponents (no interval)."""
        frame = self.per_group.summary().assign(route="per-group")
        if self.joint is not None:
            joint = [{"law": "hparam-bowl", "quantity": name, "estimate": value, "lower": math.nan, "upper": math.nan,
                      "published": None, "route": "joint"} for name, value in self.joint.exponents.items()]
            frame = pd.concat([frame, pd.DataFrame(joint)], ignore_index=True)
        columns = ["quantity", "estimate", "lower", "upper"]
        return frame[[*columns, *(c for c in frame.columns if c not in columns)]]

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "runs": len(self.runs.loss), "groups": len(self.per_group.optima),
                "per_group": self.per_group.to_dict(),
                "joint": None if self.joint is None else self.joint.to_dict(), "agreement": self.agreement()}

    def plot(self) -> dict[str, Figure]:
        """``landscapes``: each group's loss over (eta, B) with its optima; ``lr_law``: the optima and
        the fitted eta*(N, D) with its band, Step Law's published law dashed."""
        from jaxscale.plots.hparams import landscape_figure, lr_law_figure

        published = steplaw.PUBLISHED_LR if self.per_group.lr.law is steplaw.LR_LAW else None
        return {"landscapes": landscape_figure(self.runs, self.per_group, self.joint),
                "lr_law": lr_law_figure(self.per_group, published)}

    def __repr__(self) -> str:
        return f"HparamsReport ({self.source})\n{self.summary().to_string(index=False)}"

    def _repr_html_(self) -> str:
        return f"<p><b>HparamsReport</b> ({self.source})</p>{self.summary().to_html(index=False, na_rep='')}"


def _table(runs: str | Path | pd.DataFrame | RunsTable) -> RunsTable:
    return runs if isinstance(runs, RunsTable) else load_runs(runs)


def hparams(runs: str | Path | pd.DataFrame | RunsTable | None = None, *, published: str | None = None,
            n: float | None = None, tokens: float | None = None, compute: float | None = None,
            lr_col: str | None = None, batch_col: str | None = None, smoothed_col: str | None = None,
            sequence_length: float = 1.0, bootstrap: int = 1000, seed: int = 0,
            joint: bool = True) -> HparamsReport | PublishedHparams:
    """The optimal learning rate and batch size.

    With ``runs`` (a CSV path, DataFrame or :class:`RunsTable` of hyperparameter grids): each (N, D)
    group's optimum and Step Law's power laws through them with ``bootstrap`` resamples for 95%
    intervals, and (``joint``) the joint law L(N, D, eta, B) with its optima by implicit
    differentiation. The columns of the peak learning rate, the batch size (in sequences of
    ``sequence_length`` tokens, or tokens) and the smoothed loss are found by name or given.

    With ``published`` (``"steplaw"`` or ``"deepseek"``): eta* and B* of a run of ``n`` parameters
    on ``tokens`` tokens, or of ``compute`` FLOPs.
    """
    if published is not None:
        if runs is not None:
            raise ValueError("give a runs table or --published, not both")
        return published_hparams(published, n=n, tokens=tokens, compute=compute)
    if runs is None:
        raise ValueError("give a runs table of hyperparameter grids, or --published steplaw|deepseek")
    grids = hp.grid_runs(_table(runs), lr_col=lr_col, batch_col=batch_col, smoothed_col=smoothed_col,
                         sequence_length=sequence_length)
    per_group = hp.fit_hyperparameters(grids, resamples=bootstrap, seed=seed)
    fitted = jh.fit_joint(grids, per_group) if joint else None
    return HparamsReport(grids, per_group, fitted, str(runs) if isinstance(runs, (str, Path)) else "table")
