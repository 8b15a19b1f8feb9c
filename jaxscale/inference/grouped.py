"""Do several datasets share a law's exponents? One law fitted to several groups of runs at once.

The model is :func:`jaxscale.inference.law_model.law_model` with
:class:`~jaxscale.inference.law_model.Groups`: the rows fall into groups (a column naming each
row's dataset), the law's vector coordinates named *shared* hold for every group, the others
(and the noise scale sigma) are drawn once per group, each from the law's own prior,
independently for every group (no pooling; :mod:`jaxscale.inference.law_model` says why). E.g.
``shared = ("alpha", "beta")``: the groups share the Chinchilla exponents while A, B, E vary
per group; ``shared = ("log_A", "log_B", "log_E")`` the reverse.

The question is answered two ways:

1. **Differences.** For every quantity that varies per group (the non-shared coordinates, the
   law parameters and the closed-form derived quantities, e.g. Chinchilla's
   a = beta / (alpha + beta), Hoffmann et al. 2022 Eq. 4), the posterior of theta_g - theta_h
   for every pair of groups: median, 95% HDI and P(theta_g - theta_h > 0). An HDI that
   excludes 0 says the two groups differ in theta.
2. **Evidence.** PSIS-LOO (:func:`jaxscale.inference.law_ranking.rank_by_loo`) of the model that
   shares the coordinates against the model that shares none (each group its own law, its own
   noise). The two differ only in the sharing constraint: a constraint the data agree with
   costs no predictive accuracy on left-out runs and saves parameters; one they reject loses
   elpd by several standard errors.

NUTS starts from the posterior mode of the grouped model (L-BFGS,
:func:`jaxscale.inference.sample.posterior_mode`), itself started from each group's Approach-3
optimum with a shared coordinate at the groups' mean.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping, NamedTuple, Sequence

import arviz as az
import jax
import numpy as np

from jaxscale.core.numerics import float64
from jaxscale.inference import law_model
from jaxscale.inference.law_ranking import Comparison, rank_by_loo
from jaxscale.inference.law_ranking import report as ranking_report
from jaxscale.inference.diagnostics import Diagnostics
from jaxscale.inference.refit import (
    approach3_start,
    check_pointwise,
    median_and_hdi,
    nuts_idata,
    parameter_draws,
    summarize,
)
from jaxscale.inference.sample import NutsConfig, posterior_mode
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law, NoisePriors
from jaxscale.tables.table import RunsTable, group_index

#: The name under which :func:`compare_sharing` reports the model that shares nothing.
NOTHING_SHARED = "share none"


@dataclass(frozen=True)
class GroupedFit:
    """Posterior draws of one law fitted to several groups of runs.

    ``draws`` maps every quantity to a [S] array, S = chains x samples: a shared one by its
    name, a per-group one as ``name[group]``; ``by_group`` holds the per-group ones as
    [S, count] arrays (columns in the order of ``labels``); ``params`` the law parameters of
    every draw and group, [S, count] (a shared coordinate repeated)."""

    law: Law
    priors: NoisePriors
    labels: tuple[str, ...]
    groups: law_model.Groups
    draws: dict[str, np.ndarray]
    by_group: dict[str, np.ndarray]
    params: NamedTuple
    idata: az.InferenceData
    diagnostics: Diagnostics
    seconds: float

    @property
    def df(self) -> float:
        return self.priors.df

    @property
    def shared(self) -> tuple[str, ...]:
        return self.groups.shared

    def row_params(self) -> tuple[NamedTuple, np.ndarray]:
        """Law parameters and sigma of every draw at every run ([S, R]: each run its group's)."""
        rows = self.groups.index
        return jax.tree.map(lambda v: v[:, rows], self.params), self.by_group["sigma"][:, rows]


def split(runs: RunsTable, column: str, shared: Sequence[str], law: Law) -> tuple[law_model.Groups, tuple[str, ...]]:
    """The groups of ``runs`` named by ``column`` with the coordinates ``shared``, and their
    names. Raises ``ValueError`` naming the column, an unknown coordinate, or a group with
    fewer runs than the law has parameters."""
    index, labels = group_index(runs, column)
    groups = law_model.Groups(index=index, count=len(labels), shared=tuple(shared))
    law_model.varying(law, groups)  # names an unknown coordinate
    if len(labels) < 2:
        raise ValueError(f"column {column!r} names one group ({labels[0]!r}); grouping needs two or more")
    sizes = np.bincount(index, minlength=len(labels))
    small = [f"{label} ({size} runs)" for label, size in zip(labels, sizes) if size < law.n_params]
    if small:
        raise ValueError(f"group {small[0]} has fewer runs than the {law.n_params} parameters of the {law.name} law")
    return groups, labels


def grouped_start(law: Law, runs: RunsTable, groups: law_model.Groups) -> tuple[NamedTuple, np.ndarray]:
    """Each group's Approach-3 optimum (law parameters, [count] each) and starting sigma."""
    starts = [approach3_start(law, runs.select(groups.index == g)) for g in range(groups.count)]
    params = jax.tree.map(lambda *v: np.array(v, np.float64), *(p for p, _ in starts))
    return params, np.array([sigma for _, sigma in starts])


def _collapse(values: np.ndarray) -> np.ndarray:
    """[..., count] values equal in every group as [...] (a shared quantity), else unchanged."""
    return values[..., 0] if np.all(values == values[..., :1]) else values


def _quantities(law: Law, groups: law_model.Groups, draws: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Law parameters and derived quantities of every draw: per group where they differ."""
    return {k: _collapse(v) for k, v in parameter_draws(law, draws, groups).items()}


def _labelled(values: Mapping[str, np.ndarray], labels: Sequence[str]) -> dict[str, np.ndarray]:
    """[S] draws by name, a per-group quantity ([S, count]) as one entry per group, name[label]."""
    out = {}
    for name, v in values.items():
        out |= {name: v} if v.ndim == 1 else {f"{name}[{label}]": v[:, g] for g, label in enumerate(labels)}
    return out


@float64
def sample_grouped(runs: RunsTable, column: str, shared: Sequence[str], law: Law = chinchilla.LAW,
                   config: NutsConfig = NutsConfig(), priors: NoisePriors | None = None,
                   warn: bool = True, start: tuple[NamedTuple, np.ndarray] | None = None) -> GroupedFit:
    """NUTS for ``law`` on ``runs`` grouped by ``column``, the coordinates ``shared`` common to
    every group, started from the posterior mode found from ``start`` (default:
    :func:`grouped_start`). Emits :class:`~jaxscale.inference.diagnostics.SamplingWarning` for
    failed checks."""
    priors = priors or law.priors
    groups, labels = split(runs, column, shared, law)
    inputs = runs.law_inputs(law.inputs)
    data = (inputs, runs.loss)
    model = partial(law_model.law_model, law, priors=priors, groups=groups)
    params, sigma = start or grouped_start(law, runs, groups)
    init = posterior_mode(model, *data, init=law_model.sites(law, params, inputs, sigma, groups))
    by_chain, idata, diag, seconds = nuts_idata(model, data, init, config, partial(_quantities, law, groups),
                                                warn, labels)
    flat = {k: v.reshape(-1, *v.shape[2:]) for k, v in by_chain.items()}
    flat |= _quantities(law, groups, flat)
    return GroupedFit(law=law, priors=priors, labels=labels, groups=groups, draws=_labelled(flat, labels),
                      by_group={k: v for k, v in flat.items() if v.ndim == 2},
                      params=law_model.params_of(law, flat, groups), idata=idata, diagnostics=diag, seconds=seconds)


def _compared(law: Law, names: Sequence[str]) -> list[str]:
    """Of ``names`` (draws, ``name`` or ``name[group]``), the vector coordinates and the derived
    quantities: not sigma, centred intercepts, or scales already given by their logs."""
    def wanted(base: str) -> bool:
        return base in law.vector_names or not (base in law.param_names or base == "sigma" or base.endswith("_c"))
    return [k for k in names if wanted(k.split("[")[0])]


def differences(fit: GroupedFit, names: Sequence[str] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Per quantity (default: every coordinate and derived quantity that varies per group) and
    pair of groups g < h: the posterior of theta_g - theta_h, its median, 95% HDI and
    P(theta_g - theta_h > 0)."""
    out = {}
    for name in names or _compared(fit.law, list(fit.by_group)):
        values = fit.by_group[name]
        out[name] = {
            f"{fit.labels[g]} - {fit.labels[h]}": {**median_and_hdi(values[:, g] - values[:, h]),
                                                    "p_positive": float(np.mean(values[:, g] > values[:, h]))}
            for g, h in itertools.combinations(range(len(fit.labels)), 2)
        }
    return out


def compare_sharing(runs: RunsTable, column: str, shared: Sequence[str], law: Law = chinchilla.LAW,
                    config: NutsConfig = NutsConfig()) -> Comparison:
    """The model sharing ``shared`` against the model sharing nothing, ranked by PSIS-LOO."""
    if not shared:
        raise ValueError("comparing sharing needs at least one shared coordinate")
    check_pointwise(config, len(runs))
    groups, _ = split(runs, column, shared, law)
    start = grouped_start(law, runs, groups)
    return rank_by_loo({f"share {','.join(shared)}": sample_grouped(runs, column, shared, law, config, start=start),
                        NOTHING_SHARED: sample_grouped(runs, column, (), law, config, start=start)})


def report(fit: GroupedFit) -> dict[str, Any]:
    """Everything ``jaxscale bayes --group-by`` prints for one grouped fit, as a JSON-ready dict."""
    return {
        "law": fit.law.name, "groups": list(fit.labels), "shared": list(fit.shared),
        "n_points": len(fit.groups.index),
        "runs_per_group": dict(zip(fit.labels, np.bincount(fit.groups.index).tolist())),
        "posterior": summarize(fit, _compared(fit.law, list(fit.draws))),
        "sigma": {label: median_and_hdi(fit.by_group["sigma"][:, g]) for g, label in enumerate(fit.labels)},
        "differences": differences(fit),
        "divergences": fit.diagnostics.divergences, "r_hat_max": max(fit.diagnostics.r_hat.values()),
        "bfmi": list(fit.diagnostics.bfmi), "problems": list(fit.diagnostics.problems),
        "sampler_seconds": fit.seconds,
    }


def sharing_report(comparison: Comparison) -> dict[str, Any]:
    """The ranking of the sharing and the unshared model, and, in the unshared model, the
    differences between groups of the coordinates the other model shares."""
    unshared = comparison.fits[NOTHING_SHARED]
    shared = next(fit for name, fit in comparison.fits.items() if name != NOTHING_SHARED).shared
    return {**ranking_report(comparison), "groups": list(unshared.labels), "shared": list(shared),
            "differences_unshared": differences(unshared, list(shared)),
            "sampler_seconds": {name: fit.seconds for name, fit in comparison.fits.items()}}
