"""Which law parameter drives a prediction? Elasticities by automatic differentiation.

For positive derived quantities q_j(theta) (the compute-optimal size at 1e24 FLOP, the loss of
a planned run, the reconciled exponent, ...) and law parameters theta_k > 0, the elasticity

    e_jk = d log q_j / d log theta_k = (theta_k / q_j) dq_j/dtheta_k

is the percentage change of q_j per percent change of theta_k: unitless, so A (hundreds), alpha
(tenths) and E compare directly. It is taken by ``jax.jacfwd`` in log theta (one forward pass
per parameter for all quantities at once), through implicit solves too
(:mod:`jaxscale.optimum.solver`).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.core.validation import check_params_positive, check_positive

P = TypeVar("P", bound=NamedTuple)


@float64
def values_and_elasticities(quantities: Callable[[P], jnp.ndarray], at: P) -> tuple[np.ndarray, np.ndarray]:
    """The [Q] values and the (Q, K) matrix of d log q_j / d log theta_k at ``at``, for
    ``quantities`` mapping the parameter NamedTuple (K fields) to a [Q] vector of positive
    values, differentiable in JAX (one compiled forward-mode pass for both)."""
    check_params_positive(at)
    fields = type(at)

    def log_q(log_theta: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        q = quantities(fields(*jnp.exp(log_theta)))
        return jnp.log(q), q

    log_theta = jnp.log(jnp.asarray([float(v) for v in at], jnp.float64))
    matrix, values = jax.jit(jax.jacfwd(log_q, has_aux=True))(log_theta)
    check_positive("quantities at the evaluation point", np.asarray(values))
    return np.asarray(values), np.asarray(matrix)


def elasticities(quantity: Callable[[P], ArrayLike], at: P) -> dict[str, float]:
    """d log q / d log theta_k at ``at`` for every field theta_k of the parameter NamedTuple.

    ``quantity`` maps law parameters to a positive scalar and must be differentiable in JAX."""
    row = values_and_elasticities(lambda p: jnp.atleast_1d(quantity(p)), at)[1][0]
    return {name: float(e) for name, e in zip(at._fields, row)}
