"""Power laws of the compute-efficient frontier, N*(C) = k_N C^a and D*(C) = k_D C^b, fitted
to its points (C, N*) found by Approaches 1 and 2 of Hoffmann et al. (2022).

With D* = C / (6 N*) (Pearce & Song 2024, Eq. 3), least squares in log space gives a + b = 1
exactly. Intervals are the 2.5-97.5 percentiles of a and b over bootstrap resamples of the
points: each resample is a vector of multinomial counts over the points, used as weights of
the same least-squares fit, and all resamples are refitted in one ``vmap``. (A law's own
compute-optimal allocation, from its parameters, is :mod:`jaxscale.optimum.allocation`.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.intervals import interval
from jaxscale.core.power_law import PowerLaw, fit_power_law

Interval = tuple[float, float]


@dataclass(frozen=True)
class FrontierLaws:
    """Optimal points (C, N*, loss at N*) and the power laws fitted to them.

    ``a``, ``b`` and the coefficients are None where no law is defined (an Approach-1 frontier
    that holds too few model sizes); the intervals are None without a bootstrap.
    """

    method: str
    c: np.ndarray
    n_opt: np.ndarray
    loss: np.ndarray
    seconds: float
    a: float | None = None
    n_coefficient: float | None = None
    b: float | None = None
    d_coefficient: float | None = None
    a_interval: Interval | None = None
    b_interval: Interval | None = None
    undefined_fraction: float | None = None  # bootstrap resamples with no exponent (Approach 1 over runs)
    slices: tuple | None = None  # Approach 2: every isoFLOP slice (jaxscale.fitting.approach2.Slice)

    @property
    def d_opt(self) -> np.ndarray:
        """D* = C / (6 N*)."""
        return self.c / (6.0 * self.n_opt)

    @property
    def sizes(self) -> np.ndarray:
        """The distinct optimal sizes N*: for Approach 1, the model sizes on the frontier."""
        return np.unique(self.n_opt)

    def summary(self) -> dict:
        intervals = {} if self.a_interval is None else {"ci95": {"a": self.a_interval, "b": self.b_interval}}
        if self.undefined_fraction is not None:
            intervals["bootstrap_undefined_fraction"] = self.undefined_fraction
        if self.slices is not None:
            intervals["slices"] = [s._asdict() for s in self.slices]
        return {"a": self.a, "b": self.b, "n_coefficient": self.n_coefficient,
                "d_coefficient": self.d_coefficient, "n_points": len(self.c), "n_sizes": len(self.sizes),
                **intervals, "seconds": self.seconds}


def power_laws(c: jnp.ndarray, n_opt: jnp.ndarray, weights: jnp.ndarray | None = None) -> tuple[PowerLaw, PowerLaw]:
    """N* = k_N C^a and D* = C / (6 N*) = k_D C^b by (weighted) least squares in log space."""
    return fit_power_law(c, n_opt, weights), fit_power_law(c, c / (6.0 * n_opt), weights)


def percentile_intervals(c: jnp.ndarray, n_opt: jnp.ndarray, resamples: int, seed: int) -> tuple[Interval, Interval]:
    """95% percentile intervals of a and b over ``resamples`` bootstrap resamples of the points."""
    k = len(c)
    counts = np.random.default_rng(seed).multinomial(k, np.full(k, 1.0 / k), size=resamples)

    def exponents(weights: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        n_law, d_law = power_laws(c, n_opt, weights)
        return n_law.exponent, d_law.exponent

    a, b = jax.vmap(exponents)(jnp.asarray(counts, jnp.float64))
    return exponent_interval(a), exponent_interval(b)


def exponent_interval(draws: jnp.ndarray) -> Interval:
    """The 95% percentile interval of an exponent over resamples where it is defined
    (:func:`jaxscale.core.intervals.interval`), as floats."""
    lo, hi = interval(np.asarray(draws))
    return float(lo), float(hi)


def fit_frontier_laws(method: str, c: np.ndarray, n_opt: np.ndarray, loss: np.ndarray, started: float,
                    *, bootstrap: int = 0, seed: int = 0) -> FrontierLaws:
    """Fit N* = k_N C^a and D* = k_D C^b to the points, with percentile intervals over
    ``bootstrap`` resamples (none if 0); ``started`` is the ``time.perf_counter()`` of the fit's start."""
    if len(c) < 2:
        raise ValueError(f"{method}: {len(c)} budget(s) with an interior optimum; need at least 2 "
                         "to fit a power law (add runs at more budgets or model sizes)")
    c64, n64 = jnp.asarray(c, jnp.float64), jnp.asarray(n_opt, jnp.float64)
    n_law, d_law = power_laws(c64, n64)
    a_interval, b_interval = percentile_intervals(c64, n64, bootstrap, seed) if bootstrap else (None, None)
    return FrontierLaws(
        method=method, c=c, n_opt=n_opt, loss=loss, seconds=time.perf_counter() - started,
        a=float(n_law.exponent), n_coefficient=float(n_law.coefficient),
        b=float(d_law.exponent), d_coefficient=float(d_law.coefficient),
        a_interval=a_interval, b_interval=b_interval,
    )
