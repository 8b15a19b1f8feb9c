"""A law's compute-optimal allocation, for one parameter set or many draws of it.

One set of functions of (law, params) serves fits, bootstraps and posteriors alike; ``params``
is the law's NamedTuple, with a leading axis of draws where there are several
(:class:`jaxscale.laws.draws.Draws` holds such draws and says which are valid):

- :func:`optimal_allocation`: the compute-optimal allocation under C = 6 N D (Pearce & Song
  Eq. 11), N*(C) = argmin_N L(N, C/(6N)), D*(C) = C/(6 N*(C)) and the loss there, from the
  generic implicit-differentiation solver of :mod:`jaxscale.optimum.solver` (for Chinchilla it equals
  Eq. 4's N* = G (C/6)^a), for every draw at every budget, vmapped and jit-compiled;
- :func:`optimal_allocation_given_unique_tokens`: the same under a budget of unique tokens U_D
  too, for a law of (N, D, U_D) (Muennighoff et al. 2023's data-constrained law): N*, D*, the
  epochs D*/U_D, the loss, and the local exponents d log N*/d log C and d log N*/d log U_D;
- :func:`loss_draws`: the loss of planned runs under every draw;
- :func:`allocation_table`: N*, D* and D*/N* of a fit at given budgets with 95% bands over draws
  (:func:`jaxscale.core.intervals.interval`) and how far each lies outside the fitted runs
  (:mod:`jaxscale.optimum.extrapolation`).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.intervals import interval
from jaxscale.core.numerics import float64
from jaxscale.core.validation import check_positive
from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law
from jaxscale.optimum import solver as optimal
from jaxscale.optimum.extrapolation import beyond_the_runs
from jaxscale.support.compiled_programs import persistent_jit
from jaxscale.tables.table import RunsTable


class OptimalAllocation(NamedTuple):
    """Compute-optimal size, tokens and loss at each budget ([S, C] for S draws)."""

    c: np.ndarray
    n: np.ndarray
    d: np.ndarray
    loss: np.ndarray


def _numpy(tree):
    return jax.tree.map(np.asarray, tree)


def _float64(params: NamedTuple) -> NamedTuple:
    return jax.tree.map(lambda v: jnp.asarray(v, jnp.float64), params)


def check_nd(law: Law, held: tuple[str, ...] = ()) -> None:
    """Compute-optimal quantities need a law of model size and tokens D (C = 6 N D), and of
    nothing else but the inputs ``held`` fixed."""
    if law.inputs[1] != "D" or law.inputs[2:] != held:
        free = law.inputs[2 + len(held):]
        fix = f" (hold {', '.join(free)} fixed with law.given)" if free else ""
        *first, last = ("N", "D", *held)
        raise ValueError(f"compute-optimal allocation needs a law of {', '.join(first)} and {last}; "
                         f"{law.name} is of {law.inputs}{fix}")


def _allocation(law: Law, params: NamedTuple, c: jnp.ndarray) -> OptimalAllocation:
    n = jnp.where(law.exponents_positive(params), optimal.optimal_n(law, params, c), jnp.nan)
    d = c / (6.0 * n)
    return OptimalAllocation(c=c, n=n, d=d, loss=law.loss(n, d, params))


@partial(persistent_jit, static_argnums=0)
def _allocation_map(law: Law, draws: NamedTuple, c: jnp.ndarray) -> OptimalAllocation:
    return jax.vmap(_allocation, in_axes=(None, 0, None))(law, draws, c)


@float64
def optimal_allocation(law: Law, params: NamedTuple, c: ArrayLike) -> OptimalAllocation:
    """N*(C), D*(C) and L(N*, D*) at budgets ``c`` (FLOP): shape [C] for one parameter set,
    [S, C] when the fields of ``params`` are [S] arrays of draws. NaN for a parameter set with
    an exponent <= 0 (outside the law's definition: exponents are positive) or whose loss along
    the budget has no minimum (:func:`jaxscale.optimum.solver.optimal_log_n`)."""
    check_nd(law)
    check_positive("c", c)
    c = np.atleast_1d(np.asarray(c, np.float64))  # host arrays: converting them compiles nothing
    params = jax.tree.map(lambda v: np.asarray(v, np.float64), params)
    if np.ndim(params[0]) == 0:  # one compiled program, not one per operation: as one draw of many
        one = _numpy(_allocation_map(law, jax.tree.map(lambda v: v[None], params), c))
        return OptimalAllocation(c, *(v[0] for v in one[1:]))
    return _numpy(_allocation_map(law, params, c))._replace(c=c)


class RepeatedDataAllocation(NamedTuple):
    """The compute-optimal run at each budget ([C]) with U_D unique tokens: N*, D* = C/(6N*),
    the epochs D*/U_D, the loss, d log N*/d log C and d log N*/d log U_D (then d log D*/d log C
    = 1 - d log N*/d log C and d log D*/d log U_D = -d log N*/d log U_D). N*, D*, epochs and
    exponents are NaN where N* is not determined: the loss along the budget is flat, at the
    floor U_D allows, to float64 precision (``loss`` is then that floor)."""

    c: np.ndarray
    unique_tokens: float
    n: np.ndarray
    d: np.ndarray
    epochs: np.ndarray
    loss: np.ndarray
    n_exponent: np.ndarray
    n_unique_exponent: np.ndarray


def _log_n_given_unique(law: Law, params: NamedTuple, log_c: jnp.ndarray, log_u: jnp.ndarray) -> jnp.ndarray:
    return optimal.optimal_log_n(law.given(U_D=jnp.exp(log_u)), params, log_c)


@partial(jax.jit, static_argnums=0)
def _repeated_data_allocation(law: Law, params: NamedTuple, c: jnp.ndarray, u: jnp.ndarray) -> tuple:
    log_c, log_u = jnp.log(c), jnp.log(u)
    n = jnp.exp(optimal.stationary_log_n(law.given(U_D=u), params, log_c))  # on a flat floor: a point of it
    d = c / (6.0 * n)
    n_exponent = optimal.local_exponent(law.given(U_D=u), params, c)
    n_unique_exponent = jax.jacfwd(lambda v: _log_n_given_unique(law, params, log_c, v))(log_u)
    loss = law.given(U_D=u).loss(n, d, params)
    flat = ~(jnp.isfinite(n_exponent) & jnp.isfinite(n_unique_exponent))
    n, d, n_exponent, n_unique_exponent = (jnp.where(flat, jnp.nan, v) for v in (n, d, n_exponent, n_unique_exponent))
    return n, d, d / u, loss, n_exponent, n_unique_exponent


@float64
def optimal_allocation_given_unique_tokens(law: Law, params: NamedTuple, c: ArrayLike,
                                           unique_tokens: float) -> RepeatedDataAllocation:
    """Pearce & Song Eq. 11 with U_D unique tokens: N*(C; U_D) = argmin_N L(N, C/(6N); U_D) for
    a law of (N, D, U_D), by the generic solver of :mod:`jaxscale.optimum.solver` on
    ``law.given(U_D=unique_tokens)``, with its local exponents by implicit differentiation
    (``jax.grad`` in log C, ``jax.jacfwd`` in log U_D, through ``lax.custom_root``)."""
    check_nd(law, held=("U_D",))
    check_positive("c", c)
    check_positive("unique_tokens", unique_tokens)
    c = jnp.atleast_1d(jnp.asarray(c, jnp.float64))
    params = _float64(params)
    fields = _numpy(_repeated_data_allocation(law, params, c, jnp.asarray(unique_tokens, jnp.float64)))
    return RepeatedDataAllocation(np.asarray(c), float(unique_tokens), *fields)


@partial(jax.jit, static_argnums=0)
def _loss_map(law: Law, inputs: tuple[jnp.ndarray, ...], draws: NamedTuple) -> jnp.ndarray:
    return jax.vmap(lambda params: law.evaluate(params, *inputs))(draws)


@float64
def loss_draws(law: Law, draws: NamedTuple, *inputs: ArrayLike) -> np.ndarray:
    """[S, ...] loss of planned runs at the law's inputs, e.g. (N, D), under every draw ([S] fields).
    An input may be 0 where the law is defined there (the annealing area S2 before any annealing;
    a size of 0 has an infinite loss)."""
    if len(inputs) != len(law.inputs):
        raise ValueError(f"law {law.name!r} takes {len(law.inputs)} inputs {law.inputs}; got {len(inputs)}")
    for name, x in zip(law.inputs, inputs):
        check_positive(name, x, zero=True)
    return np.asarray(_loss_map(law, tuple(jnp.asarray(x, jnp.float64) for x in inputs), _float64(draws)))


def allocation_table(law: Law, params: NamedTuple, c: ArrayLike, draws: Draws | None = None,
                     runs: RunsTable | None = None) -> dict[str, np.ndarray]:
    """N*(C), D*(C) and D*/N* at budgets ``c`` under ``params`` (NaN where the law has no
    optimum: :func:`jaxscale.optimum.solver.optimal_log_n`); with ``draws`` (bootstrap refits or
    posterior draws), their 95% bands over the valid draws that have one (keys ``N_lo``,
    ``N_hi``, ...; the draws' interval, :meth:`~jaxscale.laws.draws.Draws.interval`) and the
    fraction of valid draws that have none (``undefined_fraction``); with the ``runs`` the law was
    fitted to, how far each optimum lies outside them
    (:func:`jaxscale.optimum.extrapolation.beyond_the_runs`)."""
    best = optimal_allocation(law, params, c)
    out = {"C": best.c, "N": best.n, "D": best.d, "tokens_per_param": best.d / best.n}
    if draws is not None:
        spread = optimal_allocation(law, draws.used, c)
        for key, values in (("N", spread.n), ("D", spread.d), ("tokens_per_param", spread.d / spread.n)):
            out[f"{key}_lo"], out[f"{key}_hi"] = interval(values, method=draws.interval_method)
        out["undefined_fraction"] = np.mean(np.isnan(spread.n), axis=0)
    if runs is not None:
        out.update(beyond_the_runs(out, runs.n, runs.d))
    return out
