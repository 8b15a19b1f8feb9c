"""Centred coordinates for the Huber fits: each intercept measured at the data's mean log input.

In ``A N^-alpha`` the intercept log A and the slope alpha are nearly collinear (log N of the
Chinchilla runs spans only ~18-23), so the objective is a long thin valley in (log A, alpha),
which costs L-BFGS many iterations. For the triples (intercept, slope, k) a law names in
:attr:`~jaxscale.laws.law.Law.centred` (the same ones the Bayesian model centres, see
:mod:`jaxscale.inference.law_model`), the fits therefore minimise over the centred vector u with::

    u_intercept = theta_intercept - theta_slope * m_k,   m_k = sum_i w_i log x_k,i / sum_i w_i,

every other coordinate unchanged: a linear change of variables with unit Jacobian, so the
minimum and its value are those of theta; only the path of the optimiser changes. ``m_k`` is the
row-weighted mean, so a bootstrap resample is centred on its own runs. On Epoch's 240 runs it
cuts the iterations of a warm-started bootstrap refit from 87 to 51 on average and of the
4500-start grid from 90 to 72 (``benchmarks/bench_fit.py``). Laws that name no triple are
fitted in theta itself.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core import lbfgs
from jaxscale.fitting.objective import FitData
from jaxscale.laws.law import Law, array_module


def centres(data: FitData) -> jnp.ndarray:
    """(..., k) row-weighted means of the log of each of the law's k inputs (a leading batch axis
    is kept; NumPy in, NumPy out). Rows of weight 0 (not drawn, or padding) count for nothing,
    even where a log input is -inf (the annealing area S2 = 0 of a schedule not yet annealed)."""
    xp = array_module(*data.log_x, data.log_y, data.weights)
    total = xp.sum(data.weights, axis=-1)
    drawn = data.weights > 0
    return xp.stack([xp.sum(data.weights * xp.where(drawn, x, 0.0), axis=-1) / total for x in data.log_x], -1)


def _shift(law: Law, vector: ArrayLike, m: ArrayLike, sign: float) -> jnp.ndarray:
    """vector with ``sign * slope * m_k`` added to each centred intercept (NumPy in, NumPy out:
    no compilation for the host-side conversions)."""
    xp = array_module(vector, m)
    vector, m = xp.asarray(vector), xp.asarray(m)
    names = law.vector_names
    if {s for _, s, _ in law.centred} & {i for i, _, _ in law.centred}:
        raise ValueError(f"law {law.name!r}: a centred slope is itself a centred intercept")
    shifts = {names.index(intercept): (names.index(slope), k) for intercept, slope, k in law.centred}
    columns = [vector[..., i] + sign * vector[..., shifts[i][0]] * m[..., shifts[i][1]] if i in shifts
               else vector[..., i] for i in range(vector.shape[-1])]
    return xp.stack(columns, -1)


def centre(law: Law, theta: ArrayLike, m: ArrayLike) -> jnp.ndarray:
    """The centred vector u of the law's vector(s) ``theta`` (..., p) at centres ``m`` (..., k)."""
    return _shift(law, theta, m, -1.0)


def uncentre(law: Law, u: ArrayLike, m: ArrayLike) -> jnp.ndarray:
    """The law's vector theta of centred vector(s) ``u`` (inverse of :func:`centre`: slopes are
    never intercepts, so each shift reads an unshifted slope)."""
    return _shift(law, u, m, 1.0)


@functools.cache
def centred_fn(fun: Callable, law: Law) -> Callable:
    """``fun(theta, data)`` as a function of the centred vector, ``(u, data) -> fun(theta, data)``,
    centred on ``data`` itself (one object per (fun, law), so compiled solvers are reused)."""

    def centred(u: jnp.ndarray, data: FitData) -> jnp.ndarray:
        return fun(uncentre(law, u, centres(data)), data)

    centred.__program_key__ = lambda: (centred_fn, fun, law)  # names its compiled programs on disk
    return centred


def solve_centred(objective: Callable, law: Law, starts: ArrayLike, data: FitData, options: lbfgs.Options,
                  memory: lbfgs.Memory | None = None, **solver: Any) -> tuple[lbfgs.Solution, np.ndarray]:
    """Minimise ``objective(theta, data)`` from every start (rows of ``starts`` in the law's
    vector coordinates) in coordinates centred on ``data`` (on each data set's own centres when
    ``data`` is batched): centre the starts, solve with :func:`jaxscale.core.lbfgs.solver`
    (``solver`` are its keyword arguments, ``memory`` its curvature pairs), uncentre.

    Returns:
        The solution, as NumPy (its ``theta`` and ``memory`` in centred coordinates), and the
        solutions in the law's vector coordinates, (k, p).
    """
    m = centres(data)
    solve = lbfgs.solver(centred_fn(objective, law), options, **solver)
    sol = jax.tree.map(np.asarray, solve(centre(law, starts, m), data, memory))
    return sol, uncentre(law, sol.theta, m)
