"""Variable projection (VPNLS; Golub & Pereyra 1973, as Czech et al. 2026 apply it to the Chinchilla
law): a law whose loss is linear in some coordinates, L = sum_j c_j phi_j(x; theta_nl), c >= 0,
is fitted by solving the linear coordinates exactly at each point of a grid of the nonlinear
ones, then refining every coordinate from the best grid points.

For Chinchilla, L = E + A N^-alpha + B D^-beta: c = (A, B, E), phi = (N^-alpha, D^-beta, 1),
theta_nl = (alpha, beta). A law declares this in :attr:`jaxscale.laws.law.Law.linear`.

1. **Grid.** theta_nl on :data:`GRID` (each exponent from 0.02 to 2.00 in steps of 0.02, 10,000
   points for two). At each, c by non-negative least squares of L on phi with row weights 1/L
   (so the residuals approximate log residuals, ln L - ln Lhat ~ (L - Lhat) / L): the exact NNLS
   solution, the best of the unconstrained solutions on every subset of the columns that are
   non-negative (2^k - 1 subsets; the NNLS optimum is one of them).
2. **Rank.** Every grid point at its c is scored by the fit's own objective, the Huber loss of log
   residuals (:mod:`jaxscale.fitting.objective`).
3. **Refine.** The :data:`REFINE` best are minimised in all coordinates by the L-BFGS of
   Approach 3 (:data:`jaxscale.fitting.approach3.MULTISTART`, centred coordinates); a c_j of 0
   starts at :data:`FLOOR`. The best converged start is the fit.

The result is a :class:`jaxscale.fitting.approach3.FitResult` (method ``vpnls``) at the optimum of
the same objective as Approach 3; the test is that it reaches Approach 3's on Epoch's 240 runs to
1e-8 of the objective.

**Conditioning.** The Hessian of the projected objective (the linear coordinates minimised out)
is the Schur complement of the linear block in the full Hessian; its condition number is reported
beside the full one's (:mod:`jaxscale.determinacy.identifiability`).
"""

from __future__ import annotations

import functools
import itertools
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import MULTISTART, FitResult
from jaxscale.fitting.centring import solve_centred
from jaxscale.fitting.determinable import check_runs
from jaxscale.fitting.objective import DELTA, FitData, fit_data, huber, huber_fn
from jaxscale.core import lbfgs
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Each nonlinear coordinate's grid: 0.02 to 2.00 in steps of 0.02.
GRID = (0.02, 2.0, 100)
#: Grid points refined by L-BFGS.
REFINE = 8
#: Where a linear coordinate solved at 0 starts its refinement (its log is the vector's).
FLOOR = 1e-12


def exponent_grid(law: Law) -> np.ndarray:
    """(g, q) points of :data:`GRID` over the law's q nonlinear coordinates, the first outermost."""
    return _product_grid(len(law.nonlinear_names))


@functools.cache
def _product_grid(q: int) -> np.ndarray:
    axes = np.meshgrid(*[np.linspace(*GRID)] * q, indexing="ij")
    grid = np.stack([a.ravel() for a in axes], -1)
    grid.flags.writeable = False
    return grid


def _solve_small(m: jnp.ndarray, v: jnp.ndarray) -> jnp.ndarray:
    """m^-1 v for a symmetric m of size 1-3 in closed form (Cramer's rule: elementwise arithmetic
    that vmaps over the grid without a LAPACK call per tiny system), larger by
    :func:`jax.numpy.linalg.solve`."""
    k = m.shape[-1]
    if k == 1:
        return v / m[0]
    if k == 2:
        det = m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
        return jnp.stack([m[1, 1] * v[0] - m[0, 1] * v[1], m[0, 0] * v[1] - m[1, 0] * v[0]]) / det
    if k == 3:
        cof = jnp.stack([jnp.cross(m[1], m[2]), jnp.cross(m[2], m[0]), jnp.cross(m[0], m[1])])  # adjugate's rows
        return cof.T @ v / (m[0] @ cof[0])
    return jnp.linalg.solve(m, v)


def nnls_small(design: jnp.ndarray, y: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """min ||design c - y||^2 over c >= 0 for a few columns k, exactly: the unconstrained
    least-squares solution on each non-empty subset of columns, the best of those that are
    non-negative (the NNLS optimum is the least-squares solution on its own positive set, and no
    feasible point beats it). Returns (c, residual sum of squares); jit- and vmap-able."""
    k = design.shape[-1]
    gram, moment, yy = design.T @ design, design.T @ y, y @ y
    best_c, best_rss = jnp.zeros(k, design.dtype), yy
    for size in range(1, k + 1):
        for subset in itertools.combinations(range(k), size):
            idx = np.array(subset)
            c_sub = _solve_small(gram[np.ix_(idx, idx)], moment[idx])
            c = jnp.zeros(k, design.dtype).at[idx].set(c_sub)
            rss = yy - 2 * c @ moment + c @ gram @ c
            better = jnp.all(c_sub >= 0) & (rss < best_rss)
            best_c, best_rss = jnp.where(better, c, best_c), jnp.where(better, rss, best_rss)
    return best_c, best_rss


def projected(law: Law, nonlinear: jnp.ndarray, data: FitData, delta: float = DELTA) -> tuple[jnp.ndarray, jnp.ndarray]:
    """At the nonlinear coordinates ``nonlinear`` (q,): the linear coordinates c by NNLS of L on
    the law's basis, rows weighted by w / L (module docstring, step 1; a 0 raised to
    :data:`FLOOR`), and the Huber objective there (step 2; the law's loss is basis @ c)."""
    loss = jnp.exp(data.log_y)
    basis = law.linear.basis(tuple(nonlinear), *data.log_x)
    scale = jnp.sqrt(data.weights) / loss
    c, _ = nnls_small(basis * scale[:, None], loss * scale)
    c = jnp.maximum(c, FLOOR)
    r = data.log_y - jnp.log(jnp.sum(basis * c, axis=-1))
    return c, jnp.sum(data.weights * huber(r, delta))


def grid_vectors(law: Law, nonlinear: jnp.ndarray, coefficients: jnp.ndarray) -> jnp.ndarray:
    """The law's vectors (g, p) of grid points and their linear coordinates."""
    return law.to_vector(law.joined(tuple(nonlinear.T), tuple(coefficients.T)))


@functools.cache
def _grid_stage(law: Law, delta: float):
    """Steps 1 and 2 at every grid point (jit-compiled): the linear coordinates and the objectives,
    (g, k) and (g,) in the order of :func:`exponent_grid`. The first coordinate's values are taken
    one after the other and the rest vmapped: what depends on the first alone (Chinchilla's N^-alpha
    column) is left unbatched by ``vmap`` and computed once per value, not once per grid point."""
    q = len(law.nonlinear_names)
    axis = jnp.asarray(np.linspace(*GRID))
    rest = jnp.asarray(_product_grid(q - 1)) if q > 1 else jnp.zeros((1, 0))

    def row(first: jnp.ndarray, data: FitData) -> tuple[jnp.ndarray, jnp.ndarray]:
        return jax.vmap(lambda others: projected(law, jnp.concatenate([first[None], others]), data, delta))(rest)

    @jax.jit
    def stage(data: FitData) -> tuple[jnp.ndarray, jnp.ndarray]:
        c, values = jax.lax.map(lambda first: row(first, data), axis)
        return c.reshape(-1, c.shape[-1]), values.reshape(-1)

    return stage


def grid_starts(law: Law, data: FitData, delta: float = DELTA, keep: int = REFINE) -> np.ndarray:
    """The ``keep`` grid points of lowest Huber objective (steps 1-2), as the law's vectors."""
    grid = exponent_grid(law)
    c, values = map(np.asarray, _grid_stage(law, delta)(data))
    order = np.argsort(np.where(np.isfinite(values), values, np.inf), kind="stable")[:keep]
    return grid_vectors(law, grid[order], c[order])


@float64
def fit_vpnls(runs: RunsTable, *, law: Law = chinchilla.LAW, delta: float = DELTA,
              refine: int = REFINE) -> FitResult:
    """Fit ``law`` to ``runs`` by variable projection (module docstring): the Huber objective of
    Approach 3, from the ``refine`` best points of a grid over the nonlinear coordinates.

    Args:
        runs: the runs table (outliers dropped first, as for Approach 3).
        law: a law that declares its linear coordinates (:attr:`~jaxscale.laws.law.Law.linear`).
        delta: the Huber threshold.
        refine: grid points refined by L-BFGS.

    Returns:
        A :class:`~jaxscale.fitting.approach3.FitResult` with ``method="vpnls"``.
    """
    if law.linear is None:
        raise ValueError(f"method vpnls needs a law that declares the coordinates it is linear in; "
                         f"{law.name} declares none (laws with one: chinchilla, chinchilla-tied)")
    if not delta > 0:
        raise ValueError(f"delta must be > 0, got {delta}")
    if refine < 1:
        raise ValueError(f"refine must be >= 1, got {refine}")
    check_runs(law, runs)
    data = fit_data(runs.law_inputs(law.inputs), runs.loss)
    t0 = time.perf_counter()
    starts = grid_starts(law, data, delta, refine)
    sol, vectors = solve_centred(huber_fn(law, delta), law, starts, data, MULTISTART, keep_memory=True)
    best = lbfgs.best_converged(sol)
    return FitResult(law=law, params=jax.tree.map(float, law.from_vector(vectors[best])), vector=vectors[best],
                     objective=float(sol.value[best]), runs=runs, n_starts=len(exponent_grid(law)),
                     n_minimised=len(starts), n_converged=int(np.sum(sol.converged)),
                     seconds=time.perf_counter() - t0, delta=delta,
                     curvature=jax.tree.map(lambda a: a[best], sol.memory), method="vpnls")
