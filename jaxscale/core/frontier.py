"""The compute-efficient frontier of a set of training curves (Chinchilla's Method 1).

Given loss curves L_i(C) of several models, the frontier at budget C is the lowest loss any model
reaches with C FLOP, and the model that reaches it is compute-optimal at C (Hoffmann et al. 2022,
Approach 1; Pearce & Song Step 4). Curves are interpolated linearly in log C onto a common grid
of budgets and minimised across models in one vectorised pass: no Python loop over budgets.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


class Frontier(NamedTuple):
    """The frontier on a grid of budgets."""

    log_c: jnp.ndarray  # [G] natural log of the budgets
    best: jnp.ndarray  # [G] index of the compute-optimal curve (meaningless where ~valid)
    loss: jnp.ndarray  # [G] frontier loss (+inf where no curve covers the budget)
    valid: jnp.ndarray  # [G] whether any curve covers the budget


def _curve_on_grid(log_c: jnp.ndarray, loss: jnp.ndarray, grid: jnp.ndarray) -> jnp.ndarray:
    """One curve's loss at each grid budget; +inf outside its range. NaN entries (padding of
    ragged curves, at the end) are replaced by the last valid point, which is never interpolated
    towards because budgets past it map to +inf."""
    ok = jnp.isfinite(log_c) & jnp.isfinite(loss)
    last = jnp.maximum(jnp.sum(ok) - 1, 0)
    idx = jnp.minimum(jnp.arange(log_c.shape[0]), last)
    xp, fp = log_c[idx], loss[idx]
    return jnp.interp(grid, xp, fp, left=jnp.inf, right=jnp.inf)


def curves_on_grid(log_c_curves: ArrayLike, loss_curves: ArrayLike, log_c_grid: ArrayLike) -> jnp.ndarray:
    """[M, G] loss of each of M curves (sampled at P points each, [M, P]) at each grid budget;
    +inf where a curve does not reach the budget. Ragged curves are right-padded with NaN."""
    return jax.vmap(_curve_on_grid, in_axes=(0, 0, None))(
        jnp.asarray(log_c_curves), jnp.asarray(loss_curves), jnp.asarray(log_c_grid))


def frontier_on_grid(on_grid: jnp.ndarray, log_c_grid: ArrayLike) -> Frontier:
    """The frontier of curves already on the grid (:func:`curves_on_grid`): the lowest loss at
    each budget and the curve that reaches it; exclude a curve by setting its row to +inf."""
    loss = jnp.min(on_grid, axis=0)
    return Frontier(log_c=jnp.asarray(log_c_grid), best=jnp.argmin(on_grid, axis=0), loss=loss,
                    valid=jnp.isfinite(loss))


def compute_frontier(log_c_curves: ArrayLike, loss_curves: ArrayLike, log_c_grid: ArrayLike) -> Frontier:
    """Method-1 frontier of M curves sampled at P points each.

    Args:
      log_c_curves: [M, P] natural log of compute at each point of each curve, increasing along
        P; ragged curves are right-padded with NaN.
      loss_curves: [M, P] loss at those points (NaN padding likewise).
      log_c_grid: [G] budgets (natural log) at which to evaluate the frontier.
    """
    return frontier_on_grid(curves_on_grid(log_c_curves, loss_curves, log_c_grid), log_c_grid)
