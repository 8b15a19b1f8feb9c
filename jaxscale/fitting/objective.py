"""The objectives of Approach 3: Huber loss on log residuals, and its likelihood form.

Hoffmann et al. (2022), Eq. 3 / Besiroglu et al. (2024), Eq. 2: minimise over theta::

    sum_i  w_i Huber_delta( log L_i - log Lhat(N_i, D_i; theta) ),   delta = 1e-3,

the SUM, not the mean (a mean shrinks the gradient by the number of runs and stops L-BFGS
early). ``w_i`` are row weights: 1 for a plain fit, resampling counts for the bootstrap, and an
extra factor ``asymmetry`` on over-predictions (log Lhat > log L) when asked for.

The likelihood form (Besiroglu et al. 2024, Section 3) treats the residuals as draws from a
Huber density of scale sigma, p(r) = exp(-Huber_delta(r/sigma)) / (Z_delta sigma) with
Z_delta = sqrt(2 pi) (1 - 2 Phi(-delta)) + 2 exp(-delta^2/2) / delta, and minimises the
negative log-likelihood over (theta, log sigma).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Callable, NamedTuple

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy.special import ndtr

from jaxscale.laws.law import Law

DELTA = 1e-3


class FitData(NamedTuple):
    """Inputs of one fit, in log space, with row weights (a pytree, so it can be vmapped):
    ``log_x`` holds one array per input of the law, e.g. (log N, log D)."""

    log_x: tuple[jnp.ndarray, ...]
    log_y: jnp.ndarray
    weights: jnp.ndarray

    def take(self, rows: np.ndarray, weights: ArrayLike) -> "FitData":
        """The rows at indices ``rows`` (any shape, e.g. [R, k] for R resamples) with ``weights``."""
        return FitData(tuple(np.asarray(x)[rows] for x in self.log_x), np.asarray(self.log_y)[rows], weights)


def fit_data(inputs: Sequence[ArrayLike], y: ArrayLike, weights: ArrayLike | None = None) -> FitData:
    """FitData from natural-scale ``inputs`` (e.g. (N, D)), the loss ``y`` and optional weights
    (default ones), as float64 NumPy arrays (host-side: building them compiles nothing)."""
    with np.errstate(divide="ignore"):  # an annealing area of 0 (no decay yet): log -inf, a term that is absent
        log_x = tuple(np.log(np.asarray(v, dtype=np.float64)) for v in inputs)
    y = np.log(np.asarray(y, dtype=np.float64))
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=np.float64)
    return FitData(log_x, y, w)


def huber(r: jnp.ndarray, delta: float = DELTA) -> jnp.ndarray:
    """Huber (1964): r^2/2 for |r| <= delta, delta (|r| - delta/2) beyond."""
    abs_r = jnp.abs(r)
    return jnp.where(abs_r <= delta, 0.5 * r * r, delta * (abs_r - 0.5 * delta))


def residuals(law: Law, theta: jnp.ndarray, data: FitData) -> jnp.ndarray:
    """log L - log Lhat at the law's vector ``theta``: positive where the law under-predicts."""
    return data.log_y - law.log_loss(law.from_vector(theta), *data.log_x)


def _row_weights(r: jnp.ndarray, data: FitData, asymmetry: float | None) -> jnp.ndarray:
    if asymmetry is None:
        return data.weights
    return data.weights * jnp.where(r < 0, asymmetry, 1.0)


def huber_objective(theta: jnp.ndarray, data: FitData, law: Law,
                    delta: float = DELTA, asymmetry: float | None = None) -> jnp.ndarray:
    """sum_i w_i Huber_delta(log L_i - log Lhat_i); ``asymmetry`` > 1 weighs over-predictions
    (log Lhat_i > log L_i) that many times more."""
    r = residuals(law, theta, data)
    return jnp.sum(_row_weights(r, data, asymmetry) * huber(r, delta))


def huber_log_normaliser(delta: float = DELTA) -> float:
    """log Z_delta, Z_delta = integral of exp(-Huber_delta(z)) dz
    = sqrt(2 pi)(1 - 2 Phi(-delta)) + 2 exp(-delta^2/2)/delta."""
    return math.log(math.sqrt(2 * math.pi) * (1 - 2 * float(ndtr(-delta)))
                    + 2 * math.exp(-0.5 * delta * delta) / delta)


def huber_nll(theta_sigma: jnp.ndarray, data: FitData, law: Law,
              delta: float = DELTA) -> jnp.ndarray:
    """Negative log-likelihood of the residuals under a Huber density of scale sigma;
    ``theta_sigma`` is theta followed by log sigma."""
    theta, log_sigma = theta_sigma[:-1], theta_sigma[-1]
    z = residuals(law, theta, data) * jnp.exp(-log_sigma)
    per_row = huber(z, delta) + huber_log_normaliser(delta) + log_sigma
    return jnp.sum(data.weights * per_row)


@functools.cache
def huber_fn(law: Law, delta: float = DELTA, asymmetry: float | None = None) -> Callable:
    """``huber_objective`` with law, delta and asymmetry bound: one object per setting, so
    the compiled solvers of :mod:`jaxscale.core.lbfgs` are reused."""
    return functools.partial(huber_objective, law=law, delta=delta, asymmetry=asymmetry)


@functools.cache
def nll_fn(law: Law, delta: float = DELTA) -> Callable:
    """``huber_nll`` with law and delta bound (one object per setting)."""
    return functools.partial(huber_nll, law=law, delta=delta)
