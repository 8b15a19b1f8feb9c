"""The multi-power law's posterior given whole curves, and its posterior-predictive mean: a
candidate of the fit rule across schedules (:mod:`jaxscale.curves.held_out_schedules`).

The law (:mod:`jaxscale.laws.multipower`) is fitted to every checkpoint of some runs; its exact
optimum wanders along a ridge (C against gamma, with beta) that the fitted runs barely determine.
Instead of one point of that ridge, this candidate predicts with the mean over the posterior,

    Lhat(t) = E[ L(t; theta) | fitted curves ],

estimated by the mean of L(t; theta_d) over draws theta_d of NUTS.

**Coordinates and priors.** theta = (log L0, log A, alpha, log B, log C, beta, gamma), the fit's
vector (:func:`jaxscale.laws.multipower.to_vector`). Each coordinate has a Normal prior, the
exponents truncated to > 0 (as every law's in :mod:`jaxscale.inference.law_model`), centred where
the start grid of :func:`jaxscale.curves.multipower_fit.starts` is centred (geometric means of its
two values: L0 at 0.87 of the lowest loss, A at 0.55, alpha at 0.45, B at 0.45 over the highest
rate that drops) and, for the three coordinates the held-out rule penalises (log C, beta, gamma),
on the penalty's centre (0, 0.5, 0.5: :data:`jaxscale.curves.held_out_schedules.CENTRE`), with the
standard deviations of :data:`PRIOR_SD`: 0.5 for log L0 (L0 within a factor 1.6 of its centre at
one SD), 1 for log A, 0.5 for the exponents alpha, beta and gamma, 1.5 for log B and log C (a
factor 4.5). Not a penalty in disguise: the penalty the rule chose before this candidate,
lambda = 1e-3 on a Huber objective of residuals ~1e-3, is a Gaussian prior of SD
sqrt(sigma^2 / (2 lambda)) ~ 0.02 on the same coordinates, 25 to 75 times narrower.

**Likelihood.** The fit's objective is the Huber loss (delta = 1e-3) of the log residuals
e_t = log L_t - log Lhat_t. Its robust counterpart with a scale of its own is a Student-t (the
likelihood of :mod:`jaxscale.inference.law_model`, df = :data:`DF`), but the residuals of one curve
are not independent: a law that misses a curve misses it for thousands of steps, so neighbouring
checkpoints' residuals move together, and an independent likelihood would count each curve's few
effective observations hundreds of times (a posterior as narrow as the optimum's ridge allows,
whose mean is the optimum). The residuals of each run, in step order, are therefore an AR(1)
series with Student-t innovations:

    e_1 ~ StudentT(df, 0, sigma / sqrt(1 - rho^2)),   e_t - rho e_{t-1} ~ StudentT(df, 0, sigma),

sigma ~ HalfNormal(:data:`SIGMA_PRIOR`) (residuals of 1e-3 are typical), rho ~ Uniform(-1, 1);
rho = 0 is the independent Student-t. As in the fit, each run's drops are merged in blocks of
:data:`jaxscale.curves.multipower_fit.FIT_BLOCK` steps (at most 2.6e-5 of L on the fitted runs);
predictions are exact.

**Sampler.** NUTS by :func:`jaxscale.inference.sample.run_nuts` (dense mass matrix): :data:`CONFIG`,
4 chains of 250 warmup and 250 draws, target acceptance 0.9, trees of at most 255 leapfrog steps
(depth 8; held out on the 25M curves, constant_24000 left out, a chain averaged 57), seed 0, each
chain started (with the sampler's jitter) from the fit of the rule's heaviest penalty to the same
runs (the candidate nearest the priors' centre; where the posterior's bulk is, warmup finds). The
length is a bound on cost (the rule samples four posteriors per call), not a sign of mixing: the
diagnostics say how well each mixed. R-hat, effective sample
sizes and divergences are checked (:func:`jaxscale.inference.diagnostics.diagnose`), warned
about, and kept with every posterior (:attr:`PosteriorMean.history`).

**Prediction.** The mean is taken over :data:`PREDICTIVE_DRAWS` draws, evenly thinned from the
1,000; the predictive interval at level q is the central q of Lhat_d exp(e_d), e_d a draw of the
stationary marginal of the residual, StudentT(df, 0, sigma_d / sqrt(1 - rho_d^2)) (seed 1).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pandas as pd

from jaxscale.core.numerics import float64
from jaxscale.curves import held_out_schedules, multipower_fit
from jaxscale.inference import diagnostics
from jaxscale.inference.sample import NutsConfig, run_nuts
from jaxscale.laws import multipower
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable

#: Names of the sample sites of the law's seven coordinates, in the vector's order.
COORDINATES = ("log_L0", "log_A", "alpha", "log_B", "log_C", "beta", "gamma")
#: Prior standard deviations of the seven coordinates (module docstring).
PRIOR_SD = (0.5, 1.0, 0.5, 1.5, 1.5, 0.5, 0.5)
#: Degrees of freedom of the residuals' Student-t innovations, and the HalfNormal scale of sigma.
DF, SIGMA_PRIOR = 4.0, 0.01
#: The sampler's settings.
CONFIG = NutsConfig(chains=4, warmup=250, samples=250, seed=0, target_accept=0.9, max_tree_depth=8,
                    progress_bar=False)
#: Draws the posterior-predictive mean and interval are taken over (thinned evenly).
PREDICTIVE_DRAWS = 200
#: Seed of the residual draws of the predictive intervals.
NOISE_SEED = 1


def prior_centre(data: multipower_fit.CurveData) -> np.ndarray:
    """The priors' centres in vector coordinates (module docstring): the start grid's centre of
    :func:`jaxscale.curves.multipower_fit.starts`, (log C, beta, gamma) at the rule's penalty centre."""
    grid = multipower_fit.starts(data)
    centre = 0.5 * (grid.min(axis=0) + grid.max(axis=0))
    centre[list(held_out_schedules.PENALISED)] = held_out_schedules.CENTRE
    return centre


def ar1_log_density(residuals: jnp.ndarray, sigma: jnp.ndarray, rho: jnp.ndarray, df: float = DF) -> jnp.ndarray:
    """log p(e_1..e_K) of one run's residuals in step order: e_1 ~ StudentT(df, 0, sigma /
    sqrt(1 - rho^2)), e_t - rho e_{t-1} ~ StudentT(df, 0, sigma)."""
    first = dist.StudentT(df, 0.0, sigma / jnp.sqrt(1 - rho**2)).log_prob(residuals[0])
    return first + jnp.sum(dist.StudentT(df, 0.0, sigma).log_prob(residuals[1:] - rho * residuals[:-1]))


def curve_model(data: multipower_fit.CurveData, centre: jnp.ndarray) -> None:
    """The model of the module docstring: the seven coordinates (sites :data:`COORDINATES`),
    sigma and rho from their priors, every run's log residuals an AR(1) Student-t series."""
    coordinates = []
    for name, log, loc, sd in zip(COORDINATES, multipower.LOG_SCALE, centre, PRIOR_SD):
        prior = dist.Normal(loc, sd) if log else dist.TruncatedNormal(loc, sd, low=0.0)
        coordinates.append(numpyro.sample(name, prior))
    params = multipower.from_vector(jnp.stack(coordinates))
    sigma = numpyro.sample("sigma", dist.HalfNormal(SIGMA_PRIOR))
    rho = numpyro.sample("rho", dist.Uniform(-1.0, 1.0))
    numpyro.factor("curves", sum(ar1_log_density(jnp.log(run.loss) - jnp.log(multipower.loss(params, run.curve)),
                                                 sigma, rho) for run in data))


@dataclass(frozen=True)
class CurvePosterior:
    """Draws of the posterior (``theta`` [draws, 7] in vector coordinates, ``sigma``, ``rho``),
    pooled over chains, the sampler's ``diagnostics``, the runs it was given and its seconds."""

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


def _start(fit: multipower_fit.MultiPowerFit) -> dict[str, float]:
    """Initial values of every site: the fit's coordinates, sigma and rho of its residuals."""
    theta = np.asarray(multipower.to_vector(multipower.MultiPowerParams(*map(np.float64, fit.params))))
    frame = fit.predictions[fit.predictions["fitted"]]
    e = np.log(frame[rs.LOSS].to_numpy()) - np.log(frame["predicted"].to_numpy())
    rho = float(np.clip(np.corrcoef(e[1:], e[:-1])[0, 1], -0.9, 0.9))
    return {**dict(zip(COORDINATES, map(float, theta))), "sigma": float(np.std(e) * np.sqrt(1 - rho**2)), "rho": rho}


@float64
def sample_posterior(table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
                     config: NutsConfig = CONFIG) -> CurvePosterior:
    """NUTS on :func:`curve_model` given every checkpoint of the runs ``fitted``.

    Args:
        table: the runs' checkpoints.
        lrs: each run's rates eta_1..eta_T.
        fitted: the runs the posterior is given (at least one).
        config: the sampler's settings.

    Returns:
        A :class:`CurvePosterior`; its problems are also warned about
        (:class:`~jaxscale.inference.diagnostics.SamplingWarning`).
    """
    t0 = time.perf_counter()
    start = multipower_fit.fit_multipower(table, lrs, fitted, [],
                                          penalty=held_out_schedules.drop_penalty(max(held_out_schedules.PENALTIES)))
    data = jax.tree.map(jnp.asarray, multipower_fit.curve_data(table, lrs, list(fitted), multipower_fit.FIT_BLOCK))
    centre = jnp.asarray(prior_centre(data))
    mcmc = run_nuts(curve_model, data, centre, init=_start(start), config=config)
    idata = az.from_numpyro(mcmc, log_likelihood=False)
    diag = diagnostics.diagnose(idata)
    diagnostics.warn_problems(diag)
    samples = {k: np.asarray(v, np.float64) for k, v in mcmc.get_samples().items()}
    theta = np.stack([samples[name] for name in COORDINATES], -1)
    return CurvePosterior(theta, samples["sigma"], samples["rho"], diag, tuple(fitted), time.perf_counter() - t0)


def thinned(count: int, draws: int = PREDICTIVE_DRAWS) -> np.ndarray:
    """Indices of ``draws`` of ``count`` draws, evenly spaced (all of them if fewer)."""
    return np.unique(np.linspace(0, count - 1, min(draws, count)).round().astype(int))


@float64
def predictive(posterior: CurvePosterior, table: RunsTable, lrs: Mapping[str, np.ndarray], runs: Sequence[str],
               level: float = held_out_schedules.LEVEL, draws: int = PREDICTIVE_DRAWS) -> pd.DataFrame:
    """The posterior-predictive mean of L at every checkpoint of ``runs`` (column predicted) and
    the central ``level`` interval of an observed loss there (posterior_lo, posterior_hi), over
    ``draws`` thinned draws (module docstring).

    Args:
        posterior: the draws.
        table: the runs' checkpoints.
        lrs: each run's rates eta_1..eta_T.
        runs: the runs predicted.
        level: the probability of the predictive interval.
        draws: how many draws the mean and interval are taken over.

    Returns:
        run_id, step, loss, predicted, posterior_lo, posterior_hi: one row per checkpoint.
    """
    keep = thinned(len(posterior.theta), draws)
    theta = jnp.asarray(posterior.theta[keep])
    scale = jnp.asarray(posterior.sigma[keep] / np.sqrt(1 - posterior.rho[keep] ** 2))
    frames = []
    for index, (run, d) in enumerate(zip(runs, multipower_fit.curve_data(table, lrs, list(runs)))):
        curve = jax.tree.map(jnp.asarray, d.curve)
        losses = np.asarray(jax.lax.map(lambda t: multipower.loss(multipower.from_vector(t), curve), theta))
        noise = jax.random.t(jax.random.fold_in(jax.random.PRNGKey(NOISE_SEED), index), DF, losses.shape)
        observed = losses * np.exp(np.asarray(scale)[:, None] * np.asarray(noise))
        lower, upper = np.quantile(observed, [(1 - level) / 2, (1 + level) / 2], axis=0)
        frames.append(pd.DataFrame({rs.RUN_ID: run, rs.STEP: np.asarray(d.curve.step), rs.LOSS: np.asarray(d.loss),
                                    "predicted": losses.mean(axis=0), "posterior_lo": lower, "posterior_hi": upper}))
    return pd.concat(frames, ignore_index=True)


@dataclass
class PosteriorMean:
    """The candidate of :mod:`jaxscale.curves.held_out_schedules`: the posterior-predictive mean
    of the multi-power law (:data:`CONFIG`), fitted to some runs, predicting others.
    ``history`` keeps the summary (:meth:`CurvePosterior.summary`) of every posterior sampled."""

    config: NutsConfig = CONFIG
    label: str = "posterior mean"
    history: list[dict[str, Any]] = field(default_factory=list)

    def fit(self, table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
            predicted: Sequence[str]) -> multipower_fit.MultiPowerFit:
        """The posterior given ``fitted``, its predictive mean at every checkpoint of the fitted and
        the ``predicted`` runs; ``params`` the posterior median of each coordinate, ``objective``
        the fit's objective there, ``rule`` the sampler's summary.

        Args:
            table: the runs' checkpoints.
            lrs: each run's rates eta_1..eta_T.
            fitted: the runs the posterior is given.
            predicted: the runs predicted.

        Returns:
            A :class:`~jaxscale.curves.multipower_fit.MultiPowerFit`.
        """
        t0 = time.perf_counter()
        posterior = sample_posterior(table, lrs, fitted, self.config)
        frames = [predictive(posterior, table, lrs, fitted).assign(fitted=True)]
        if predicted:
            frames.append(predictive(posterior, table, lrs, predicted).assign(fitted=False))
        median = np.median(posterior.theta, axis=0)
        with jax.enable_x64(True):
            data = jax.tree.map(jnp.asarray, multipower_fit.curve_data(table, lrs, list(fitted), multipower_fit.FIT_BLOCK))
            value = float(multipower_fit.objective(jnp.asarray(median), data))
            params = jax.tree.map(float, multipower.from_vector(jnp.asarray(median)))
        self.history.append(posterior.summary())
        draws = len(posterior.theta)  # a posterior has draws where a fit has starts
        return multipower_fit.MultiPowerFit(
            params=params, objective=value, fixed={}, n_starts=draws, n_minimised=draws, n_converged=draws,
            fitted=tuple(fitted), predicted=tuple(predicted), predictions=pd.concat(frames, ignore_index=True),
            seconds=time.perf_counter() - t0, rule={"posterior": posterior.summary()})


def posterior_coverage(predictions: pd.DataFrame) -> float:
    """The fraction of observed losses inside their posterior-predictive intervals."""
    return held_out_schedules.coverage(predictions[rs.LOSS], predictions["posterior_lo"], predictions["posterior_hi"])

