"""What the posteriors of laws of whole curves share, whatever the law: the likelihood of each
run's log residuals, the sampler's settings and bookkeeping, and the posterior-predictive mean
and interval. The candidates of the held-out rule (:mod:`jaxscale.curves.held_out_schedules`)
built on it: the multi-power law's (:mod:`jaxscale.inference.multipower_posterior`) and Tissue et
al.'s (:mod:`jaxscale.inference.annealing_posterior`); each declares its coordinates and priors.

**Likelihood.** A curve law is fitted by the Huber loss (delta = 1e-3) of the log residuals
e_t = log L_t - log Lhat_t. Its robust counterpart with a scale of its own is a Student-t (the
likelihood of :mod:`jaxscale.inference.law_model`, df = :data:`DF`), but the residuals of one curve
are not independent: a law that misses a curve misses it for thousands of steps, so neighbouring
checkpoints' residuals move together, and an independent likelihood would count each curve's few
effective observations hundreds of times (a posterior as narrow as the optimum's ridge allows,
whose mean is the optimum). The residuals of each run, in step order, are therefore an AR(1)
series with Student-t innovations:

    e_1 ~ StudentT(df, 0, sigma / sqrt(1 - rho^2)),   e_t - rho e_{t-1} ~ StudentT(df, 0, sigma),

sigma ~ HalfNormal(:data:`SIGMA_PRIOR`) (residuals of 1e-3 are typical), rho ~ Uniform(-1, 1);
rho = 0 is the independent Student-t (:func:`residual_likelihood`).

**Sampler.** NUTS by :func:`jaxscale.inference.sample.run_nuts` (dense mass matrix): :data:`CONFIG`,
4 chains of 250 warmup and 250 draws, target acceptance 0.9, trees of at most 255 leapfrog steps
(depth 8), seed 0, each chain started (with the sampler's jitter) from a fit of the law to the same
runs, sigma and rho from its residuals (:func:`noise_start`). The length is a bound on cost (the
rule samples four posteriors per call), not a sign of mixing: the diagnostics say how well each
mixed. R-hat, effective sample sizes and divergences are checked
(:func:`jaxscale.inference.diagnostics.diagnose`), warned about, and kept with every posterior
(:meth:`CurvePosterior.summary`).

**Prediction.** The mean is taken over :data:`PREDICTIVE_DRAWS` draws, evenly thinned
(:func:`thinned`); the predictive interval at level q is the central q of Lhat_d exp(e_d), e_d a
draw of the stationary marginal of the residual, StudentT(df, 0, sigma_d / sqrt(1 - rho_d^2))
(seed :data:`NOISE_SEED`, one stream per run predicted: :func:`predictive_columns`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pandas as pd

from jaxscale.curves import held_out_schedules
from jaxscale.inference import diagnostics
from jaxscale.inference.sample import NutsConfig, run_nuts
from jaxscale.tables import schema as rs

#: Degrees of freedom of the residuals' Student-t innovations, and the HalfNormal scale of sigma.
DF, SIGMA_PRIOR = 4.0, 0.01
#: The sampler's settings.
CONFIG = NutsConfig(chains=4, warmup=250, samples=250, seed=0, target_accept=0.9, max_tree_depth=8,
                    progress_bar=False)
#: Draws the posterior-predictive mean and interval are taken over (thinned evenly).
PREDICTIVE_DRAWS = 200
#: Seed of the residual draws of the predictive intervals.
NOISE_SEED = 1


def ar1_log_density(residuals: jnp.ndarray, sigma: jnp.ndarray, rho: jnp.ndarray, df: float = DF) -> jnp.ndarray:
    """log p(e_1..e_K) of one run's residuals in step order: e_1 ~ StudentT(df, 0, sigma /
    sqrt(1 - rho^2)), e_t - rho e_{t-1} ~ StudentT(df, 0, sigma)."""
    first = dist.StudentT(df, 0.0, sigma / jnp.sqrt(1 - rho**2)).log_prob(residuals[0])
    return first + jnp.sum(dist.StudentT(df, 0.0, sigma).log_prob(residuals[1:] - rho * residuals[:-1]))


def residual_likelihood(residuals: Sequence[jnp.ndarray]) -> None:
    """Inside a NumPyro model: sigma and rho from their priors, and the factor ``curves``, the sum
    over runs of :func:`ar1_log_density` of each run's log residuals (in step order)."""
    sigma = numpyro.sample("sigma", dist.HalfNormal(SIGMA_PRIOR))
    rho = numpyro.sample("rho", dist.Uniform(-1.0, 1.0))
    numpyro.factor("curves", sum(ar1_log_density(e, sigma, rho) for e in residuals))


def noise_start(residuals: np.ndarray) -> dict[str, float]:
    """Initial sigma and rho from a fit's log residuals (pooled, in step order within each run):
    rho their lag-1 correlation (clipped to +-0.9), sigma their SD times sqrt(1 - rho^2)."""
    e = np.asarray(residuals, np.float64)
    rho = float(np.clip(np.corrcoef(e[1:], e[:-1])[0, 1], -0.9, 0.9))
    return {"sigma": float(np.std(e) * np.sqrt(1 - rho**2)), "rho": rho}


@dataclass(frozen=True)
class CurvePosterior:
    """Draws of the posterior (``theta`` [draws, coordinates] in the law's vector coordinates,
    ``sigma``, ``rho``), pooled over chains, the sampler's ``diagnostics``, the runs it was given
    and its seconds."""

    theta: np.ndarray
    sigma: np.ndarray
    rho: np.ndarray
    diagnostics: diagnostics.Diagnostics
    fitted: tuple[str, ...]
    seconds: float

    def summary(self) -> dict[str, Any]:
        """The runs, divergences, the largest R-hat, the smallest bulk ESS and the problems found."""
        return {"fitted_runs": list(self.fitted), "divergences": self.diagnostics.divergences,
                "max_r_hat": max(self.diagnostics.r_hat.values()), "min_ess_bulk": min(self.diagnostics.ess_bulk.values()),
                "problems": list(self.diagnostics.problems), "seconds": self.seconds}


def sample(model: Callable[..., None], *args: Any, init: Mapping[str, float], coordinates: Sequence[str],
           fitted: Sequence[str], config: NutsConfig = CONFIG, started: float | None = None) -> CurvePosterior:
    """NUTS on ``model(*args)`` from ``init``, its diagnostics checked and warned about
    (:class:`~jaxscale.inference.diagnostics.SamplingWarning`), the draws of the sites
    ``coordinates`` stacked in that order.

    Args:
        model: a NumPyro model that calls :func:`residual_likelihood`.
        args: its arguments.
        init: a value of every sample site.
        coordinates: the sites of the law's vector, in its order.
        fitted: the runs the posterior is given.
        config: the sampler's settings.
        started: the ``time.perf_counter()`` the posterior's seconds count from (default: now).

    Returns:
        A :class:`CurvePosterior`.
    """
    t0 = time.perf_counter() if started is None else started
    mcmc = run_nuts(model, *args, init=init, config=config)
    diag = diagnostics.diagnose(az.from_numpyro(mcmc, log_likelihood=False))
    diagnostics.warn_problems(diag)
    samples = {k: np.asarray(v, np.float64) for k, v in mcmc.get_samples().items()}
    theta = np.stack([samples[name] for name in coordinates], -1)
    return CurvePosterior(theta, samples["sigma"], samples["rho"], diag, tuple(fitted), time.perf_counter() - t0)


def thinned(count: int, draws: int = PREDICTIVE_DRAWS) -> np.ndarray:
    """Indices of ``draws`` of ``count`` draws, evenly spaced (all of them if fewer)."""
    return np.unique(np.linspace(0, count - 1, min(draws, count)).round().astype(int))


def predictive_columns(losses: np.ndarray, posterior: CurvePosterior, keep: np.ndarray, stream: int,
                       level: float = held_out_schedules.LEVEL) -> dict[str, np.ndarray]:
    """The posterior-predictive mean of one run's checkpoints and the central ``level`` interval of
    an observed loss there (module docstring).

    Args:
        losses: [draws, checkpoints], the law's loss of each kept draw.
        posterior: the draws.
        keep: the indices of the kept draws (:func:`thinned`).
        stream: which stream of residual draws (one per run predicted).
        level: the probability of the interval.

    Returns:
        predicted, posterior_lo, posterior_hi: one value per checkpoint.
    """
    scale = posterior.sigma[keep] / np.sqrt(1 - posterior.rho[keep] ** 2)
    noise = np.asarray(jax.random.t(jax.random.fold_in(jax.random.PRNGKey(NOISE_SEED), stream), DF, losses.shape))
    observed = losses * np.exp(scale[:, None] * noise)
    lower, upper = np.quantile(observed, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return {"predicted": losses.mean(axis=0), "posterior_lo": lower, "posterior_hi": upper}


def posterior_coverage(predictions: pd.DataFrame) -> float:
    """The fraction of observed losses inside their posterior-predictive intervals."""
    return held_out_schedules.coverage(predictions[rs.LOSS], predictions["posterior_lo"], predictions["posterior_hi"])
