"""Power laws of the compute-optimal allocation, N*(C) = k_N C^a and D*(C) = k_D C^b,
from points (C, N*) found by Approaches 1 and 2 of Hoffmann et al. (2022)."""

from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np

from jaxscale.power_law import fit_power_law


@dataclass(frozen=True)
class AllocationLaws:
    """Optimal points (C, N*, D*, loss at N*) and the power laws fitted to them."""

    method: str
    c: np.ndarray
    n_opt: np.ndarray
    d_opt: np.ndarray
    loss: np.ndarray
    a: float
    n_coefficient: float
    b: float
    d_coefficient: float
    seconds: float

    def summary(self) -> dict[str, float]:
        return {"a": self.a, "b": self.b, "n_coefficient": self.n_coefficient,
                "d_coefficient": self.d_coefficient, "n_points": len(self.c), "seconds": self.seconds}


def allocation_laws(method: str, c: np.ndarray, n_opt: np.ndarray, loss: np.ndarray,
                    seconds: float) -> AllocationLaws:
    """Fit N* = k_N C^a and D* = C/(6 N*) = k_D C^b (least squares in log space)."""
    if len(c) < 2:
        raise ValueError(f"{method}: {len(c)} budget(s) with an interior optimum; need at least 2 "
                         "to fit a power law (add runs at more budgets or model sizes)")
    d_opt = c / (6.0 * n_opt)
    c64 = jnp.asarray(c, jnp.float64)
    n_law = fit_power_law(c64, jnp.asarray(n_opt, jnp.float64))
    d_law = fit_power_law(c64, jnp.asarray(d_opt, jnp.float64))
    return AllocationLaws(
        method=method, c=c, n_opt=n_opt, d_opt=d_opt, loss=loss,
        a=float(n_law.exponent), n_coefficient=float(n_law.coefficient),
        b=float(d_law.exponent), d_coefficient=float(d_law.coefficient), seconds=seconds,
    )
