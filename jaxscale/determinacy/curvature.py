"""The curvature of a fit: Fisher information and Laplace covariance of a law's parameters, by autodiff.

At a fit's optimum theta (the law's vector, :meth:`jaxscale.laws.law.Law.to_vector`: scales as
logs, exponents as they are; the coordinates the fit itself works in) every run's prediction
f_i(theta) = log Lhat(N_i, D_i; theta) has a gradient, the rows of the Jacobian J (n x p), taken
by ``jax.jacfwd`` through the law's ``log_loss``. Under the observation model of nonlinear
regression on log loss (Seber & Wild 1989, *Nonlinear Regression*, Section 2.1; Hoffmann et al.
2022 and Besiroglu et al. 2024 fit log loss)::

    log L_i = f_i(theta) + eps_i,   eps_i ~ N(0, sigma^2),

the Fisher information of runs with weights w_i is

    I(theta) = J^T W J / sigma^2,   W = diag(w_i),                                  (Seber & Wild Eq. 2.19)

and its inverse is the asymptotic (Laplace) covariance of the estimate. A Gaussian prior of
precision P adds to it: (I + P)^-1 is the covariance of the Laplace approximation of the
posterior at the mode. sigma is the robust scale of the fit's log residuals, 1.4826 x their
median absolute value (the normal-consistent MAD: residuals of a Huber fit of small delta are
centred on zero by construction, and a few outlying runs do not inflate it).

:func:`curvature` returns all of it at a fit, beside the Hessian of the fit's own objective (the
Huber sum, Hoffmann et al. 2022 Eq. 3) in the same coordinates: in Huber's linear region only the
law's own curvature under a constant pull remains there (:mod:`jaxscale.sensitivities.influence`
says so term by term), so that Hessian can be near-singular or indefinite where the Fisher
information is not. Condition numbers (largest over smallest eigenvalue) of both, and of the
correlation matrix (which no rescaling of a coordinate changes), say how well the runs
determine the parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.objective import huber_fn
from jaxscale.laws.law import Law
from jaxscale.support.compiled_programs import persistent_jit

#: Normal-consistent MAD factor: 1.4826 x median |r| estimates sigma for Gaussian residuals.
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Curvature:
    """The curvature of a law's fit at its optimum, in the law's vector coordinates (``names``).

    Attributes:
        names: the vector coordinates, e.g. (log_A, log_B, log_E, alpha, beta).
        vector: the optimum theta, (p,).
        jacobian: (n, p) d log Lhat_i / d theta of every run fitted.
        sigma: the residual scale used (robust, module docstring, unless given).
        information: (p, p) Fisher information of the runs, J^T W J / sigma^2.
        prior_precision: (p, p) added to the information for the covariance (zeros if none).
        hessian: (p, p) Hessian of the fit's objective (the Huber sum) at the optimum.
    """

    names: tuple[str, ...]
    vector: np.ndarray
    jacobian: np.ndarray
    sigma: float
    information: np.ndarray
    prior_precision: np.ndarray
    hessian: np.ndarray

    @property
    def precision(self) -> np.ndarray:
        """(p, p) information plus prior precision: the inverse Laplace covariance."""
        return self.information + self.prior_precision

    @property
    def covariance(self) -> np.ndarray:
        """(p, p) Laplace covariance (information + prior precision)^-1; infinite entries where
        that matrix is singular (the runs and the prior leave a direction undetermined)."""
        return laplace_covariance(self.precision)

    @property
    def standard_errors(self) -> dict[str, float]:
        """Laplace standard error of each coordinate, by name."""
        return dict(zip(self.names, np.sqrt(np.diag(self.covariance)).tolist()))

    @property
    def correlation(self) -> np.ndarray:
        """(p, p) correlations of the Laplace covariance (NaN where it is singular)."""
        return correlation(self.covariance)

    def condition_numbers(self) -> dict[str, float]:
        """Condition numbers (largest / smallest |eigenvalue|) of the Fisher information, of the
        objective's Hessian and of the correlation matrix (inf where singular)."""
        return {"information": condition_number(self.information), "hessian": condition_number(self.hessian),
                "correlation": condition_number(self.correlation)}


def condition_number(matrix: ArrayLike) -> float:
    """Largest over smallest absolute eigenvalue of a symmetric matrix (inf if singular or not finite)."""
    m = np.asarray(matrix, np.float64)
    if not np.isfinite(m).all():
        return float("inf")
    eig = np.abs(np.linalg.eigvalsh(m))
    return float(eig.max() / eig.min()) if eig.min() > 0 else float("inf")


def laplace_covariance(precision: ArrayLike) -> np.ndarray:
    """The inverse of a symmetric positive definite ``precision``; inf everywhere if it is not
    (then some direction of the parameters is not determined)."""
    p = np.asarray(precision, np.float64)
    try:
        chol = np.linalg.cholesky(p)
    except np.linalg.LinAlgError:
        return np.full_like(p, np.inf)
    inv = np.linalg.inv(chol)
    return inv.T @ inv


def correlation(covariance: ArrayLike) -> np.ndarray:
    """Correlation matrix of a covariance (NaN where a variance is not finite and positive)."""
    cov = np.asarray(covariance, np.float64)
    sd = np.sqrt(np.diag(cov))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = cov / np.outer(sd, sd)
    ok = np.isfinite(sd) & (sd > 0)
    return np.where(np.outer(ok, ok), out, np.nan)


def robust_sigma(residuals: ArrayLike, weights: ArrayLike | None = None) -> float:
    """1.4826 x the median absolute residual over the rows of positive weight (module docstring)."""
    r = np.abs(np.asarray(residuals, np.float64))
    if weights is not None:
        r = r[np.asarray(weights) > 0]
    return float(MAD_TO_SIGMA * np.median(r))


@partial(persistent_jit, static_argnums=0)
def _jacobian(law: Law, vector: jnp.ndarray, inputs: tuple[jnp.ndarray, ...]) -> jnp.ndarray:
    log_x = tuple(jnp.log(x) for x in inputs)
    return jax.jacfwd(lambda theta: law.log_loss(law.from_vector(theta), *log_x))(vector)


@float64
def prediction_jacobian(law: Law, vector: ArrayLike, inputs: tuple[ArrayLike, ...]) -> np.ndarray:
    """(n, p) d log Lhat / d theta of the law at its vector ``vector`` at each of n points of its
    ``inputs`` (natural scale, e.g. (N, D)): the rows of J in the module docstring."""
    as_float64 = lambda x: np.asarray(x, np.float64)  # host arrays: converting them compiles nothing
    return np.asarray(_jacobian(law, as_float64(vector), tuple(as_float64(x) for x in inputs)))


def information(jacobian: ArrayLike, sigma: float, weights: ArrayLike | None = None) -> np.ndarray:
    """(p, p) Fisher information J^T W J / sigma^2 of runs with prediction Jacobian ``jacobian``."""
    j = np.asarray(jacobian, np.float64)
    w = np.ones(len(j)) if weights is None else np.asarray(weights, np.float64)
    return (j * w[:, None]).T @ j / sigma**2


@partial(persistent_jit, static_argnums=(0, 1, 2))
def _hessian(law: Law, delta: float, asymmetry: float | None, vector: jnp.ndarray, data) -> jnp.ndarray:
    return jax.hessian(huber_fn(law, delta, asymmetry))(vector, data)


@float64
def curvature(fit: FitResult, *, sigma: float | None = None, prior_precision: ArrayLike | None = None) -> Curvature:
    """Fisher information, Laplace covariance and objective Hessian of ``fit`` at its optimum.

    Args:
        fit: an Approach-3 fit (:func:`jaxscale.fitting.approach3.fit_approach3`).
        sigma: the residual scale of log loss; default the robust scale of the fit's residuals.
        prior_precision: (p, p) precision of a Gaussian prior on the law's vector, added to the
            information for :attr:`Curvature.covariance` (default none).

    Returns:
        The :class:`Curvature` in the law's vector coordinates.
    """
    data = fit.data()
    jac = prediction_jacobian(fit.law, fit.vector, fit.inputs)
    if sigma is None:
        predicted = np.asarray(fit.law.log_loss(fit.law.from_vector(jnp.asarray(fit.vector)), *data.log_x))
        sigma = robust_sigma(np.asarray(data.log_y) - predicted)
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma} (the fit's residuals are all zero: pass sigma)")
    p = fit.law.n_params
    prior = np.zeros((p, p)) if prior_precision is None else np.asarray(prior_precision, np.float64)
    if prior.shape != (p, p):
        raise ValueError(f"prior_precision must be ({p}, {p}) for {fit.law.vector_names}; got {prior.shape}")
    hessian = np.asarray(_hessian(fit.law, fit.delta, fit.asymmetry, np.asarray(fit.vector), data))
    return Curvature(names=fit.law.vector_names, vector=np.asarray(fit.vector), jacobian=jac, sigma=float(sigma),
                     information=information(jac, sigma), prior_precision=prior, hessian=hessian)
