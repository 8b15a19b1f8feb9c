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

**Any number of rows.** Both are sums over rows, taken :data:`ROWS_PER_CHUNK` rows at a time
(:func:`row_sum`): the memory an evaluation and its derivatives need beyond the data is that of one
chunk per start, whatever the size of the table.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.laws.law import Law

DELTA = 1e-3
#: Rows an objective sums at once (:func:`row_sum`). Chunks of 1024 rows were the fastest of 1024, 4096
#: and 16384 for 32 vmapped starts on 16k and 262k rows (value and gradient, 2-core CPU), and as fast as
#: one sum over 16k rows.
ROWS_PER_CHUNK = 16384


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


def row_sum(per_row: Callable[[FitData], jnp.ndarray], data: FitData, chunk: int = ROWS_PER_CHUNK) -> jnp.ndarray:
    """sum_i per_row(data)_i over the rows of ``data``, ``chunk`` rows at a time.

    Up to ``chunk`` rows are summed at once. More are cut into chunks of ``chunk`` rows (the last
    filled up with copies of the last row at weight 0, which add nothing) and summed one after the
    other (``lax.scan``); each chunk's terms are recomputed in the backward pass
    (``jax.checkpoint``) instead of being stored, so no derivative of any order holds more than
    one chunk's terms. The sum is the same up to the order of the additions.
    """
    rows = data.log_y.shape[-1]
    if rows <= chunk:
        return jnp.sum(per_row(data))
    pad = -rows % chunk

    def cut(x: jnp.ndarray, mode: str = "edge") -> jnp.ndarray:
        return jnp.pad(x, (0, pad), mode=mode).reshape(-1, chunk)

    chunks = FitData(tuple(cut(x) for x in data.log_x), cut(data.log_y), cut(data.weights, "constant"))

    @jax.checkpoint
    def add(total: jnp.ndarray, part: FitData) -> tuple[jnp.ndarray, None]:
        return total + jnp.sum(per_row(part)), None

    return jax.lax.scan(add, jnp.zeros((), data.log_y.dtype), chunks)[0]


def residuals(law: Law, theta: jnp.ndarray, data: FitData) -> jnp.ndarray:
    """log L - log Lhat at the law's vector ``theta``: positive where the law under-predicts."""
    return data.log_y - law.log_loss(law.from_vector(theta), *data.log_x)


def _row_weights(r: jnp.ndarray, data: FitData, asymmetry: float | None) -> jnp.ndarray:
    if asymmetry is None:
        return data.weights
    return data.weights * jnp.where(r < 0, asymmetry, 1.0)


def huber_terms(theta: jnp.ndarray, data: FitData, law: Law, delta: float = DELTA,
                asymmetry: float | None = None) -> jnp.ndarray:
    """The terms w_i Huber_delta(log L_i - log Lhat_i) of :func:`huber_objective`, one per row."""
    r = residuals(law, theta, data)
    return _row_weights(r, data, asymmetry) * huber(r, delta)


def huber_objective(theta: jnp.ndarray, data: FitData, law: Law, delta: float = DELTA,
                    asymmetry: float | None = None, chunk: int = ROWS_PER_CHUNK) -> jnp.ndarray:
    """sum_i w_i Huber_delta(log L_i - log Lhat_i); ``asymmetry`` > 1 weighs over-predictions
    (log Lhat_i > log L_i) that many times more; summed ``chunk`` rows at a time (:func:`row_sum`)."""
    return row_sum(lambda rows: huber_terms(theta, rows, law, delta, asymmetry), data, chunk)


def huber_log_normaliser(delta: float = DELTA) -> float:
    """log Z_delta, Z_delta = integral of exp(-Huber_delta(z)) dz
    = sqrt(2 pi)(1 - 2 Phi(-delta)) + 2 exp(-delta^2/2)/delta."""
    tail = 0.5 * math.erfc(delta / math.sqrt(2))  # Phi(-delta)
    return math.log(math.sqrt(2 * math.pi) * (1 - 2 * tail)
                    + 2 * math.exp(-0.5 * delta * delta) / delta)


def huber_nll(theta_sigma: jnp.ndarray, data: FitData, law: Law, delta: float = DELTA,
              chunk: int = ROWS_PER_CHUNK) -> jnp.ndarray:
    """Negative log-likelihood of the residuals under a Huber density of scale sigma;
    ``theta_sigma`` is theta followed by log sigma; summed ``chunk`` rows at a time (:func:`row_sum`)."""
    theta, log_sigma = theta_sigma[:-1], theta_sigma[-1]

    def per_row(rows: FitData) -> jnp.ndarray:
        z = residuals(law, theta, rows) * jnp.exp(-log_sigma)
        return rows.weights * (huber(z, delta) + huber_log_normaliser(delta) + log_sigma)

    return row_sum(per_row, data, chunk)


def huber_fn(law: Law, delta: float = DELTA, asymmetry: float | None = None) -> Callable:
    """``huber_objective`` with law, delta, asymmetry and the chunk size (:data:`ROWS_PER_CHUNK`
    when called) bound: one object per setting, so the compiled solvers of
    :mod:`jaxscale.core.lbfgs` are reused."""
    return _bound(huber_objective, law, ROWS_PER_CHUNK, delta=delta, asymmetry=asymmetry)


def nll_fn(law: Law, delta: float = DELTA) -> Callable:
    """``huber_nll`` with law, delta and the chunk size bound (one object per setting)."""
    return _bound(huber_nll, law, ROWS_PER_CHUNK, delta=delta)


@functools.cache
def _bound(fun: Callable, law: Law, chunk: int, **settings: float | None) -> Callable:
    return functools.partial(fun, law=law, chunk=chunk, **settings)
