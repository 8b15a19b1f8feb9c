"""Least-squares power laws in log space: y = k x**e  <=>  log y = log k + e log x."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike


class PowerLaw(NamedTuple):
    """y = coefficient * x**exponent."""

    exponent: jnp.ndarray
    coefficient: jnp.ndarray

    def __call__(self, x: ArrayLike) -> ArrayLike:
        return self.coefficient * x**self.exponent


def fit_power_law(x: ArrayLike, y: ArrayLike, weights: ArrayLike | None = None) -> PowerLaw:
    """Ordinary (optionally weighted) least squares of log y on log x, as ``numpy.polyfit(log x,
    log y, 1)`` does; pure JAX, so it can be jitted and vmapped. Zero weights drop points (e.g.
    budgets with no model on a frontier)."""
    lx, ly = jnp.log(jnp.asarray(x)), jnp.log(jnp.asarray(y))
    w = jnp.ones_like(lx) if weights is None else jnp.asarray(weights, lx.dtype)
    ly = jnp.where(w > 0, ly, 0.0)  # keep masked-out infinities out of the sums
    mx = jnp.sum(w * lx) / jnp.sum(w)
    my = jnp.sum(w * ly) / jnp.sum(w)
    slope = jnp.sum(w * (lx - mx) * (ly - my)) / jnp.sum(w * (lx - mx) ** 2)
    return PowerLaw(exponent=slope, coefficient=jnp.exp(my - slope * mx))
