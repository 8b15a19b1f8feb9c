"""The likelihood form of Approach 3 and the likelihood-ratio test (Besiroglu et al. 2024).

Residuals r_i = log L_i - log Lhat_i are modelled as independent draws from a Huber density of
scale sigma (:func:`jaxscale.fitting.objective.huber_nll`); (theta, log sigma) maximise the
likelihood. A published parameter set theta_0 (e.g. Hoffmann et al.'s) is tested against the
fit by the likelihood ratio, with sigma re-optimised under the null::

    Lambda = 2 [ min_sigma NLL(theta_0, sigma) - min_{theta, sigma} NLL(theta, sigma) ]  ~  chi^2_p,

p the number of law parameters fixed by the null (Wilks 1938).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy.stats import chi2

from jaxscale.core import lbfgs
from jaxscale.core.numerics import float64
from jaxscale.fitting.determinable import check_runs
from jaxscale.fitting.objective import DELTA, FitData, fit_data, nll_fn, residuals
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Tolerances of the likelihood fit (one problem per start: tighter than the multistart).
LIKELIHOOD = lbfgs.Options(max_iter=5000, ftol=1e-15, gtol=1e-10)


@dataclass(frozen=True)
class LikelihoodFit:
    """Maximum-likelihood fit: the law's ``params``, ``sigma``, the minimum ``nll``."""

    law: Law
    vector: np.ndarray
    params: NamedTuple
    sigma: float
    nll: float
    n_points: int

    @float64
    def summary(self) -> dict[str, Any]:
        derived = {k: float(v) for k, v in self.law.derived(self.params).items()}
        return {**self.params._asdict(), **derived, "sigma": self.sigma, "nll": self.nll, "n_points": self.n_points}


def _sigma_start(law: Law, vector: np.ndarray, data: FitData, delta: float) -> float:
    """log sigma where the NLL's sigma-derivative vanishes for mostly-linear Huber terms:
    sigma = delta * mean |r| (clipped away from 0)."""
    r = np.asarray(residuals(law, jnp.asarray(vector), data))
    return float(np.log(max(delta * np.mean(np.abs(r)), 1e-300)))


def _data(law: Law, runs: RunsTable) -> FitData:
    return fit_data(runs.law_inputs(law.inputs), runs.loss)


@float64
def fit_likelihood(
    runs: RunsTable, *, law: Law = chinchilla.LAW, starts: ArrayLike | None = None,
    delta: float = DELTA, options: lbfgs.Options = LIKELIHOOD,
) -> LikelihoodFit:
    """Maximise the Huber likelihood over (theta, log sigma).

    ``starts`` (k, p) are starting vectors (default: Hoffmann et al.'s published values, as
    Besiroglu et al. do, for the Chinchilla law; else the law's grid); each gets the sigma
    start :func:`_sigma_start`; the best of the k converged fits is returned.
    """
    check_runs(law, runs)
    data = _data(law, runs)
    if starts is None:
        hoffmann = law.chinchilla_undefined is None
        starts = law.to_vector(law.published_params("chinchilla"))[None] if hoffmann else law.init_grid()
    starts = np.atleast_2d(np.asarray(starts, np.float64))
    if starts.shape[1] != law.n_params:
        raise ValueError(f"starts must have {law.n_params} columns {law.vector_names}; got {starts.shape}")
    with_sigma = np.array([np.append(t, _sigma_start(law, t, data, delta)) for t in starts])
    sol = lbfgs.solver(nll_fn(law, delta), options)(jnp.asarray(with_sigma), data)
    value = np.where(np.asarray(sol.converged), np.asarray(sol.value), np.inf)
    best = int(np.argmin(value))
    if not np.isfinite(value[best]):
        raise ValueError("the likelihood fit did not converge from any start")
    vector = np.asarray(sol.theta[best])[:-1]
    return LikelihoodFit(
        law=law, vector=vector, params=jax.tree.map(float, law.from_vector(vector)),
        sigma=float(np.exp(sol.theta[best][-1])), nll=float(value[best]), n_points=len(runs),
    )


@float64
def nll_at(law: Law, vector: ArrayLike, runs: RunsTable, delta: float = DELTA) -> float:
    """min over sigma of the NLL at a fixed law ``vector`` (a one-dimensional problem, solved
    exactly by L-BFGS in log sigma)."""
    data = _data(law, runs)
    vector = jnp.asarray(vector, jnp.float64)
    nll = nll_fn(law, delta)
    profile = lambda log_sigma, data: nll(jnp.append(vector, log_sigma[0]), data)  # noqa: E731
    start = jnp.array([_sigma_start(law, np.asarray(vector), data, delta)])
    sol = lbfgs.minimize(profile, start, data, LIKELIHOOD)
    return float(sol.value)


@float64
def likelihood_ratio_test(runs: RunsTable, reference: NamedTuple, *, fit: LikelihoodFit | None = None,
                          law: Law = chinchilla.LAW, delta: float = DELTA) -> dict[str, float]:
    """Likelihood-ratio test of ``reference`` parameters of ``law`` (e.g. Chinchilla's
    published ones) against the maximum-likelihood fit: statistic, degrees of freedom, p-value
    (chi^2)."""
    fit = fit if fit is not None else fit_likelihood(runs, law=law, delta=delta)
    nll_ref = nll_at(fit.law, fit.law.to_vector(reference), runs, delta)
    stat = max(2.0 * (nll_ref - fit.nll), 0.0)
    df = fit.law.n_params
    return {"statistic": stat, "df": df, "p_value": float(chi2.sf(stat, df)),
            "nll_fit": fit.nll, "nll_reference": nll_ref}
