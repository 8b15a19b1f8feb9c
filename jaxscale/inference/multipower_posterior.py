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

**Likelihood, sampler and prediction** are those of every curve law's posterior
(:mod:`jaxscale.inference.curve_posterior`): each run's log residuals an AR(1) series with
Student-t innovations (df 4, sigma ~ HalfNormal(0.01), rho ~ Uniform(-1, 1)); NUTS with
:data:`~jaxscale.inference.curve_posterior.CONFIG`, 4 chains of 250 warmup and 250 draws, trees of
at most 255 leapfrog steps (depth 8; held out on the 25M curves, constant_24000 left out, a chain
averaged 57), seed 0, each chain started from the fit of the rule's heaviest penalty to the same
runs (the candidate nearest the priors' centre; where the posterior's bulk is, warmup finds); the
mean over 200 thinned draws and the predictive interval of an observed loss. As in the fit, each
run's drops are merged in blocks of :data:`jaxscale.curves.multipower_fit.FIT_BLOCK` steps (at most
2.6e-5 of L on the fitted runs); predictions are exact. Every posterior's diagnostics are kept
(:attr:`PosteriorMean.history`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pandas as pd

from jaxscale.core.numerics import float64
from jaxscale.curves import held_out_schedules, multipower_fit
from jaxscale.inference import curve_posterior
from jaxscale.inference.curve_posterior import CONFIG, PREDICTIVE_DRAWS, CurvePosterior
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws import multipower
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable

#: Names of the sample sites of the law's seven coordinates, in the vector's order.
COORDINATES = ("log_L0", "log_A", "alpha", "log_B", "log_C", "beta", "gamma")
#: Prior standard deviations of the seven coordinates (module docstring).
PRIOR_SD = (0.5, 1.0, 0.5, 1.5, 1.5, 0.5, 0.5)


def prior_centre(data: multipower_fit.CurveData) -> np.ndarray:
    """The priors' centres in vector coordinates (module docstring): the start grid's centre of
    :func:`jaxscale.curves.multipower_fit.starts`, (log C, beta, gamma) at the rule's penalty centre."""
    grid = multipower_fit.starts(data)
    centre = 0.5 * (grid.min(axis=0) + grid.max(axis=0))
    centre[list(held_out_schedules.PENALISED)] = held_out_schedules.CENTRE
    return centre


def curve_model(data: multipower_fit.CurveData, centre: jnp.ndarray) -> None:
    """The model of the module docstring: the seven coordinates (sites :data:`COORDINATES`),
    sigma and rho from their priors, every run's log residuals an AR(1) Student-t series
    (:func:`jaxscale.inference.curve_posterior.residual_likelihood`)."""
    coordinates = []
    for name, log, loc, sd in zip(COORDINATES, multipower.LOG_SCALE, centre, PRIOR_SD):
        prior = dist.Normal(loc, sd) if log else dist.TruncatedNormal(loc, sd, low=0.0)
        coordinates.append(numpyro.sample(name, prior))
    params = multipower.from_vector(jnp.stack(coordinates))
    curve_posterior.residual_likelihood([jnp.log(run.loss) - jnp.log(multipower.loss(params, run.curve)) for run in data])


def _start(fit: multipower_fit.MultiPowerFit) -> dict[str, float]:
    """Initial values of every site: the fit's coordinates, sigma and rho of its residuals."""
    theta = np.asarray(multipower.to_vector(multipower.MultiPowerParams(*map(np.float64, fit.params))))
    frame = fit.predictions[fit.predictions["fitted"]]
    e = np.log(frame[rs.LOSS].to_numpy()) - np.log(frame["predicted"].to_numpy())
    return {**dict(zip(COORDINATES, map(float, theta))), **curve_posterior.noise_start(e)}


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
        A :class:`~jaxscale.inference.curve_posterior.CurvePosterior`; its problems are also warned
        about (:class:`~jaxscale.inference.diagnostics.SamplingWarning`).
    """
    t0 = time.perf_counter()
    start = multipower_fit.fit_multipower(table, lrs, fitted, [],
                                          penalty=held_out_schedules.drop_penalty(max(held_out_schedules.PENALTIES)))
    data = jax.tree.map(jnp.asarray, multipower_fit.curve_data(table, lrs, list(fitted), multipower_fit.FIT_BLOCK))
    centre = jnp.asarray(prior_centre(data))
    return curve_posterior.sample(curve_model, data, centre, init=_start(start), coordinates=COORDINATES,
                                  fitted=fitted, config=config, started=t0)


@float64
def predictive(posterior: CurvePosterior, table: RunsTable, lrs: Mapping[str, np.ndarray], runs: Sequence[str],
               level: float = held_out_schedules.LEVEL, draws: int = PREDICTIVE_DRAWS) -> pd.DataFrame:
    """The posterior-predictive mean of L at every checkpoint of ``runs`` (column predicted) and
    the central ``level`` interval of an observed loss there (posterior_lo, posterior_hi), over
    ``draws`` thinned draws (:func:`jaxscale.inference.curve_posterior.predictive_columns`).

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
    keep = curve_posterior.thinned(len(posterior.theta), draws)
    theta = jnp.asarray(posterior.theta[keep])
    frames = []
    for index, (run, d) in enumerate(zip(runs, multipower_fit.curve_data(table, lrs, list(runs)))):
        curve = jax.tree.map(jnp.asarray, d.curve)
        losses = np.asarray(jax.lax.map(lambda t: multipower.loss(multipower.from_vector(t), curve), theta))
        frames.append(pd.DataFrame({rs.RUN_ID: run, rs.STEP: np.asarray(d.curve.step), rs.LOSS: np.asarray(d.loss),
                                    **curve_posterior.predictive_columns(losses, posterior, keep, index, level)}))
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

