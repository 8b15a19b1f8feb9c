"""The optimal learning rate and batch size of a joint law L(N, D, eta, B), for a fit or its draws.

For a :class:`~jaxscale.laws.law.Law` of inputs (N, D, eta, batch), e.g.
:mod:`jaxscale.laws.hparam_bowl`, the optimum at given (N, D) is

    (eta*, B*)(N, D) = argmin_(eta, B) L(N, D, eta, B),

found by :func:`jaxscale.optimum.solver.optimal_log_inputs` (Newton steps in (log eta, log B),
implicit differentiation through ``jax.lax.custom_root``) without the law's closed form. Its local
exponents d log eta*/d log N, d log eta*/d log D, d log B*/d log D are ``jax.jacfwd`` through the
same solve, and every function here is vmapped over posterior or bootstrap draws.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.laws.law import Law
from jaxscale.optimum.solver import optimal_log_inputs

#: The free inputs of a joint law, and the inputs held fixed.
FREE, FIXED = ("eta", "batch"), ("N", "D")
#: Where the Newton steps start: a learning rate of 1e-3 and a batch of a million tokens.
GUESS = (float(np.log(1e-3)), float(np.log(1e6)))


class Optimum(NamedTuple):
    """eta* and B* (tokens), the loss there, and the local exponents d log eta*/d log N,
    d log eta*/d log D, d log B*/d log N, d log B*/d log D (NaN where there is no minimum)."""

    lr: jnp.ndarray
    batch: jnp.ndarray
    loss: jnp.ndarray
    lr_exponent_n: jnp.ndarray
    lr_exponent_d: jnp.ndarray
    batch_exponent_n: jnp.ndarray
    batch_exponent_d: jnp.ndarray


def check_joint(law: Law) -> None:
    """The law is one of (N, D, eta, batch), whose optimum in (eta, batch) this module finds."""
    if law.inputs != (*FIXED, *FREE):
        raise ValueError(f"the optimal learning rate and batch size need a law of {(*FIXED, *FREE)}; "
                         f"{law.name} is of {law.inputs}")


def optimal_log_hyperparameters(law: Law, params: Any, log_n: ArrayLike, log_d: ArrayLike) -> jnp.ndarray:
    """[..., 2]: (log eta*, log B*) at each (log N, log D), by the implicit-differentiation solver."""
    log_n, log_d = jnp.broadcast_arrays(jnp.asarray(log_n), jnp.asarray(log_d))
    guess = [jnp.full_like(log_n, g) for g in GUESS]
    return optimal_log_inputs(law, params, [log_n, log_d, *guess], FREE)


def _optimum(law: Law, params: Any, log_n: jnp.ndarray, log_d: jnp.ndarray) -> Optimum:
    z = optimal_log_hyperparameters(law, params, log_n, log_d)
    # each point's optimum depends on its own (N, D) alone: one tangent of ones gives every point's slope
    ones = jnp.ones_like(log_n)
    d_n = jax.jvp(lambda x: optimal_log_hyperparameters(law, params, x, log_d), (log_n,), (ones,))[1]
    d_d = jax.jvp(lambda x: optimal_log_hyperparameters(law, params, log_n, x), (log_d,), (ones,))[1]
    loss = jnp.exp(law.log_loss(params, log_n, log_d, z[..., 0], z[..., 1]))
    return Optimum(jnp.exp(z[..., 0]), jnp.exp(z[..., 1]), loss, d_n[..., 0], d_d[..., 0], d_n[..., 1], d_d[..., 1])


@partial(jax.jit, static_argnums=0)
def _optimum_draws(law: Law, draws: Any, log_n: jnp.ndarray, log_d: jnp.ndarray) -> Optimum:
    return jax.vmap(lambda p: _optimum(law, p, log_n, log_d))(draws)


#: Draws solved per call: posterior draws go through in chunks of this many (the last padded with
#: its final draw), one compiled program for all. In one program, 4,000 draws x 17 points never
#: returned on a CPU (XLA's intra-op thread pool idle, jax 0.10.2), 3,000 x 17 did in 5 s.
DRAW_CHUNK = 1024


def _in_chunks(law: Law, draws: Any, log_n: jnp.ndarray, log_d: jnp.ndarray) -> Optimum:
    count = int(np.shape(draws[0])[0])
    size = min(count, DRAW_CHUNK)
    padded = -(-count // size) * size
    draws = jax.tree.map(lambda v: jnp.concatenate([v, jnp.repeat(v[-1:], padded - count, axis=0)]), draws)
    parts = [jax.tree.map(np.asarray, _optimum_draws(law, jax.tree.map(lambda v: v[i:i + size], draws), log_n, log_d))
             for i in range(0, padded, size)]
    return jax.tree.map(lambda *v: np.concatenate(v)[:count], *parts)


@float64
def optimum(law: Law, params: Any, n: ArrayLike, d: ArrayLike) -> Optimum:
    """eta*, B*, the loss there and the local exponents at each (N, D) ([P] for P points), for one
    parameter set, or for draws ([S] fields give [S, P])."""
    check_joint(law)
    log_n = jnp.log(jnp.atleast_1d(jnp.asarray(n, jnp.float64)))
    log_d = jnp.log(jnp.atleast_1d(jnp.asarray(d, jnp.float64)))
    log_n, log_d = jnp.broadcast_arrays(log_n, log_d)
    params = jax.tree.map(lambda v: jnp.asarray(v, jnp.float64), params)
    single = np.ndim(params[0]) == 0
    out = _in_chunks(law, jax.tree.map(lambda v: v[None], params) if single else params, log_n, log_d)
    return jax.tree.map(lambda v: v[0], out) if single else out


@float64
def loss_increase(law: Law, params: Any, n: ArrayLike, d: ArrayLike, lr_factor: float = 1.0,
                  batch_factor: float = 1.0) -> np.ndarray:
    """L(N, D, f eta*, g B*) / L(N, D, eta*, B*) - 1 at each (N, D): the loss lost by a learning rate
    off by ``lr_factor`` and a batch off by ``batch_factor`` (how flat the bowl is)."""
    best = optimum(law, params, n, d)
    log_n, log_d = np.log(np.asarray(n, np.float64)), np.log(np.asarray(d, np.float64))
    off = law.log_loss(params, log_n, log_d, np.log(best.lr * lr_factor), np.log(best.batch * batch_factor))
    return np.asarray(np.exp(off) / best.loss - 1.0)
