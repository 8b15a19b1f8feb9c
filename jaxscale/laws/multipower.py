"""The multi-power law of a whole loss curve under any learning-rate schedule (Luo et al. 2025).

Luo, Wen, Liu, Huang, Liu & Li (2025), "A Multi-Power Law for Loss Curve Prediction Across Learning
Rate Schedules" (ICLR 2025, arXiv:2503.12811), Eq. (multi-power law), as their repository states it:
after a warmup of area S_W, with eta_0 the peak and eta_1, eta_2, ... the rates that follow,

    L(t)  = L0 + A (S1(t) + S_W)^(-alpha) - LD(t),
    LD(t) = B sum_{k=1}^{t} (eta_{k-1} - eta_k) G(eta_k^(-gamma) S_k(t)),
    G(x)  = 1 - (C x + 1)^(-beta),      S_k(t) = sum_{tau=k}^{t} eta_tau,   S1(t) = S_1(t).

The first two terms are a power law in the area under the schedule (warmup included), which a
constant schedule follows alone (LD = 0); every decrease of the rate eta_{k-1} - eta_k adds a loss
drop that grows, as a power of the area S_k(t) travelled since, towards B (eta_{k-1} - eta_k).

Here the rates are every update's, eta_1..eta_T of the whole run (the warmup's included), and the
areas are counted from step 0: S1(t) + S_W = eta_1 + ... + eta_t (``forward``), S_k(t) =
forward(t) - forward(k - 1). Every change of the rate from step 2 on counts as a drop (the increments
eta_{k-1} - eta_k of :func:`rate_changes`), the warmup's rises included as negative drops: this is
the authors' released code (thu-yao-01-luo/MultiPowerLaw), whose fitted parameters give the paper's
errors. The paper prints the sum from the first step after the warmup; at the authors' 25M-model
parameters (:data:`PUBLISHED_25M`) that form misses the six predicted curves by 3.2% on average,
this one by 0.115% (their reported figure: 0.11%), because their L0 holds the warmup's share,
about B x peak rate. Decided from the published parameters alone, before any fit here.

Evaluation is exact: only the steps where the rate changes carry a drop (a two-stage schedule has
one, a cosine every step), so a run is held as its checkpoints' areas and its drops
(:func:`curve_of`), and L at K checkpoints costs K x (number of drops), batched over checkpoints.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

CITATION = ("Luo et al. (2025), A Multi-Power Law for Loss Curve Prediction Across Learning Rate Schedules, "
            "ICLR 2025, arXiv:2503.12811")
#: Terms K x M evaluated at once; a longer run is evaluated :data:`CHECKPOINT_BATCH` checkpoints
#: at a time (a 72,000-step cosine run has 547 x 69,840 terms, 0.3 GB per array).
MAX_TERMS, CHECKPOINT_BATCH = 10_000_000, 64


class MultiPowerParams(NamedTuple):
    """Parameters of the multi-power law (Luo et al. 2025), in the paper's names."""

    L0: ArrayLike
    A: ArrayLike
    alpha: ArrayLike
    B: ArrayLike
    C: ArrayLike
    beta: ArrayLike
    gamma: ArrayLike


#: Which fields are scales (fitted as their logarithms); the rest are exponents.
LOG_SCALE = (True, True, False, True, True, False, False)
#: The authors' fit to their 25M-parameter model's curves (constant, cosine and two-stage at 9e-5,
#: warmup 2,160 steps to 3e-4), from their repository's README (thu-yao-01-luo/MultiPowerLaw),
#: with their code's convention for the warmup (rises summed into LD).
PUBLISHED_25M = MultiPowerParams(L0=3.040, A=0.525, alpha=0.508, B=363.788, C=2.066, beta=0.583, gamma=0.641)


def rate_changes(lrs: ArrayLike) -> jnp.ndarray:
    """eta_{k-1} - eta_k for every step k of the rates ``lrs`` (0 at step 1): drops positive,
    rises (a warmup) negative. NumPy in, NumPy out; JAX arrays (tracers) in, JAX out."""
    xp = jnp if isinstance(lrs, jax.Array) else np
    lrs = xp.asarray(lrs)
    return xp.concatenate([xp.zeros_like(lrs[..., :1]), lrs[..., :-1] - lrs[..., 1:]], axis=-1)


class Curve(NamedTuple):
    """One run's schedule as the law reads it: ``forward`` the area eta_1 + ... + eta_s at each
    checkpoint s ([K]); at each of its M drops k (the steps whose rate differs from the last),
    ``drop`` eta_{k-1} - eta_k, ``rate`` eta_k, ``before`` the area up to step k - 1 and
    ``drop_step`` k; ``step`` the checkpoints."""

    forward: jnp.ndarray
    drop: jnp.ndarray
    rate: jnp.ndarray
    before: jnp.ndarray
    drop_step: jnp.ndarray
    step: jnp.ndarray


def curve_of(lrs: ArrayLike, steps: ArrayLike, block: int = 1) -> Curve:
    """The :class:`Curve` of the rates ``lrs`` (eta_1..eta_T) at checkpoints ``steps`` (1..T).

    ``block`` > 1 merges the drops of up to that many consecutive steps into one (never across a
    checkpoint, nor across a change between rise and drop): their sum, at the drop-weighted mean of
    their steps' log rates and areas, counted
    from the block's last step on. Exact for ``block`` = 1; a cosine run's drops, one per step, then
    cost ``block`` times less, at an error measured in :mod:`jaxscale.curves.multipower_fit`.
    Host-side (NumPy)."""
    lrs = np.asarray(lrs, np.float64)
    steps = np.asarray(steps, np.int64)
    if np.any((steps < 1) | (steps > len(lrs))):
        raise ValueError(f"checkpoint steps must lie in 1..{len(lrs)} (the schedule's length)")
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    forward = np.cumsum(lrs)
    increments = rate_changes(lrs)
    at = np.flatnonzero(increments != 0)  # 0-based: the drop of step at + 1
    # a block: the drops (or the rises) between two checkpoints, cut every `block` steps
    segment = np.searchsorted(np.sort(steps), at + 1, side="left")
    key = 2 * (segment * (len(lrs) + 1) + (at - np.r_[0, np.sort(steps)][segment]) // block) + (increments[at] > 0)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if at.size else np.zeros(0, np.int64)
    drop = np.add.reduceat(increments[at], starts) if at.size else np.zeros(0)
    weight = increments[at]

    def mean(values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(weight * values, starts) / drop if at.size else np.zeros(0)

    last = np.r_[starts[1:], at.size] - 1 if at.size else np.zeros(0, np.int64)
    exact = block == 1
    return Curve(forward[steps - 1], drop, lrs[at] if exact else np.exp(mean(np.log(lrs[at]))),
                 forward[at] - lrs[at] if exact else mean(forward[at] - lrs[at]), at[last] + 1.0,
                 steps.astype(np.float64))


#: beta above which G has reached its exponential limit: with C x small, (1 + C x)^(-beta) is
#: exp(-C beta x) to within beta (C x)^2 / 2, so only the product C beta is determined, not C and
#: beta apart. The published fits have beta near 0.6 (Luo et al.'s 25M: 0.583); declared at 1000.
EXPONENTIAL_LIMIT_BETA = 1e3


def undetermined_drop(p: MultiPowerParams) -> str | None:
    """Why ``p``'s C and beta are not determined apart (:data:`EXPONENTIAL_LIMIT_BETA`), or None."""
    beta, c = float(p.beta), float(p.C)
    if not beta > EXPONENTIAL_LIMIT_BETA:
        return None
    return (f"beta {beta:.3g} and C {c:.3g}: the loss drop has reached its exponential limit, "
            f"1 - exp(-C beta x), where only C x beta = {c * beta:.3g} x is determined, not C and beta apart")


def loss_drop_fraction(x: jnp.ndarray, C: ArrayLike, beta: ArrayLike) -> jnp.ndarray:
    """G(x) = 1 - (C x + 1)^(-beta), accurate for small C x."""
    return -jnp.expm1(-beta * jnp.log1p(C * x))


def loss_drop(p: MultiPowerParams, curve: Curve) -> jnp.ndarray:
    """LD at every checkpoint of ``curve``: B sum_k (eta_{k-1} - eta_k) G(eta_k^(-gamma) S_k(t)), [K];
    in batches of :data:`CHECKPOINT_BATCH` checkpoints when the K x M terms are many."""
    scale = jnp.exp(-p.gamma * jnp.log(curve.rate))

    def at(forward, step):
        travelled = jnp.where(curve.drop_step <= step[..., None], forward[..., None] - curve.before, 0.0)
        return jnp.sum(curve.drop * loss_drop_fraction(scale * travelled, p.C, p.beta), axis=-1)

    if curve.step.size * curve.drop.size <= MAX_TERMS:
        return p.B * at(curve.forward, curve.step)
    return p.B * jax.lax.map(lambda c: at(*c), (curve.forward, curve.step), batch_size=CHECKPOINT_BATCH)


def loss(p: MultiPowerParams, curve: Curve) -> jnp.ndarray:
    """L(t) = L0 + A (S1(t) + S_W)^(-alpha) - LD(t) at every checkpoint of ``curve``, [K]."""
    return p.L0 + p.A * curve.forward ** -p.alpha - loss_drop(p, curve)


def final_loss(p: MultiPowerParams, lrs: jnp.ndarray) -> jnp.ndarray:
    """L at the last step of the rates ``lrs`` (eta_1..eta_T), differentiable in them: the quantity
    a schedule is optimised for (:mod:`jaxscale.optimum.best_schedule`). Every step is summed (a step
    whose rate does not change adds 0), so the rates may be JAX tracers."""
    forward = jnp.cumsum(lrs)
    increments = rate_changes(lrs)
    travelled = forward[-1] - (forward - lrs)
    drop = jnp.sum(increments * loss_drop_fraction(lrs ** -p.gamma * travelled, p.C, p.beta))
    return p.L0 + p.A * forward[-1] ** -p.alpha - p.B * drop


def to_vector(p: MultiPowerParams) -> jnp.ndarray:
    """The unconstrained vector: logs of the scales (L0, A, B, C), the exponents as they are."""
    return jnp.stack([jnp.log(v) if log else jnp.asarray(v) for v, log in zip(p, LOG_SCALE)], -1)


def from_vector(theta: jnp.ndarray) -> MultiPowerParams:
    """The parameters of a vector (inverse of :func:`to_vector`)."""
    return MultiPowerParams(*(jnp.exp(theta[..., i]) if log else theta[..., i] for i, log in enumerate(LOG_SCALE)))
