"""Tissue et al.'s annealing law's posterior given whole curves, and its posterior-predictive mean:
a candidate of the fit rule across schedules (:mod:`jaxscale.curves.held_out_schedules`), the
counterpart of the multi-power law's (:mod:`jaxscale.inference.multipower_posterior`), so that the
two laws stay comparable under one rule.

The law (Tissue, Wang & Wang 2024, Eq. 1; :mod:`jaxscale.laws.lr_annealing`) is

    L(s) = L0 + A S1(s)^(-alpha) - C S2(s),

S1 and S2 the forward and annealing areas of the run's schedule up to step s, S2 with the decay
factor lambda of its momentum (:mod:`jaxscale.laws.schedule_areas`). Instead of the fit's
optimum this candidate predicts with the mean over the posterior,

    Lhat(s) = E[ L(s; theta) | fitted curves ],

estimated by the mean of L(s; theta_d) over draws theta_d of NUTS. Declared here, and committed,
before its first run on the 25M curves of ``examples/multipower_25m.py``:

**Coordinates and priors.** theta = (log L0, log A, log C, alpha), the vector the rule's fits of
the law minimise (:func:`jaxscale.curves.lr_annealing_fit.fit_group`, Approach 3 on the
``lr-annealing`` law), drawn from the law's own priors (:class:`jaxscale.laws.lr_annealing.LRAnnealingPriors`,
the ones ``jaxscale bayes --law lr-annealing`` uses, written with the law, before any of these
curves was read, by :func:`jaxscale.inference.law_model.coordinates`): log L0 ~ Normal(1, 0.5)
(L0 about 2.7 nats, within a factor 1.6 at one SD), log A ~ Normal(0, 2), log C ~ Normal(-1, 3)
(wide: S1 and S2 are in learning rate x steps, whose scale depends on the peak rate and the
run's length), alpha ~ Normal(0.5, 0.5) truncated to > 0. They are weakly informative as the
multi-power law's are: centred where the law's start grid is centred (log L0 1 against the
grid's 1.25, log A 0 against 0.25, log C -1 against -1, alpha 0.5 against 0.55), one SD a factor
1.6 to 20 in the scales. The rule's candidates of this law are decay factors, not penalties, so
no penalty is mirrored here.

**The decay factor** lambda is fixed at the paper's 0.999 (:data:`DECAY`,
:data:`jaxscale.laws.schedule_areas.PAPER_DECAY`, the value ``jaxscale curve`` fits the law at by
default), neither sampled nor chosen: a value set before any data, as the multi-power law's prior
centres are. Sampling it would recompute S2 (a scan over every step of every run) at every
leapfrog step; taking the value the rule's grid chooses would let the run held out choose the
lambda of the fits that predict it (the grid's choice scores every held-out run). The candidate
therefore sits in the rule's list beside the point fit at the same lambda (0.999 of
:data:`jaxscale.curves.lr_annealing_fit.DECAY_GRID`): the two differ only in optimum against
posterior mean.

**Checkpoints.** Every checkpoint of the runs given, as the rule fits the law (``skip_warmups``
0); the areas at each are those of :func:`jaxscale.curves.lr_annealing_fit.with_areas`.

**Likelihood, sampler and prediction** are those of every curve law's posterior
(:mod:`jaxscale.inference.curve_posterior`): each run's log residuals log L_t - log Lhat_t, in
step order, an AR(1) series with Student-t innovations (df 4, sigma ~ HalfNormal(0.01),
rho ~ Uniform(-1, 1)); where the law's loss is <= 0 at a checkpoint given (outside its domain) the
density is 0. NUTS with :data:`~jaxscale.inference.curve_posterior.CONFIG` (4 chains of 250
warmup and 250 draws, target acceptance 0.9, trees of at most 255 leapfrog steps, seed 0), each
chain started from the law's fit at lambda 0.999 to the same runs (its optimum; sigma and rho from
its residuals). The mean over 200 draws thinned evenly from the 1,000, and the central 90%
interval of an observed loss (columns posterior_lo, posterior_hi); a draw whose loss is <= 0 at a
checkpoint leaves the mean there undefined (NaN; the rule scores such a candidate as not
predicting). Every posterior's diagnostics (R-hat, bulk ESS, divergences) are kept
(:attr:`AnnealingPosteriorMean.history`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import pandas as pd

from jaxscale.core.numerics import float64
from jaxscale.curves import held_out_schedules, lr_annealing_fit
from jaxscale.fitting.objective import huber_objective
from jaxscale.inference import curve_posterior, law_model
from jaxscale.inference.curve_posterior import CONFIG, PREDICTIVE_DRAWS, CurvePosterior
from jaxscale.inference.sample import NutsConfig
from jaxscale.laws import lr_annealing
from jaxscale.laws.schedule_areas import PAPER_DECAY
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable

#: The decay factor lambda of S2 the posterior is taken at (module docstring).
DECAY = PAPER_DECAY
LAW = lr_annealing.LAW


class AnnealingCurve(NamedTuple):
    """One run's checkpoints in step order: steps, log S1, log S2 (-inf before any decay) and loss."""

    step: np.ndarray
    log_s1: np.ndarray
    log_s2: np.ndarray
    loss: np.ndarray


def curves_of(curves: RunsTable, runs: Sequence[str]) -> tuple[AnnealingCurve, ...]:
    """Each run's checkpoints of ``curves`` (a table with the areas' columns,
    :func:`jaxscale.curves.lr_annealing_fit.with_areas`), in step order."""
    ids = curves.run_id.astype(str)
    out = []
    for run in runs:
        rows = np.flatnonzero(ids == run)
        rows = rows[np.argsort(curves.step[rows], kind="stable")]
        s1, s2 = curves.select(rows).law_inputs(LAW.inputs)
        with np.errstate(divide="ignore"):
            out.append(AnnealingCurve(curves.step[rows], np.log(s1), np.log(s2), curves.loss[rows]))
    return tuple(out)


def residuals(params: lr_annealing.LRAnnealingParams, curve: AnnealingCurve) -> jnp.ndarray:
    """log L - log Lhat at every checkpoint of ``curve`` (NaN where the law's loss is <= 0)."""
    return jnp.log(curve.loss) - LAW.log_loss(params, curve.log_s1, curve.log_s2)


def annealing_model(runs: tuple[AnnealingCurve, ...]) -> None:
    """The model of the module docstring: the law's four coordinates from its priors (sites
    ``log_L0``, ``log_A``, ``log_C``, ``alpha``), sigma and rho from theirs, every run's log
    residuals an AR(1) Student-t series; density 0 where the law's loss is <= 0 at a checkpoint."""
    value = law_model.coordinates(LAW, ())
    params = LAW.from_vector(jnp.stack([value[name] for name in LAW.vector_names]))
    errors = [residuals(params, run) for run in runs]
    defined = jnp.all(jnp.stack([jnp.all(jnp.isfinite(e)) for e in errors]))
    numpyro.factor("domain", jnp.where(defined, 0.0, -jnp.inf))
    curve_posterior.residual_likelihood([jnp.where(jnp.isfinite(e), e, 0.0) for e in errors])


def _start(fit: lr_annealing_fit.CurveFit, runs: tuple[AnnealingCurve, ...]) -> dict[str, float]:
    """Initial values of every site: the fit's coordinates, sigma and rho of its residuals."""
    theta = np.asarray(LAW.to_vector(fit.fit.params), np.float64)
    e = np.concatenate([np.asarray(residuals(fit.fit.params, run)) for run in runs])
    return {**dict(zip(LAW.vector_names, map(float, theta))), **curve_posterior.noise_start(e)}


def _areas(table: RunsTable, lrs: Mapping[str, np.ndarray], runs: Sequence[str]) -> RunsTable:
    """The checkpoints of ``runs`` with their areas at :data:`DECAY`."""
    lr_annealing_fit.check_named(table, runs)
    subset = table.select(np.isin(table.run_id.astype(str), list(runs)))
    return lr_annealing_fit.with_areas(subset, {r: lrs[r] for r in runs}, DECAY)


@float64
def sample_posterior(table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
                     config: NutsConfig = CONFIG) -> tuple[CurvePosterior, lr_annealing_fit.CurveFit]:
    """NUTS on :func:`annealing_model` given every checkpoint of the runs ``fitted``.

    Args:
        table: the runs' checkpoints.
        lrs: each run's rates eta_1..eta_T.
        fitted: the runs the posterior is given (checkpoints for at least the law's four parameters).
        config: the sampler's settings.

    Returns:
        The posterior (:class:`~jaxscale.inference.curve_posterior.CurvePosterior`; its problems
        are also warned about) and the fit it started from (the law at :data:`DECAY`).
    """
    t0 = time.perf_counter()
    if not fitted:
        raise ValueError("a posterior of Tissue et al.'s law needs at least one fitted run; got none")
    start = lr_annealing_fit.fit_group(table, lrs, fitted, [], decay=DECAY, skip_warmups=0)
    runs = jax.tree.map(jnp.asarray, curves_of(_areas(table, lrs, fitted), fitted))
    posterior = curve_posterior.sample(annealing_model, runs, init=_start(start, runs), coordinates=LAW.vector_names,
                                       fitted=fitted, config=config, started=t0)
    return posterior, start


@float64
def predictive(posterior: CurvePosterior, table: RunsTable, lrs: Mapping[str, np.ndarray], runs: Sequence[str],
               level: float = held_out_schedules.LEVEL, draws: int = PREDICTIVE_DRAWS) -> pd.DataFrame:
    """The posterior-predictive mean of L at every checkpoint of ``runs`` (column predicted) and
    the central ``level`` interval of an observed loss there (posterior_lo, posterior_hi), over
    ``draws`` thinned draws (:func:`jaxscale.inference.curve_posterior.predictive_columns`).

    Args:
        posterior: the draws, in the law's vector coordinates.
        table: the runs' checkpoints.
        lrs: each run's rates eta_1..eta_T.
        runs: the runs predicted.
        level: the probability of the predictive interval.
        draws: how many draws the mean and interval are taken over.

    Returns:
        run_id, step, loss, predicted, posterior_lo, posterior_hi: one row per checkpoint, each
        run's in step order.
    """
    keep = curve_posterior.thinned(len(posterior.theta), draws)
    params = LAW.from_vector(jnp.asarray(posterior.theta[keep]))
    frames = []
    for index, (run, curve) in enumerate(zip(runs, curves_of(_areas(table, lrs, runs), runs))):
        losses = np.asarray(jnp.exp(LAW.log_loss(jax.tree.map(lambda p: p[:, None], params),
                                                 jnp.asarray(curve.log_s1), jnp.asarray(curve.log_s2))))
        frames.append(pd.DataFrame({rs.RUN_ID: run, rs.STEP: curve.step, rs.LOSS: curve.loss,
                                    **curve_posterior.predictive_columns(losses, posterior, keep, index, level)}))
    return pd.concat(frames, ignore_index=True)


@dataclass
class AnnealingPosteriorMean:
    """The candidate of :mod:`jaxscale.curves.held_out_schedules` for Tissue et al.'s law: the
    posterior-predictive mean at lambda :data:`DECAY` (:data:`~jaxscale.inference.curve_posterior.CONFIG`),
    given some runs, predicting others. ``history`` keeps the summary
    (:meth:`~jaxscale.inference.curve_posterior.CurvePosterior.summary`) of every posterior sampled."""

    config: NutsConfig = CONFIG
    label: str = "posterior mean (lambda 0.999)"
    history: list[dict[str, Any]] = field(default_factory=list)

    def fit(self, table: RunsTable, lrs: Mapping[str, np.ndarray], fitted: Sequence[str],
            predicted: Sequence[str]) -> lr_annealing_fit.CurveFit:
        """The posterior given ``fitted`` and its predictive mean at every checkpoint of the
        ``predicted`` runs (columns as :func:`jaxscale.curves.lr_annealing_fit.fit_group`'s, every
        checkpoint in the law's domain, with posterior_lo and posterior_hi); the fit's ``params``
        the posterior median of each coordinate, its ``objective`` the Huber objective there, its
        starts the posterior's draws.

        Args:
            table: the runs' checkpoints.
            lrs: each run's rates eta_1..eta_T.
            fitted: the runs the posterior is given.
            predicted: the runs predicted.

        Returns:
            A :class:`~jaxscale.curves.lr_annealing_fit.CurveFit` at decay :data:`DECAY`.
        """
        t0 = time.perf_counter()
        lr_annealing_fit.check_named(table, [*fitted, *predicted])
        posterior, start = sample_posterior(table, lrs, fitted, self.config)
        frame = (predictive(posterior, table, lrs, predicted) if predicted else
                 pd.DataFrame(columns=[rs.RUN_ID, rs.STEP, rs.LOSS, "predicted", "posterior_lo", "posterior_hi"]))
        frame.insert(4, "in_domain", True)  # every checkpoint is fitted and judged (skip_warmups 0)
        median = np.median(posterior.theta, axis=0)
        with jax.enable_x64(True):
            value = float(huber_objective(jnp.asarray(median), start.fit.data(), LAW, start.fit.delta))
            params = LAW.params_type(*map(float, LAW.from_vector(jnp.asarray(median))))
        self.history.append(posterior.summary())
        draws = len(posterior.theta)  # a posterior has draws where a fit has starts
        fit = dataclasses.replace(start.fit, params=params, vector=median, objective=value, n_starts=draws,
                                  n_minimised=draws, n_converged=draws, curvature=None,
                                  seconds=time.perf_counter() - t0)
        return dataclasses.replace(start, fit=fit, predicted=tuple(predicted), predictions=frame)
