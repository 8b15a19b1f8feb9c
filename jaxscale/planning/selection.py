"""Which runs to train next: the expected posterior variance of a target, per FLOP.

What is known of the law is a Gaussian belief about its vector theta (the Laplace approximation
at the current fit, :mod:`jaxscale.determinacy.curvature`, with the law's priors as a Gaussian of the
same precision; or the prior itself when there are no runs yet): a point theta, a covariance
Sigma and the residual scale sigma of log loss. A target q(theta) (:mod:`jaxscale.planning.targets`)
then has the delta-method variance g^T Sigma g, g = grad q (``jax.grad``, through the implicit
compute-optimal solver). A new run x at (N, D) adds one observation of log L with prediction
gradient j_x (:func:`jaxscale.determinacy.curvature.prediction_jacobian`), i.e. j_x j_x^T / sigma^2 to
the precision, and by the Sherman-Morrison formula (Sherman & Morrison 1950) the target's
variance falls by

    r(x) = (g^T Sigma j_x)^2 / (sigma^2 + j_x^T Sigma j_x)                                      (1)

without refitting: the expected variance reduction of the linearised (c-optimal) design problem
(Chaloner & Verdinelli 1995, Section 2.2). The run costs C(x) = 6 N D FLOP (Kaplan et al. 2020;
Pearce & Song Eq. 3), and a run is worth r(x) / C(x): variance removed per FLOP.

**Greedy selection under a budget** (:func:`greedy`): take the affordable candidate of largest
r / C, update Sigma by the same rank-one formula,

    Sigma <- Sigma - Sigma j j^T Sigma / (sigma^2 + j^T Sigma j),                              (2)

and repeat until no candidate fits in what is left of the budget or none lowers the variance.
Greedy selection of a c-optimal design is not optimal in general, but each step is the best one
under the current belief, and the belief after the chosen runs is exact under the linearisation.

Where the target is undefined at the current point (a fit whose exponent is <= 0 has no N*), its
gradient is too: the runs are then chosen by the information they add, log(1 + j^T Sigma j /
sigma^2) per FLOP (D-optimality, the log-determinant gain of the rank-one update), and the plan
says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.core.validation import check_positive
from jaxscale.fitting.approach3 import FitResult
from jaxscale.determinacy.curvature import curvature, information, laplace_covariance, prediction_jacobian
from jaxscale.inference.law_model import coordinate_priors
from jaxscale.laws.law import Law
from jaxscale.fitting.bootstrap import bootstrap
from jaxscale.planning.ensemble_belief import RESAMPLES, SEED, ensemble_deviations
from jaxscale.planning.ratio_noise import ratio_distance, robust_covariance, run_noise
from jaxscale.planning.target_intervals import Interval, gaussian_interval
from jaxscale.planning.targets import Target
from jaxscale.determinacy.sandwich import run_scale

#: The residual scale of log loss assumed when there are no runs to estimate it from: 1% of the
#: loss, twice the robust scale (:mod:`jaxscale.determinacy.curvature`) of the residuals of Epoch AI's
#: 240 Chinchilla runs at their fit (0.48%).
NOISE = 0.01
#: The beliefs a plan from a fit may start from (:func:`plan_runs`).
BELIEFS = ("robust", "ensemble")


class Belief(NamedTuple):
    """A Gaussian belief about the law's vector: ``vector`` (p,), ``covariance`` (p, p) and the
    residual scale ``sigma`` of log loss that a new run is observed with."""

    vector: np.ndarray
    covariance: np.ndarray
    sigma: float


def prior_precision(law: Law) -> np.ndarray:
    """(p, p) diagonal precision of the law's priors (:attr:`jaxscale.laws.law.Law.priors`), each
    coordinate's (loc, scale) read as a Normal (an exponent's truncation at 0 is left out)."""
    scales = np.array([scale for _, scale in coordinate_priors(law).values()], np.float64)
    return np.diag(scales**-2.0)


def prior_belief(law: Law, sigma: float = NOISE) -> Belief:
    """The belief before any run: the priors' locations and variances, noise ``sigma``."""
    check_positive("sigma", sigma)
    locations = np.array([loc for loc, _ in coordinate_priors(law).values()], np.float64)
    return Belief(locations, np.linalg.inv(prior_precision(law)), float(sigma))


def laplace_belief(law: Law, vector: ArrayLike, jacobian: np.ndarray, sigma: float,
                   weights: ArrayLike | None = None) -> Belief:
    """The Laplace belief at ``vector`` from runs with prediction Jacobian ``jacobian`` (and row
    ``weights``): covariance (J^T W J / sigma^2 + prior precision)^-1
    (:mod:`jaxscale.determinacy.curvature`)."""
    precision = information(jacobian, sigma, weights) + prior_precision(law)
    return Belief(np.asarray(vector, np.float64), laplace_covariance(precision), float(sigma))


def fit_belief(fit: FitResult, sigma: float | None = None) -> Belief:
    """The Laplace belief at an Approach-3 fit: its optimum, the covariance (information of its
    runs + prior precision)^-1 and the robust scale of its residuals (unless ``sigma`` is given)."""
    curv = curvature(fit, sigma=sigma)
    return laplace_belief(fit.law, fit.vector, curv.jacobian, curv.sigma)


def robust_belief(law: Law, vector: ArrayLike, params: NamedTuple, inputs: tuple[np.ndarray, np.ndarray],
                  residuals: np.ndarray, delta: float, weights: np.ndarray | None = None,
                  sigma: float | None = None) -> tuple[Belief, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """The robust belief at a Huber fit (:mod:`jaxscale.planning.ratio_noise`): the sandwich
    covariance with the priors, the per-run scale s of the sandwich (or ``sigma``), and the noise
    of a run at (N, D) by its distance from the compute-optimal ratio.

    Args:
        law, vector, params: the law and the fit's optimum (its vector and its NamedTuple).
        inputs: (N, D) of the runs (those of weight 0 count for nothing).
        residuals: their log residuals at the fit.
        delta: the fit's Huber threshold.
        weights: the runs' weights (default all 1).
        sigma: the per-run scale to use instead of the sandwich's.

    Returns:
        The belief and a function of candidate (N, D) giving each one's noise.
    """
    jacobian = prediction_jacobian(law, vector, inputs)
    covariance = robust_covariance(jacobian, residuals, delta, weights, prior_precision(law))
    fitted_t = ratio_distance(law, params, *inputs)
    base = run_scale(residuals, delta, law.n_params, weights) if sigma is None else float(sigma)

    def noise(n: np.ndarray, d: np.ndarray) -> np.ndarray:
        t = ratio_distance(law, params, n, d)
        return run_noise(law.n_params, fitted_t, residuals, base, t, weights)

    return Belief(np.asarray(vector, np.float64), covariance, base), noise


def laplace_interval(belief: Belief, target: Target, level: float = 0.9) -> Interval:
    """estimate +- z sd on the target's design scale under ``belief``, sd = sqrt(g^T Sigma g) by
    the delta method (:func:`jaxscale.planning.target_intervals.gaussian_interval`)."""
    scale, gradient = target_gradient(target, belief.vector)
    variance = float(gradient @ belief.covariance @ gradient)
    return gaussian_interval(scale, math.sqrt(variance) if variance >= 0 else math.nan, level, target.log)


def reductions(covariance: np.ndarray, gradient: np.ndarray, jacobians: np.ndarray,
               sigma: float | np.ndarray) -> np.ndarray:
    """[k] variance reduction of the target by each candidate, Eq. (1), ``sigma`` one noise scale
    or each candidate's [k]; with a non-finite ``gradient`` (target undefined), the information
    gain log(1 + j^T Sigma j / sigma^2)."""
    pulled = jacobians @ covariance  # (k, p): Sigma j for each candidate
    spread = np.sum(pulled * jacobians, axis=1)  # j^T Sigma j
    if not np.all(np.isfinite(gradient)):
        return np.log1p(spread / sigma**2)
    return (pulled @ gradient) ** 2 / (sigma**2 + spread)


def updated(covariance: np.ndarray, jacobian: np.ndarray, sigma: float) -> np.ndarray:
    """Sigma after one observation with prediction gradient ``jacobian``, Eq. (2)."""
    pulled = covariance @ jacobian
    return covariance - np.outer(pulled, pulled) / (sigma**2 + jacobian @ pulled)


@partial(jax.jit, static_argnums=0)
def _gradient(fn, vector: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    return jax.value_and_grad(fn)(vector)


@float64
def target_gradient(target: Target, vector: ArrayLike) -> tuple[float, np.ndarray]:
    """The target (on its design scale) and its gradient in the law's vector at ``vector``."""
    value, grad = _gradient(target.fn, jnp.asarray(vector, jnp.float64))
    return float(value), np.asarray(grad)


class Choice(NamedTuple):
    """One run of a plan: its ``index`` among the candidates, the target's variance
    ``reduction`` it brings (Eq. 1) and the ``variance`` left after it (on the design scale)."""

    index: int
    reduction: float
    variance: float


def greedy(belief: Belief, gradient: np.ndarray, jacobians: np.ndarray, cost: np.ndarray, budget: float,
           max_runs: int | None = None, noise: np.ndarray | None = None) -> list[Choice]:
    """Candidates in the order greedy selection under ``budget`` FLOP takes them (module
    docstring): each time the affordable one of largest reduction per FLOP, until none fits or
    none lowers the variance (or ``max_runs`` are chosen). ``noise`` [k]: each candidate's own
    noise scale (default the belief's sigma for all)."""
    noise = np.full(len(cost), belief.sigma) if noise is None else np.asarray(noise, np.float64)
    cov = np.array(belief.covariance, np.float64)
    left = np.ones(len(cost), bool)
    spent, out = 0.0, []
    while max_runs is None or len(out) < max_runs:
        affordable = left & (cost <= budget - spent)
        if not affordable.any():
            break
        gain = reductions(cov, gradient, jacobians, noise)
        i = int(np.argmax(np.where(affordable, gain / cost, -np.inf)))
        if not gain[i] > 0:
            break
        cov = updated(cov, jacobians[i], noise[i])
        left[i], spent = False, spent + float(cost[i])
        variance = float(gradient @ cov @ gradient) if np.all(np.isfinite(gradient)) else float("nan")
        out.append(Choice(i, float(gain[i]), variance))
    return out


@dataclass(frozen=True)
class Plan:
    """The runs to train next for one target, in the order greedy selection takes them.

    Attributes:
        law: the law designed for.
        target: the target quantity.
        belief: the belief the plan starts from (at the current fit, or the prior).
        estimate: the target at the belief's point, on its own scale (NaN if undefined there).
        variance: the target's delta-method variance now (design scale: log for N*, D*, L).
        n, d: the candidates' sizes and tokens, [k] each.
        cost: [k] FLOP of each candidate, 6 N D.
        value: [k] each candidate's reduction per FLOP before any is chosen (Eq. 1 / cost).
        choices: the chosen runs in order (:class:`Choice`).
        budget: the FLOP the plan may spend.
        criterion: ``"variance"`` (Eq. 1) or ``"information"`` (the target is undefined at the
            belief's point: D-optimal gain, module docstring).
        noise: [k] the noise scale of log loss each candidate is observed with (the robust belief
            at a fit prices runs far from the compute-optimal ratio higher:
            :mod:`jaxscale.planning.ratio_noise`).
        kind: the belief planned from: ``"prior"``, ``"robust"`` (the sandwich at the fit) or
            ``"ensemble"`` (the bootstrap's refits, :mod:`jaxscale.planning.ensemble_belief`; its
            covariance is then in the ensemble's coordinates, I_R, not over the law's vector).
    """

    law: Law
    target: Target
    belief: Belief
    estimate: float
    variance: float
    n: np.ndarray
    d: np.ndarray
    cost: np.ndarray
    value: np.ndarray
    choices: tuple[Choice, ...]
    budget: float
    criterion: str
    noise: np.ndarray | None = None
    kind: str = "robust"

    @property
    def spent(self) -> float:
        """FLOP of the chosen runs together."""
        return float(sum(self.cost[c.index] for c in self.choices))

    def table(self) -> pd.DataFrame:
        """One row per chosen run, in order: N, D, tokens per parameter, FLOP, cumulative FLOP,
        the variance reduction and the target's standard deviation left after it (design scale)."""
        idx = np.array([c.index for c in self.choices], int)
        cost = self.cost[idx]
        return pd.DataFrame({
            "N": self.n[idx], "D": self.d[idx], "tokens_per_param": self.d[idx] / self.n[idx], "C": cost,
            "cumulative_C": np.cumsum(cost), "reduction": [c.reduction for c in self.choices],
            "sd_after": np.sqrt([c.variance for c in self.choices]),
        }, index=pd.RangeIndex(1, len(idx) + 1, name="order"))


def check_candidates(n: ArrayLike, d: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Candidates as float64 arrays of equal length, every N and D finite and > 0."""
    n, d = np.atleast_1d(np.asarray(n, np.float64)), np.atleast_1d(np.asarray(d, np.float64))
    if n.shape != d.shape or n.ndim != 1 or not len(n):
        raise ValueError(f"candidates need one N and one D each; got {n.shape} and {d.shape}")
    check_positive("candidate N", n)
    check_positive("candidate D", d)
    return n, d


def _ensemble(law: Law, target: Target, fit: FitResult, n: np.ndarray, d: np.ndarray,
              robust: Belief) -> tuple[Belief, np.ndarray, np.ndarray]:
    """The ensemble belief at ``fit`` in the ensemble's own coordinates: covariance I_R, the
    target's gradient and the candidates' Jacobians the refits' deviations
    (:mod:`jaxscale.planning.ensemble_belief`: a plan ahead of the runs)."""
    refits = bootstrap(fit, RESAMPLES, SEED)
    with np.errstate(invalid="ignore", over="ignore"):
        deviations = ensemble_deviations(law, target, refits, (n, d))
    if deviations is None:
        raise ValueError(f"belief 'ensemble': the bootstrap's {RESAMPLES} refits leave {target.name} undefined too "
                         "often (or too few converge) to read its spread; plan with the robust belief")
    covariance = np.eye(len(deviations))
    return Belief(np.asarray(fit.vector, np.float64), covariance, robust.sigma), deviations[:, 0], deviations[:, 1:].T


@float64
def plan_runs(law: Law, target: Target, n: ArrayLike, d: ArrayLike, budget: float, *, fit: FitResult | None = None,
              sigma: float | None = None, max_runs: int | None = None, belief: str = "robust") -> Plan:
    """Propose the next runs among candidates (``n``, ``d``) that shrink ``target``'s variance
    most per FLOP, greedily, within ``budget`` FLOP (module docstring).

    Args:
        law: the law of (N, D) the runs are fitted with.
        target: what the study decides (:func:`jaxscale.planning.targets.parse_target`).
        n, d: candidate model sizes and token counts, [k] each.
        budget: FLOP the new runs may spend together.
        fit: the Approach-3 fit of the runs so far (its law must be ``law``): the plan starts from
            its robust belief (:func:`~jaxscale.planning.selection.robust_belief`); None: from the law's priors.
        sigma: the per-run scale of log loss; default the sandwich's at the fit, or :data:`NOISE`.
        max_runs: stop after this many runs (default: when the budget is spent).
        belief: ``"robust"`` (the sandwich covariance at the fit) or ``"ensemble"`` (the
            covariance over :data:`~jaxscale.planning.ensemble_belief.RESAMPLES` bootstrap refits
            of the fit of the target and of every candidate's log loss; needs ``fit``). Each
            candidate's noise is the robust belief's in both.

    Returns:
        The :class:`Plan`.
    """
    if belief not in BELIEFS:
        raise ValueError(f"belief {belief!r} is not one of {', '.join(BELIEFS)}")
    if belief == "ensemble" and fit is None:
        raise ValueError("belief 'ensemble' reads the bootstrap of a fit of runs; without runs the plan starts "
                         "from the law's priors (belief 'robust')")
    n, d = check_candidates(n, d)
    check_positive("budget", budget)
    if max_runs is not None and max_runs < 1:
        raise ValueError(f"max_runs must be >= 1, got {max_runs}")
    if fit is not None and fit.law is not law:
        raise ValueError(f"the fit is of the {fit.law.name} law, the plan of the {law.name} law")
    if fit is not None:
        residuals = np.asarray(fit.data().log_y) - np.log(fit.predict(*fit.inputs))
        start, noise_of = robust_belief(law, fit.vector, fit.params, fit.inputs, residuals, fit.delta,
                                        fit.weights, sigma)
        noise, kind = noise_of(n, d), "robust"
    else:
        start = prior_belief(law, NOISE if sigma is None else sigma)
        noise, kind = np.full(len(n), start.sigma), "prior"
    scale, gradient = target_gradient(target, start.vector)
    jacobians = prediction_jacobian(law, start.vector, (n, d))
    defined = bool(np.all(np.isfinite(gradient)) and np.isfinite(scale))
    if belief == "ensemble" and defined:  # an undefined target has no spread to read: D-optimality, as robust
        start, gradient, jacobians = _ensemble(law, target, fit, n, d, start)
        kind = "ensemble"
    if not defined:
        gradient = np.full_like(gradient, np.nan)
    cost = 6.0 * n * d
    variance = float(gradient @ start.covariance @ gradient) if defined else float("nan")
    return Plan(law=law, target=target, belief=start,
                estimate=float(target.value(scale)) if defined else float("nan"), variance=variance,
                n=n, d=d, cost=cost, value=reductions(start.covariance, gradient, jacobians, noise) / cost,
                choices=tuple(greedy(start, gradient, jacobians, cost, budget, max_runs, noise)), budget=float(budget),
                criterion="variance" if defined else "information", noise=noise, kind=kind)
