"""Intervals of a design target: bootstrap percentiles (reported) and Laplace (the design's own).

- :func:`bootstrap_interval`: the central interval of the target over the refits of R resamples of
  the fitted runs (:func:`jaxscale.fitting.bootstrap.bootstrap`, Besiroglu et al. 2024 Section 3;
  :func:`jaxscale.planning.refits.pooled_bootstrap`),
  percentiles over the converged refits where the target is defined. If more than
  :data:`MAX_UNDEFINED` of them leave it undefined (e.g. an exponent <= 0: no N*), the runs do not
  determine it and the interval is unbounded (-inf, inf), never a number.
- :func:`gaussian_interval`: estimate +- z sd, what a Gaussian belief implies
  (:func:`jaxscale.planning.selection.laplace_interval`: the sd from the delta method, what the
  design itself believes, cheap enough for every step).

Both are on the target's own scale (N*, D*, L: the quantity, its log Gaussian; a: as it is), and
:attr:`Interval.width` is in decades for a log target (log10 upper/lower), else upper - lower.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy.stats import norm

from jaxscale.core.numerics import float64
from jaxscale.fitting.bootstrap import BootstrapResult
from jaxscale.planning.targets import Target

#: Above this fraction of converged refits with the target undefined, the interval is unbounded.
MAX_UNDEFINED = 0.05


class Interval(NamedTuple):
    """A central interval of a target at ``level``: ``estimate`` (at the fit), ``lower``,
    ``upper`` (on the target's own scale) and whether the target is a ``log`` one."""

    estimate: float
    lower: float
    upper: float
    level: float
    log: bool

    @property
    def width(self) -> float:
        """log10(upper / lower) for a log target (decades), else upper - lower; inf if unbounded."""
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)):
            return math.inf
        return math.log10(self.upper / self.lower) if self.log else self.upper - self.lower

    def covers(self, value: float) -> bool:
        return self.lower <= value <= self.upper


@partial(jax.jit, static_argnums=0)
def _values(fn, vectors: jnp.ndarray) -> jnp.ndarray:
    return jax.vmap(fn)(vectors)


@float64
def target_values(target: Target, vectors: ArrayLike) -> np.ndarray:
    """[S] the target (on its design scale: log for N*, D*, L) at every row of ``vectors`` (S, p);
    NaN where it is undefined."""
    return np.asarray(_values(target.fn, jnp.atleast_2d(jnp.asarray(vectors, jnp.float64))))


def percentile_interval(estimate: float, draws: ArrayLike, level: float, log: bool) -> Interval:
    """The central ``level`` interval over ``draws`` (NaN = undefined; logs of the quantity when
    ``log``), unbounded when more than :data:`MAX_UNDEFINED` of them are undefined."""
    draws = np.asarray(draws, np.float64)
    defined = np.isfinite(draws)
    if not defined.any() or np.mean(~defined) > MAX_UNDEFINED:
        return Interval(estimate, -math.inf, math.inf, level, log)
    lo, hi = np.percentile(draws[defined], [50 * (1 - level), 50 * (1 + level)])
    value = np.exp if log else (lambda x: x)
    return Interval(estimate, float(value(lo)), float(value(hi)), level, log)


def bootstrap_interval(refits: BootstrapResult, target: Target, estimate: ArrayLike, level: float = 0.9) -> Interval:
    """The bootstrap percentile interval of ``target`` over ``refits`` (module docstring), around
    its value at the fit's vector ``estimate``."""
    draws = np.where(refits.converged, target_values(target, refits.vectors), np.nan)
    value = target_values(target, estimate)[0]
    return percentile_interval(float(target.value(value)), draws, level, target.log)


def gaussian_interval(scale: float, sd: float, level: float, log: bool) -> Interval:
    """scale +- z sd, z the normal quantile of ``level``, on the design scale (log for a ``log``
    target), as an :class:`Interval` on the target's own scale; unbounded where not finite."""
    half = float(norm.ppf(0.5 + level / 2)) * sd
    if not (math.isfinite(scale) and math.isfinite(half)):
        return Interval(math.nan, -math.inf, math.inf, level, log)
    value = math.exp if log else (lambda x: x)
    return Interval(value(scale), value(scale - half), value(scale + half), level, log)

