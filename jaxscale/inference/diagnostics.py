"""Is the posterior trustworthy? Convergence diagnostics and posterior predictive checks.

Convergence (Vehtari et al. 2021, "Rank-normalization, folding, and localization: an improved
R-hat"; Betancourt 2017 for divergences and E-BFMI), computed by ArviZ from the InferenceData:

- rank-normalised split R-hat, flagged above 1.01;
- bulk and tail effective sample size, flagged below 100 per chain;
- divergent transitions after warmup, flagged when there are any;
- energy Bayesian fraction of missing information per chain, flagged below 0.3.

Problems are collected as plain sentences and raised as :class:`SamplingWarning` by
:func:`warn_problems`, so callers (the CLI, notebooks) see them without parsing numbers.

Posterior predictive checks work on the log loss, the scale the models are fitted on: the
residual of each run under the posterior-median prediction, and the fraction of runs (use runs
held out of the fit for an honest check) whose observed log loss falls inside the central
``level`` posterior predictive interval.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.laws.law import Law
from jaxscale.support.atomic import atomic_path

R_HAT_MAX = 1.01
MIN_ESS_PER_CHAIN = 100
MIN_BFMI = 0.3


class SamplingWarning(UserWarning):
    """The sampler's output failed a convergence check."""


@dataclass(frozen=True)
class Diagnostics:
    """Convergence numbers of one run and the problems they reveal (empty when all pass)."""

    r_hat: dict[str, float]
    ess_bulk: dict[str, float]
    ess_tail: dict[str, float]
    divergences: int
    bfmi: tuple[float, ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems


def _per_variable(dataset, var_names: Sequence[str]) -> dict[str, float]:
    """One number per scalar variable; ``name[label]`` for each entry of a variable per group."""
    out = {}
    for name in var_names:
        values = dataset[name]
        if values.ndim == 0:
            out[name] = float(values.values)
            continue
        labels = values.coords[values.dims[0]].values
        out.update({f"{name}[{label}]": float(value) for label, value in zip(labels, values.values)})
    return out


def varies(draws: Any) -> bool:
    """Whether a variable's draws (dims chain, draw, ...) take more than one value: a quantity the
    law fixes (chinchilla-tied's a = b = 1/2) has no chains to mix, and R-hat and ESS are 0/0."""
    values = np.asarray(draws)
    return bool(np.any(values != values.reshape(-1, *values.shape[2:])[:1]))


def diagnose(idata: az.InferenceData, var_names: Sequence[str] | None = None) -> Diagnostics:
    """R-hat, bulk/tail ESS (for ``var_names``, default every posterior variable, less those whose
    draws never vary: :func:`varies`), divergences and E-BFMI of a sampled InferenceData, with a
    sentence for every threshold missed."""
    names = [n for n in var_names or idata.posterior.data_vars if varies(idata.posterior[n])]
    chains = idata.posterior.sizes["chain"]
    ess_bulk = _per_variable(az.ess(idata, var_names=names, method="bulk"), names)
    # R-hat compares chains: one chain cannot show whether chains mix (NaN, said once below)
    r_hat = _per_variable(az.rhat(idata, var_names=names), names) if chains > 1 else dict.fromkeys(ess_bulk, math.nan)
    ess_tail = _per_variable(az.ess(idata, var_names=names, method="tail"), names)
    divergences = int(idata.sample_stats["diverging"].values.sum())
    bfmi = tuple(float(v) for v in np.atleast_1d(az.bfmi(idata)))
    min_ess = MIN_ESS_PER_CHAIN * chains
    problems = [
        f"R-hat of {n} is {v:.3f} > {R_HAT_MAX}: chains have not mixed" for n, v in r_hat.items()
        if not v <= R_HAT_MAX
    ] if chains > 1 else ["R-hat is undefined with one chain: sample two or more to see whether chains mix"]
    problems += [
        f"{kind} ESS of {n} is {v:.0f} < {min_ess}: too few effective draws"
        for kind, ess in (("bulk", ess_bulk), ("tail", ess_tail)) for n, v in ess.items()
        if not v >= min_ess
    ]
    if divergences:
        problems.append(
            f"{divergences} divergent transitions: the posterior has regions the sampler cannot "
            "explore; raise target_accept or reparameterise"
        )
    problems += [
        f"E-BFMI of chain {i} is {v:.2f} < {MIN_BFMI}: poor exploration of the energy"
        for i, v in enumerate(bfmi) if not v >= MIN_BFMI
    ]
    return Diagnostics(r_hat, ess_bulk, ess_tail, divergences, bfmi, tuple(problems))


def warn_problems(diagnostics: Diagnostics) -> None:
    """Emit one :class:`SamplingWarning` per problem found by :func:`diagnose`."""
    for problem in diagnostics.problems:
        warnings.warn(problem, SamplingWarning, stacklevel=2)


def _log_loss_draws(law: Law, params, inputs: tuple[ArrayLike, ...]) -> jnp.ndarray:
    """[S, R] predicted log loss of every draw (params: pytree of [S] arrays) at every run."""
    return _vmapped_log_loss(law, params, tuple(jnp.log(jnp.asarray(x)) for x in inputs))


@partial(jax.jit, static_argnums=0)
def _vmapped_log_loss(law: Law, params, log_x: tuple[jnp.ndarray, ...]) -> jnp.ndarray:
    return jax.vmap(lambda p: law.log_loss(p, *log_x))(params)


@float64
def log_residuals(law: Law, params: NamedTuple, inputs: tuple[ArrayLike, ...], loss: ArrayLike) -> np.ndarray:
    """log L_i minus the posterior median of log Lhat at run i's ``inputs`` (e.g. (N, D)):
    positive where the law under-predicts the loss of run i."""
    mu = _log_loss_draws(law, params, inputs)
    return np.log(np.asarray(loss)) - np.median(np.asarray(mu), axis=0)


@float64
def posterior_predictive(law: Law, params: NamedTuple, sigma: ArrayLike, df: float, inputs: tuple[ArrayLike, ...],
                         seed: int = 0) -> np.ndarray:
    """[S, R] replicated log losses: log L ~ StudentT(df, log Lhat(inputs), sigma), one replicate
    per draw (params: pytree of [S] arrays, or [S, R] for parameters that differ between runs;
    sigma [S] or [S, R]) at every run."""
    mu = _log_loss_draws(law, params, inputs)
    noise = jax.random.t(jax.random.PRNGKey(seed), df, mu.shape, dtype=mu.dtype)
    return np.asarray(mu + jnp.reshape(jnp.asarray(sigma), (mu.shape[0], -1)) * noise)


@float64
def predictive_coverage(law: Law, params: NamedTuple, sigma: ArrayLike, df: float, inputs: tuple[ArrayLike, ...],
                        loss: ArrayLike, level: float = 0.95, seed: int = 0) -> float:
    """Fraction of runs whose observed log loss lies in the central ``level`` interval of the
    posterior predictive log L ~ StudentT(df, log Lhat, sigma), one replicate per draw.
    Close to ``level`` when the model is calibrated; compute it on held-out runs."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    replicas = posterior_predictive(law, params, sigma, df, inputs, seed)
    lo, hi = np.quantile(replicas, [(1 - level) / 2, (1 + level) / 2], axis=0)
    y = np.log(np.asarray(loss))
    return float(np.mean((lo <= y) & (y <= hi)))


def holdout_split(size: int, fraction: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random (fit, held-out) row indices, ``fraction`` of the rows held out."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"holdout fraction must be in (0, 1), got {fraction}")
    order = np.random.default_rng(seed).permutation(size)
    k = max(1, int(round(fraction * size)))
    return np.sort(order[k:]), np.sort(order[:k])


def save_netcdf(idata: az.InferenceData, path: str | Path) -> Path:
    """Write the InferenceData as netCDF (open it again with ``arviz.from_netcdf``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        idata.to_netcdf(str(tmp))
    return path
