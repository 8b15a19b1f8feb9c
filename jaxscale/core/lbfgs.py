"""Batched L-BFGS: thousands of small minimisations in one jit-compiled call.

One problem is solved by L-BFGS (Liu & Nocedal 1989; Nocedal & Wright 2006, Alg. 7.4-7.5):
the two-loop recursion gives the direction p = -H g from the last ``memory_size`` curvature
pairs (s, y), pairs with s.y <= 0 skipped so H stays positive definite, H_0 = (s.y / y.y) I.
The step is found by backtracking *across* iterations: each iteration evaluates value and
gradient once, at theta + t p; if the Armijo condition f(theta + t p) <= f + c1 t g.p holds
the point is accepted and t resets to 1, otherwise t halves and the next iteration tries again.
So every iteration costs exactly one gradient evaluation and contains no inner loop, which is
what makes the method cheap under ``vmap`` (a vmapped inner line-search loop runs as long as
its slowest member, for every member).

A minimisation can start from the curvature pairs another one ended with (:class:`Memory`,
returned with ``keep_memory``): a bootstrap refit of a fit started that way takes the fit's
knowledge of the objective's curvature with it instead of rebuilding it from an empty memory.

Stopping rule, per problem: the gradient norm falls to ``gtol``; or an accepted step lowers
the objective by no more than ``ftol`` relative to its size; or the step t falls below
``min_step`` (no decrease is representable); or ``max_iter`` is reached (not converged).
Finished problems are frozen while the others continue.

Why not ``optax.lbfgs``: on the 4500-start Approach-3 Chinchilla fit (Epoch's 245 runs less the
5 highest-loss, ``approach3.MULTISTART`` stopping rules) on a shared 2-core CPU, optax 0.2.8's
L-BFGS with its default zoom linesearch, vmapped over the starts in one jit with a
``lax.while_loop``, took 89 s cold and 98 s warm at load average 1.1-1.9 (185 s and 215 s at
load 4.5), this pool 1.6 s cold and 0.85 s warm at load 1.1-1.4. Both reach the same best
objective, 1.0182740178006e-3 (optax 3e-18 higher). Under vmap optax's line search runs as long
as its slowest start at every iteration and its outer loop as long as the slowest start (300
iterations), whereas here an iteration is one gradient evaluation and a finished worker takes
the next start; so the pool is kept.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.support.compiled_programs import persistent_jit

Objective = Callable[..., jnp.ndarray]  # fun(theta, data) -> scalar


@dataclass(frozen=True)
class Options:
    """Tolerances of :func:`minimize`; the defaults are tight (float64)."""

    max_iter: int = 3000
    gtol: float = 1e-12
    ftol: float = 1e-15
    min_step: float = 1e-12
    memory_size: int = 10
    armijo: float = 1e-4
    backtrack: float = 0.5


class Memory(NamedTuple):
    """The curvature pairs of an L-BFGS run, newest first (an all-zero pair is an empty slot):
    what it learnt of the objective's curvature near where it ended. The rest of the state
    follows from them: rho = 1 / (s.y), and H_0 = gamma I with gamma = s.y / y.y of the newest."""

    s: jnp.ndarray  # (m, p) steps
    y: jnp.ndarray  # (m, p) gradient changes

    def resized(self, memory_size: int) -> "Memory":
        """The newest ``memory_size`` pairs, empty slots appended where there are fewer (host side)."""
        s, y = (np.asarray(a)[:memory_size] for a in (self.s, self.y))
        pad = ((0, memory_size - len(s)), (0, 0))
        return Memory(np.pad(s, pad), np.pad(y, pad))


class Solution(NamedTuple):
    """Result of one minimisation (leading batch axis when batched); ``memory`` the final
    curvature pairs where they were asked for (else None)."""

    theta: jnp.ndarray
    value: jnp.ndarray
    grad_norm: jnp.ndarray
    n_iter: jnp.ndarray
    converged: jnp.ndarray
    memory: Memory | None = None


def ranked(sol: Solution) -> np.ndarray:
    """The objective of each solution of a batch of starts where it converged (where it is finite
    if none converged), inf elsewhere: what :func:`best_converged` minimises.

    Raises:
        ValueError: if no start reached a finite objective.
    """
    value = np.asarray(sol.value)
    ok = np.asarray(sol.converged) & np.isfinite(value)
    if not ok.any():
        ok = np.isfinite(value)
    if not ok.any():
        raise ValueError("no start reached a finite objective; check the data and the grid")
    return np.where(ok, value, np.inf)


def best_converged(sol: Solution) -> int:
    """Index of the lowest objective among the converged solutions of a batch of starts (among
    the finite ones if none converged).

    Raises:
        ValueError: if no start reached a finite objective.
    """
    return int(np.argmin(ranked(sol)))


class _State(NamedTuple):
    theta: jnp.ndarray
    value: jnp.ndarray
    grad: jnp.ndarray
    s: jnp.ndarray  # (m, p) past steps, newest first
    y: jnp.ndarray  # (m, p) past gradient changes, newest first
    rho: jnp.ndarray  # (m,) 1 / (s.y), 0 for empty or skipped slots
    gamma: jnp.ndarray  # H_0 = gamma I
    t: jnp.ndarray  # trial step length
    n_iter: jnp.ndarray
    done: jnp.ndarray


def _two_loop(g: jnp.ndarray, st: _State) -> jnp.ndarray:
    """H g by the L-BFGS two-loop recursion (Nocedal & Wright Alg. 7.4), newest pair first."""

    def newest_first(q, pair):
        s, y, rho = pair
        a = rho * jnp.dot(s, q)
        return q - a * y, a

    def oldest_first(r, pair):
        s, y, rho, a = pair
        return r + s * (a - rho * jnp.dot(y, r)), None

    q, alphas = jax.lax.scan(newest_first, g, (st.s, st.y, st.rho))
    r, _ = jax.lax.scan(oldest_first, st.gamma * q, (st.s, st.y, st.rho, alphas), reverse=True)
    return r


def _empty_memory(theta: jnp.ndarray, memory_size: int) -> Memory:
    """No pairs: zeros of shape (..., memory_size, p) for theta of shape (..., p)."""
    shape = theta.shape[:-1] + (memory_size, theta.shape[-1])
    return Memory(jnp.zeros(shape, theta.dtype), jnp.zeros(shape, theta.dtype))


def _check_memory(memory: Memory | None, options: Options, p: int) -> None:
    """A starting memory must have ``options.memory_size`` slots of ``p`` coordinates."""
    if memory is not None and tuple(jnp.shape(memory.s)) != (options.memory_size, p):
        raise ValueError(f"memory holds pairs of shape {tuple(jnp.shape(memory.s))}; these options need "
                         f"({options.memory_size}, {p}): use Memory.resized({options.memory_size})")


def _fresh(theta0: jnp.ndarray, memory_size: int, memory: Memory | None = None) -> _State:
    """A problem not yet evaluated: value +inf, so the first step evaluates at theta0; its
    curvature pairs are ``memory`` (``memory_size`` slots) or empty."""
    s, y = _empty_memory(theta0, memory_size) if memory is None else memory
    sy = jnp.sum(s * y, axis=-1)  # > 0 for every stored pair, 0 for an empty slot
    rho = jnp.where(sy > 0, 1.0 / jnp.where(sy > 0, sy, 1.0), 0.0)
    gamma = jnp.where(sy[0] > 0, sy[0] / jnp.maximum(jnp.sum(y[0] * y[0]), 1e-300), 1.0)
    return _State(
        theta=theta0, value=jnp.asarray(jnp.inf, theta0.dtype), grad=jnp.zeros_like(theta0),
        s=s, y=y, rho=rho, gamma=gamma,
        t=jnp.ones((), theta0.dtype), n_iter=jnp.zeros((), jnp.int32), done=jnp.zeros((), bool),
    )


def _step(f: Callable, opt: Options, st: _State) -> _State:
    """One iteration: one value-and-gradient evaluation at theta + t p (a no-op once done)."""
    p = -_two_loop(st.grad, st)
    slope = jnp.dot(st.grad, p)
    descent = slope < 0  # else H lost positive definiteness numerically: use -g
    p = jnp.where(descent, p, -st.grad)
    slope = jnp.where(descent, slope, -jnp.dot(st.grad, st.grad))
    trial = st.theta + st.t * p
    value, grad = jax.value_and_grad(f)(trial)
    first = jnp.isinf(st.value)
    accept = jnp.isfinite(value) & (first | (value <= st.value + opt.armijo * st.t * slope))

    s, y = trial - st.theta, grad - st.grad
    sy = jnp.dot(s, y)
    good_pair = accept & ~first & (sy > 1e-12 * jnp.linalg.norm(s) * jnp.linalg.norm(y))
    push = lambda mem, new: jnp.where(good_pair, jnp.concatenate([new[None], mem[:-1]]), mem)
    gamma = jnp.where(good_pair, sy / jnp.maximum(jnp.dot(y, y), 1e-300), st.gamma)
    no_pairs = jnp.all(st.rho == 0)  # a first step's length comes from its gradient, unless pairs were given
    gamma = jnp.where(first & no_pairs, jnp.minimum(1.0, 1.0 / jnp.maximum(jnp.linalg.norm(grad), 1e-300)), gamma)

    new_value = jnp.where(accept, value, st.value)
    new_grad = jnp.where(accept, grad, st.grad)
    t = jnp.where(accept, 1.0, opt.backtrack * st.t)
    n_iter = st.n_iter + 1
    done = (
        ~jnp.isfinite(new_value)
        | (jnp.linalg.norm(new_grad) <= opt.gtol)
        | (accept & (st.value - value <= opt.ftol * jnp.abs(value)))
        | (t < opt.min_step)
        | (n_iter >= opt.max_iter)
    )
    new = _State(
        theta=jnp.where(accept, trial, st.theta), value=new_value, grad=new_grad,
        s=push(st.s, s), y=push(st.y, y), rho=push(st.rho, 1.0 / jnp.where(good_pair, sy, 1.0)),
        gamma=gamma, t=t, n_iter=n_iter, done=done,
    )
    return jax.tree.map(lambda old, upd: jnp.where(st.done, old, upd), st, new)


def _solution(st: _State, opt: Options, keep_memory: bool = True) -> Solution:
    converged = st.done & jnp.isfinite(st.value) & (st.n_iter < opt.max_iter)
    memory = Memory(st.s, st.y) if keep_memory else None
    return Solution(st.theta, st.value, jnp.linalg.norm(st.grad, axis=-1), st.n_iter, converged, memory)


def minimize(fun: Objective, theta0: jnp.ndarray, data: Any, options: Options = Options(),
             memory: Memory | None = None) -> Solution:
    """Minimise ``fun(theta, data)`` over theta (a 1-d array) from ``theta0`` (traceable),
    starting from the curvature pairs ``memory`` if given (:meth:`Memory.resized` to fit)."""
    theta0 = jnp.asarray(theta0)
    _check_memory(memory, options, theta0.shape[-1])
    f = functools.partial(fun, data=data)
    st = jax.lax.while_loop(lambda st: ~st.done, functools.partial(_step, f, options),
                            _fresh(theta0, options.memory_size, memory))
    return _solution(st, options)


def _take(tree: Any, idx: jnp.ndarray) -> Any:
    return jax.tree.map(lambda x: x[idx], tree)


def _pool(fun: Objective, options: Options, batch: str, slots: int, keep_memory: bool,
          theta0: jnp.ndarray, data: Any, memory: Memory | None) -> Solution:
    """Solve problems k = 0..K-1 on ``slots`` workers: every iteration steps all workers at
    once (vmap); a worker whose problem is done writes it out and takes the next one. Every
    problem starts from the curvature pairs ``memory`` (shared) if given."""
    k_total = (theta0 if batch != "data" else jax.tree.leaves(data)[0]).shape[0]
    p = theta0.shape[-1]
    theta_of = (lambda i: theta0[i]) if batch != "data" else (lambda i: jnp.broadcast_to(theta0, i.shape + (p,)))
    data_of = (lambda i: data) if batch == "starts" else (lambda i: _take(data, i))
    in_axes_data = None if batch == "starts" else 0
    step = jax.vmap(lambda st, d: _step(functools.partial(fun, data=d), options, st),
                    in_axes=(0, in_axes_data))
    fresh = jax.vmap(lambda th: _fresh(th, options.memory_size, memory))
    dtype = theta0.dtype

    class Pool(NamedTuple):
        st: _State
        job: jnp.ndarray  # problem index of each worker, k_total when idle
        next_job: jnp.ndarray
        out: Solution

    first = jnp.arange(slots)
    job = jnp.where(first < k_total, first, k_total)
    out = Solution(jnp.zeros((k_total, p), dtype), jnp.full((k_total,), jnp.nan, dtype),
                   jnp.full((k_total,), jnp.nan, dtype), jnp.zeros((k_total,), jnp.int32),
                   jnp.zeros((k_total,), bool),
                   _empty_memory(jnp.zeros((k_total, p), dtype), options.memory_size) if keep_memory else None)
    safe = lambda j: jnp.minimum(j, k_total - 1)
    init = Pool(fresh(theta_of(safe(job))), job, jnp.asarray(min(slots, k_total)), out)

    def body(pool: Pool) -> Pool:
        st = step(pool.st, data_of(safe(pool.job)))
        finished = st.done & (pool.job < k_total)
        sol = _solution(st, options, keep_memory)
        where_out = jnp.where(finished, pool.job, k_total)  # k_total: dropped
        out = jax.tree.map(lambda o, v: o.at[where_out].set(v, mode="drop"), pool.out, sol)
        new_job = pool.next_job + jnp.cumsum(finished) - 1
        new_job = jnp.where(finished, jnp.where(new_job < k_total, new_job, k_total), pool.job)
        refill = finished & (new_job < k_total)
        st = jax.tree.map(lambda a, b: jnp.where(refill.reshape((-1,) + (1,) * (a.ndim - 1)), b, a),
                          st, fresh(theta_of(safe(new_job))))
        return Pool(st, new_job, pool.next_job + jnp.sum(finished), out)

    return jax.lax.while_loop(lambda pool: jnp.any(pool.job < k_total), body, init).out


#: Default number of pool workers of :func:`solver`.
SLOTS = 256
#: XLA CPU settings for the pooled program: its ~100 small kernels compile ~0.3 s faster with the
#: classic fusion emitters than with the MLIR ones, and run 10-20% slower. Fresh processes
#: alternating on the 2-core VM, Epoch's 240 runs, three rounds each: the 4000-resample
#: bootstrap 1.01-1.07 s -> 0.73-0.77 s cold, 0.134-0.140 s -> 0.157-0.163 s warm; the
#: Approach-3 fit 1.13-1.27 s -> 0.84-0.89 s cold, 0.063-0.068 s -> 0.071-0.073 s warm (docs/benchmarks.md).
#: A fit runs its program once or a few times per process, so compiling is what costs. Other
#: backends ignore these CPU options.
FAST_COMPILE_OPTIONS = {"xla_cpu_use_fusion_emitters": False}


@functools.lru_cache(maxsize=64)
def solver(fun: Objective, options: Options = Options(), batch: str = "starts",
           slots: int = SLOTS, keep_memory: bool = False) -> Callable[..., Solution]:
    """A jit-compiled batched minimiser ``(theta0, data, memory=None) -> Solution``.

    ``batch="starts"``: ``theta0`` has a leading axis (one problem per start), shared data.
    ``batch="data"``: every leaf of ``data`` has a leading axis (one problem per data set),
    all from the same ``theta0``. ``batch="both"``: both have the leading axis.
    All problems run in one compiled call on a pool of ``slots`` vmapped workers (fewer if
    there are fewer problems): a worker whose problem has converged takes the next one, so
    slow problems do not hold the finished ones in the batch.
    ``memory``: curvature pairs (:class:`Memory`, ``options.memory_size`` slots) every problem
    starts from, e.g. those a fit of the same objective ended with; ``keep_memory``: return each
    problem's final pairs in ``Solution.memory`` (else None, and nothing extra is written out).
    Cached on ``(fun, options, batch, slots, keep_memory)``: pass the same objective object to
    reuse the compiled program. Its compiled programs are kept on disk where ``fun`` has a name
    (:func:`jaxscale.support.compiled_programs.persistent_jit`).
    """
    if batch not in ("starts", "data", "both"):
        raise ValueError(f"batch must be 'starts', 'data' or 'both', got {batch!r}")

    def run(theta0: jnp.ndarray, data: Any, memory: Memory | None = None) -> Solution:
        k_total = (theta0 if batch != "data" else jax.tree.leaves(data)[0]).shape[0]
        _check_memory(memory, options, theta0.shape[-1])
        return _pool(fun, options, batch, min(slots, k_total), keep_memory, theta0, data, memory)

    return persistent_jit(run, key=(solver, fun, options, batch, slots, keep_memory),
                          compiler_options=FAST_COMPILE_OPTIONS)
