"""The two areas of a learning-rate schedule that the annealing law reads (Tissue et al. 2024).

Tissue, Wang & Wang (2024), "Scaling Law with Learning Rate Annealing" (arXiv:2408.11029), Eq. 1
and its definitions: with eta_i the learning rate of the update that produces step i,

    S1(s) = sum_{i <= s} eta_i                                   (forward area)
    m_i   = lambda m_{i-1} + (eta_{i-1} - eta_i),   m_0 = 0      (annealing momentum)
    S2(s) = sum_{i <= s} m_i                                     (annealing area)

lambda the decay factor (the paper takes 0.999). Closed form: S2(s) = sum_{j <= s} (eta_{j-1} -
eta_j) (1 - lambda^(s-j+1)) / (1 - lambda), so lambda -> 1 gives S2 = sum_{i <= s} (eta_0 - eta_i)
(every drop counted once per later step) and lambda = 0 gives S2 = eta_0 - eta_s.

Warmup (our choice, stated once here): a warmup raises the rate, which the recursion would count
as negative annealing. The increments eta_{i-1} - eta_i are counted from the schedule's peak on
(eta_0 := the peak, the first step where the rate is largest), so a warmup adds to S1 only.
Later rises (a re-warmup) still count, negatively, as in the paper.

The recursion is a ``jax.lax.scan`` over the last axis, so a batch of schedules (runs padded to
one length by repeating their last rate, which adds nothing to S2) is one compiled call.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

#: Tissue et al. (2024), Section 3: the decay factor lambda of the annealing momentum they use.
PAPER_DECAY = 0.999


class Areas(NamedTuple):
    """S1 and S2 after every step: ``[..., s - 1]`` holds the areas at step s."""

    forward: jnp.ndarray
    annealing: jnp.ndarray


def annealing_increments(lrs: jnp.ndarray) -> jnp.ndarray:
    """eta_{i-1} - eta_i for every step, zero up to and including the first step at the peak."""
    drops = jnp.concatenate([jnp.zeros_like(lrs[..., :1]), lrs[..., :-1] - lrs[..., 1:]], axis=-1)
    peak = jnp.argmax(lrs, axis=-1)[..., None]
    return jnp.where(jnp.arange(lrs.shape[-1]) > peak, drops, 0.0)


@jax.jit
def schedule_areas(lrs: ArrayLike, decay: ArrayLike = PAPER_DECAY) -> Areas:
    """S1(s) and S2(s) at every step s = 1..T of the learning rates ``lrs`` (shape ``(..., T)``,
    ``lrs[..., i - 1]`` the rate of the update producing step i); ``decay`` is lambda in [0, 1]."""
    lrs = jnp.asarray(lrs)
    increments = jnp.moveaxis(annealing_increments(lrs), -1, 0)

    def momentum(m, delta):
        m = decay * m + delta
        return m, m

    _, m = jax.lax.scan(momentum, jnp.zeros_like(increments[0]), increments)
    return Areas(jnp.cumsum(lrs, axis=-1), jnp.cumsum(jnp.moveaxis(m, 0, -1), axis=-1))
