"""Generic compute-optimal allocation for any loss law, by a differentiable root solve.

For a law L(N, D; θ) written as a JAX function, the compute-optimal model size under the budget
C = 6 N D is (Pearce & Song Eq. 11)::

    N*(C) = argmin_N L(N, C / (6 N); θ).

Writing x = log N and y = log C, the loss along the budget is h(x; y) = L(e^x, e^(y - log 6 - x))
and the optimum is the root of the stationarity residual F(x, y) = ∂h/∂x (from ``jax.grad``).
This module never uses a closed form:

- :func:`optimal_log_n` solves F(x, y) = 0 for x at given y (safeguarded Newton, see
  :func:`_newton_bisect`), wrapped in :func:`jax.lax.custom_root` so derivatives come from the
  implicit function theorem: dx*/dy = -F_y / F_x, and dx*/dθ likewise; NaN where that root is
  not a minimum (:func:`stationary_log_n` is the root itself).
- :func:`optimal_log_compute` solves the same F(x, y) = 0 for y at given x: the budget at which a
  model of size N is compute-optimal (Pearce & Song Eq. 16 is its closed form for Eq. 15).
- :func:`local_exponent` is d log N*/d log C at a budget C, and :func:`local_exponent_at_n` the same
  quantity at an optimal size N*, g of Pearce & Song Eq. 17, both by ``jax.grad`` through the
  implicit solve.
- :func:`optimal_log_inputs` is the unconstrained optimum of a law of more inputs in some of them
  with the others fixed, e.g. the learning rate and batch size that minimise L(N, D, eta, B) at a
  given (N, D): the root z* of the gradient G(z; x) of log L in the free log inputs z, by
  safeguarded Newton steps (:func:`_newton_descent`), in the same ``jax.lax.custom_root``, so
  dz*/dx = -G_z^(-1) G_x (the tangent solve is the k x k Hessian's, per point).

``law`` is a :class:`~jaxscale.laws.law.Law` of (N, D), whose ``log_loss`` is then minimised
directly in log space (same minimiser, finite over the whole bracket, no exp/log round trip), or
any elementwise function ``law(n, d, params)``. Laws must act elementwise (broadcasting) on n and
d; then every function here accepts arrays of budgets or sizes directly, and is jit/vmap-able
over parameter pytrees too. The closed forms (Eq. 14, 16, 17) are what the tests check these
against.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws.law import Law as LawType

#: A loss law: a :class:`~jaxscale.laws.law.Law`, or ``law(n, d, params) -> loss``, pure and
#: differentiable in n and d.
Law = LawType | Callable[[jnp.ndarray, jnp.ndarray, Any], jnp.ndarray]

LOG6 = math.log(6.0)
#: Natural-log bounds on any model size or token count the solvers consider: 1e-100 to 1e304.
#: Laws of this family can put D* at N**(alpha/beta), far from N = D, so the brackets are set
#: by what float64 can represent (e^709 is its limit), not by a distance from N = D. These
#: solvers are meant to run under x64 (see :mod:`jaxscale.core.numerics`). The roots are exact over
#: that whole range, but *derivatives* (local exponents) need the law's second derivatives, and
#: for a law written in N and D autodiff forms terms like D**(-beta-2), which underflow beyond
#: D ~ 1e140: keep sizes and token counts below ~1e100 when you differentiate.
LOG_MIN, LOG_MAX = -230.0, 700.0
_MAX_ITER = 200
#: A root within this relative distance of the bracket's edge is the edge: F kept one sign (the
#: solves stop at 1e-14; no law of this family has its optimum at N or D = e^-230 or e^700).
EDGE = 1e-6


def loss_along_budget(law: Law, params: Any, log_n: ArrayLike, log_c: ArrayLike) -> jnp.ndarray:
    """h(x; y) = L(e^x, e^(y - log 6 - x)): the loss of size N = e^x trained with C = e^y FLOP
    (its logarithm for a :class:`~jaxscale.laws.law.Law`: a monotone map, same optimum)."""
    log_d = log_c - LOG6 - log_n
    if isinstance(law, LawType):
        return law.log_loss(params, log_n, log_d)
    return law(jnp.exp(log_n), jnp.exp(log_d), params)


def stationarity(law: Law, params: Any, log_n: ArrayLike, log_c: ArrayLike) -> jnp.ndarray:
    """F(x, y) = ∂h/∂x, zero at the compute-optimal size (Pearce & Song Eq. 11).

    Laws act elementwise on (n, d), so the gradient of the summed loss is the elementwise
    derivative and every function here works on arrays of budgets or sizes directly."""
    return jax.grad(lambda x: jnp.sum(loss_along_budget(law, params, x, log_c)))(log_n)


def _newton_bisect(f: Callable[[jnp.ndarray], jnp.ndarray], lo: jnp.ndarray, hi: jnp.ndarray,
                   x0: jnp.ndarray, xtol: float) -> jnp.ndarray:
    """Root of a scalar function with a sign change on [lo, hi]: Newton steps, falling back to
    bisection whenever a step leaves the current bracket ("rtsafe", Numerical Recipes §9.4).

    Converges for any continuous f with a single sign change, quadratically near a simple root.
    """
    f_lo = f(lo)
    orient = jnp.where(f_lo > 0, -1.0, 1.0)  # make g = orient * f negative at lo

    def g_and_slope(x):
        value, slope = jax.jvp(f, (x,), (jnp.ones_like(x),))
        return orient * value, orient * slope

    def cond(state):
        i, x, _, _, step = state
        return (i < _MAX_ITER) & jnp.any(jnp.abs(step) > xtol * (1.0 + jnp.abs(x)))

    def body(state):
        i, x, lo, hi, _ = state
        gx, slope = g_and_slope(x)
        lo = jnp.where(gx < 0, x, lo)
        hi = jnp.where(gx > 0, x, hi)
        newton = x - gx / slope
        inside = (newton >= lo) & (newton <= hi) & jnp.isfinite(newton)
        x_new = jnp.where(inside, newton, 0.5 * (lo + hi))
        x_new = jnp.where(gx == 0, x, x_new)
        return i + 1, x_new, lo, hi, x_new - x

    x0 = jnp.clip(x0, lo, hi)
    init = (0, x0, lo, hi, jnp.full_like(x0, jnp.inf))
    return jax.lax.while_loop(cond, body, init)[1]


def _scalar_tangent_solve(g: Callable[[jnp.ndarray], jnp.ndarray], y: jnp.ndarray) -> jnp.ndarray:
    return y / g(jnp.ones_like(y))


def log_n_bracket(log_c: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """The x = log N that keep N and D = C/(6N) both in [e^LOG_MIN, e^LOG_MAX]."""
    return jnp.maximum(LOG_MIN, log_c - LOG6 - LOG_MAX), jnp.minimum(LOG_MAX, log_c - LOG6 - LOG_MIN)


def stationary_log_n(law: Law, params: Any, log_c: ArrayLike, *, log_n_guess: ArrayLike | None = None,
                     xtol: float = 1e-14) -> jnp.ndarray:
    """The root in x of F(x, log C) on :func:`log_n_bracket` (its edge where F keeps one sign),
    whether or not it is a minimum: :func:`optimal_log_n` says which. Differentiable by implicit
    differentiation in ``log_c`` and in ``params``. ``log_n_guess`` only speeds convergence
    (default N = D); the bracket guarantees it."""
    log_c = jnp.asarray(log_c)
    lo, hi = log_n_bracket(log_c)
    guess = 0.5 * (log_c - LOG6) if log_n_guess is None else jnp.asarray(log_n_guess, log_c.dtype)

    def residual(x):
        return stationarity(law, params, x, log_c)

    def solve(f, x0):
        return _newton_bisect(f, jax.lax.stop_gradient(lo), jax.lax.stop_gradient(hi), x0, xtol)

    return jax.lax.custom_root(residual, guess, solve, _scalar_tangent_solve)


def optimal_log_n(law: Law, params: Any, log_c: ArrayLike, **solve: Any) -> jnp.ndarray:
    """log N*(C): the stationary point of the loss along the budget (:func:`stationary_log_n`,
    which takes ``solve``'s options), differentiable in ``log_c`` and ``params``. NaN where the
    loss along the budget has no minimum there: F keeps one sign over the bracket, so the solve
    ends at its edge (e.g. a fitted beta <= 0, a loss that does not fall with D), F is flat or
    falls through 0 (a maximum), or the loss is not finite (e.g. a scale that overflowed to inf)."""
    log_c = jnp.asarray(log_c)
    x = stationary_log_n(law, params, log_c, **solve)
    lo, hi = log_n_bracket(log_c)
    at = jax.lax.stop_gradient(x)
    _, curvature = jax.jvp(lambda v: stationarity(law, params, v, log_c), (at,), (jnp.ones_like(at),))
    edge = EDGE * (1.0 + jnp.abs(at))
    minimum = ((at - lo > edge) & (hi - at > edge) & (curvature > 0)
               & jnp.isfinite(loss_along_budget(law, params, at, log_c)))
    return jnp.where(minimum, x, jnp.nan)


def optimal_log_compute(law: Law, params: Any, log_n: ArrayLike, *,
                        log_c_guess: ArrayLike | None = None, xtol: float = 1e-14) -> jnp.ndarray:
    """log C at which a model of N = e^x parameters is compute-optimal: the root in y of
    F(x, y) with D = e^y / (6N) in [e^LOG_MIN, e^LOG_MAX]. Differentiable in ``log_n`` and
    ``params`` (implicitly)."""
    log_n = jnp.asarray(log_n)
    lo = log_n + LOG6 + LOG_MIN
    hi = log_n + LOG6 + LOG_MAX
    # Tokens-per-parameter of order 10-100 is where laws of this family put the optimum.
    guess = 2.0 * log_n + jnp.log(6.0 * 20.0) if log_c_guess is None else jnp.asarray(log_c_guess)

    def residual(y):
        return stationarity(law, params, log_n, y)

    def solve(f, y0):
        return _newton_bisect(f, jax.lax.stop_gradient(lo), jax.lax.stop_gradient(hi), y0, xtol)

    return jax.lax.custom_root(residual, guess, solve, _scalar_tangent_solve)


def optimal_n(law: Law, params: Any, c: ArrayLike) -> jnp.ndarray:
    """N*(C) for budgets C in FLOP (see :func:`optimal_log_n`)."""
    return jnp.exp(optimal_log_n(law, params, jnp.log(c)))


def optimal_d(law: Law, params: Any, c: ArrayLike) -> jnp.ndarray:
    """D*(C) = C / (6 N*(C))."""
    return jnp.asarray(c) / (6.0 * optimal_n(law, params, c))


def local_exponent(law: Law, params: Any, c: ArrayLike) -> jnp.ndarray:
    """d log N* / d log C at budget C, by implicit differentiation of the optimum."""
    log_c = jnp.log(jnp.asarray(c))
    return jax.grad(lambda y: jnp.sum(optimal_log_n(law, params, y)))(log_c)


def optimal_log_compute_and_exponent(law: Law, params: Any, log_n: ArrayLike) -> tuple[jnp.ndarray, jnp.ndarray]:
    """One solve, two results: log C at which e^x is optimal, and g = d log N*/d log C there
    (Pearce & Song Eq. 17), the latter from the pullback of the implicit solve."""
    log_c, pullback = jax.vjp(lambda x: optimal_log_compute(law, params, x), jnp.asarray(log_n))
    (dlogc_dlogn,) = pullback(jnp.ones_like(log_c))
    return log_c, 1.0 / dlogc_dlogn


def local_exponent_at_n(law: Law, params: Any, n: ArrayLike) -> jnp.ndarray:
    """g of Pearce & Song Eq. 17 at an optimal size N*: 1/g = d log C / d log N* along the
    optimum, by implicit differentiation of :func:`optimal_log_compute`."""
    return optimal_log_compute_and_exponent(law, params, jnp.log(jnp.asarray(n)))[1]


#: Newton steps of :func:`_newton_descent` before it gives up, the step halvings its line search
#: tries, and the gradient norm below which its end point counts as stationary (float64).
_NEWTON_ITER, _HALVINGS, STATIONARY_GTOL = 100, 30, 1e-8


def _free_gradient(law: LawType, params: Any, log_x: Sequence[jnp.ndarray], free: tuple[int, ...],
                   z: jnp.ndarray) -> jnp.ndarray:
    """G(z) = d log L / d z, [..., k]: the law's gradient in its free log inputs ``free`` (indices
    into its inputs) at z, the others at ``log_x``. Laws act elementwise, so the gradient of the sum
    is each point's own."""
    def total(z):
        inputs = list(log_x)
        for j, i in enumerate(free):
            inputs[i] = z[..., j]
        return jnp.sum(law.log_loss(params, *inputs))

    return jax.grad(total)(z)


def _per_point_jacobian(linear: Callable[[jnp.ndarray], jnp.ndarray], z: jnp.ndarray) -> jnp.ndarray:
    """The [..., k, k] blocks of a map that acts on each point's k coordinates alone: column j is
    its value at the unit vector e_j of every point."""
    k = z.shape[-1]
    return jnp.stack([linear(jnp.broadcast_to(jnp.eye(k, dtype=z.dtype)[j], z.shape)) for j in range(k)], -1)


def _block_tangent_solve(g: Callable[[jnp.ndarray], jnp.ndarray], y: jnp.ndarray) -> jnp.ndarray:
    return jnp.linalg.solve(_per_point_jacobian(g, y), y[..., None])[..., 0]


def _newton_descent(value: Callable[[jnp.ndarray], jnp.ndarray], gradient: Callable[[jnp.ndarray], jnp.ndarray],
                    z0: jnp.ndarray, xtol: float) -> jnp.ndarray:
    """A local minimum of ``value`` (elementwise over points, [...]) in z [..., k] from z0: Newton
    steps where the Hessian is positive definite, steepest descent where not, each halved until the
    value does not rise (all :data:`_HALVINGS` trial lengths evaluated at once)."""
    lengths = 0.5 ** jnp.arange(_HALVINGS, dtype=z0.dtype)

    def cond(state):
        i, z, step = state
        return (i < _NEWTON_ITER) & jnp.any(jnp.abs(step) > xtol * (1.0 + jnp.abs(z)))

    def body(state):
        i, z, _ = state
        g = gradient(z)
        hessian = _per_point_jacobian(lambda t: jax.jvp(gradient, (z,), (t,))[1], z)
        convex = jnp.all(jnp.linalg.eigvalsh(hessian) > 0, axis=-1, keepdims=True)
        newton = -jnp.linalg.solve(jnp.where(convex[..., None], hessian, jnp.eye(z.shape[-1])), g[..., None])[..., 0]
        direction = jnp.where(convex, newton, -g)
        trials = z + lengths.reshape((-1,) + (1,) * z.ndim) * direction
        lower = value(trials) <= value(z)
        pick = jnp.argmax(lower, axis=0)
        length = jnp.where(jnp.any(lower, axis=0), lengths[pick], 0.0)[..., None]
        step = length * direction
        return i + 1, z + step, step

    return jax.lax.while_loop(cond, body, (0, z0, jnp.full_like(z0, jnp.inf)))[1]


def _free_indices(law: LawType, free: Sequence[str]) -> tuple[int, ...]:
    unknown = [name for name in free if name not in law.inputs]
    if unknown:
        raise ValueError(f"the {law.name} law has no input {unknown[0]!r}; its inputs are {law.inputs}")
    return tuple(law.inputs.index(name) for name in free)


def stationary_log_inputs(law: LawType, params: Any, log_x: Sequence[ArrayLike], free: Sequence[str], *,
                          xtol: float = 1e-12) -> jnp.ndarray:
    """z* [..., k]: the stationary point of log L in the log inputs named ``free`` (e.g. ``("eta",
    "batch")``), the law's other inputs at ``log_x`` (one log array per input of the law, in its
    order; the free ones are the starting guess), found by :func:`_newton_descent` and
    differentiable in the fixed inputs and ``params`` by implicit differentiation."""
    at = _free_indices(law, free)
    log_x = [jnp.asarray(x) for x in jnp.broadcast_arrays(*log_x)]
    guess = jnp.stack([log_x[i] for i in at], -1)

    def residual(z):
        return _free_gradient(law, params, log_x, at, z)

    def value(z):
        inputs = [jnp.broadcast_to(x, z.shape[:-1]) for x in log_x]
        for j, i in enumerate(at):
            inputs[i] = z[..., j]
        return law.log_loss(params, *inputs)

    def solve(f, z0):
        return _newton_descent(value, f, z0, xtol)

    return jax.lax.custom_root(residual, guess, solve, _block_tangent_solve)


def optimal_log_inputs(law: LawType, params: Any, log_x: Sequence[ArrayLike], free: Sequence[str],
                       **solve: Any) -> jnp.ndarray:
    """The minimum z* [..., k] of log L in the log inputs ``free`` at the other inputs of ``log_x``
    (:func:`stationary_log_inputs`, which takes ``solve``'s options), differentiable in them and in
    ``params``. NaN where the end point is no minimum: its gradient exceeds :data:`STATIONARY_GTOL`
    (the loss falls without end along some direction), its Hessian is not positive definite, or
    the loss is not finite there."""
    z = stationary_log_inputs(law, params, log_x, free, **solve)
    at = _free_indices(law, free)
    fixed = [jnp.asarray(x) for x in jnp.broadcast_arrays(*log_x)]
    point = jax.lax.stop_gradient(z)
    gradient = functools.partial(_free_gradient, law, params, fixed, at)
    g = gradient(point)
    hessian = _per_point_jacobian(lambda t: jax.jvp(gradient, (point,), (t,))[1], point)
    inputs = list(fixed)
    for j, i in enumerate(at):
        inputs[i] = point[..., j]
    minimum = (jnp.all(jnp.linalg.eigvalsh(hessian) > 0, axis=-1) & jnp.all(jnp.abs(g) < STATIONARY_GTOL, axis=-1)
               & jnp.isfinite(law.log_loss(params, *inputs)))
    return jnp.where(minimum[..., None], z, jnp.nan)
