"""The learning-rate schedule that a fitted multi-power law predicts to end lowest.

Luo et al. (2025, Section 5) optimise the schedule through their law: with the warmup fixed (linear
from 0 to the peak eta_max over W steps), the rates of the T - W steps after it are chosen to minimise
the law's loss at the last step,

    min_{eta_max >= eta_(W+1) >= ... >= eta_T > 0}  L(T; eta),

L the multi-power law (:func:`jaxscale.laws.multipower.final_loss`). Here the schedule after the
warmup is non-increasing by construction: its log falls from log eta_max by a non-negative amount
at each of :data:`KNOTS` knots spread evenly over the steps, linear between them,

    log eta(t) = log eta_max - interp(t; knots, cumsum(softplus(theta))),

so any theta gives an admissible schedule, and theta is found by gradient descent (Adam, optax)
with the gradient from JAX's autodiff through the whole curve. It starts from the constant
schedule (softplus(theta) ~ 1e-3) and is compared, under the same law, with the cosine schedule
to 0.1 eta_max and warmup-stable-decay (a linear cooldown to 0.1 eta_max over the last 20% of
steps, Hägele et al. 2024; the multi-power paper's WSD runs end at 0.1 of the peak too) of the same
length and peak.

Two refusals, before and after the descent: a schedule longer than the memory available holds
(the descent keeps a few arrays of every step's rate and their gradients: about
:data:`BYTES_PER_STEP` bytes a step, so 10^9 steps need hundreds of GiB and were killed for memory
with no message), and a predicted final loss that is not a positive number, which no loss is: the
law was asked far outside the rates it was fitted on (a peak rate of 100 for a law fitted at
3e-4 predicted -36,287 nats).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxscale.core.numerics import float64
from jaxscale.laws import multipower
from jaxscale.tables.learning_rates import named_learning_rates
from jaxscale.support.memory import check_memory

#: Knots of the schedule's log decrement; the Adam steps and step size of the descent.
KNOTS, ITERATIONS, STEP_SIZE = 128, 3000, 0.05
#: The schedules compared: cosine to 0.1 of the peak; WSD's linear cooldown to 0.1 of it over the last 20%.
BASELINES = {"cosine": {"kind": "cosine", "final_fraction": 0.1},
             "wsd": {"kind": "wsd", "final_fraction": 0.1, "decay_fraction": 0.2}}
#: Peak bytes of the descent per step of the schedule: measured 259-423 (maxrss over the
#: process's start, 4e6 and 1e6 steps), declared with room above.
BYTES_PER_STEP = 512


def _rates(theta: jnp.ndarray, peak: float, warmup: jnp.ndarray, steps: int) -> jnp.ndarray:
    """The warmup's rates, then eta_max exp(-interp(t; knots, cumsum(softplus(theta))))."""
    after = steps - len(warmup)
    knots = jnp.linspace(0.0, after, theta.shape[0] + 1)
    fall = jnp.concatenate([jnp.zeros(1, theta.dtype), jnp.cumsum(jax.nn.softplus(theta))])
    log_rate = jnp.log(peak) - jnp.interp(jnp.arange(1, after + 1, dtype=theta.dtype), knots, fall)
    return jnp.concatenate([warmup, jnp.exp(log_rate)])


@partial(jax.jit, static_argnums=(3, 4, 5))
def _descend(params: multipower.MultiPowerParams, peak: float, warmup: jnp.ndarray, steps: int, iterations: int,
             knots: int) -> tuple[jnp.ndarray, jnp.ndarray]:
    optimiser = optax.adam(STEP_SIZE)
    theta = jnp.full((knots,), jnp.log(jnp.expm1(1e-3)), warmup.dtype)

    def loss(theta):
        return multipower.final_loss(params, _rates(theta, peak, warmup, steps))

    def step(carry, _):
        theta, state = carry
        value, grad = jax.value_and_grad(loss)(theta)
        updates, state = optimiser.update(grad, state)
        return (optax.apply_updates(theta, updates), state), value

    (theta, _), values = jax.lax.scan(step, (theta, optimiser.init(theta)), None, length=iterations)
    return _rates(theta, peak, warmup, steps), values


@dataclass(frozen=True)
class ScheduleOptimum:
    """The optimised schedule (``lrs``, eta_1..eta_T, warmup included) and its predicted final
    ``loss`` under ``params``; ``baselines`` the rates and predicted final loss of each schedule of
    :data:`BASELINES`; ``history`` the loss at every descent step."""

    params: multipower.MultiPowerParams
    steps: int
    peak_lr: float
    warmup_steps: int
    lrs: np.ndarray
    loss: float
    baselines: dict[str, tuple[np.ndarray, float]]
    history: np.ndarray

    def gains(self) -> dict[str, float]:
        """The loss each baseline ends above the optimised schedule (nats; positive: the optimum is lower)."""
        return {name: float(loss - self.loss) for name, (_, loss) in self.baselines.items()}

    def to_dict(self) -> dict[str, Any]:
        """The settings, the law, the predicted final losses and the gains (the rates are left out)."""
        return {"steps": self.steps, "peak_lr": self.peak_lr, "warmup_steps": self.warmup_steps,
                "params": {k: float(v) for k, v in self.params._asdict().items()}, "optimised_loss": self.loss,
                "baseline_loss": {name: loss for name, (_, loss) in self.baselines.items()},
                "gain": self.gains(), "final_lr": float(self.lrs[-1]),
                "descent": {"iterations": len(self.history), "first": float(self.history[0]),
                            "last": float(self.history[-1])}}


def baseline_rates(name: str, steps: int, peak_lr: float, warmup_steps: int) -> np.ndarray:
    """The rates of the baseline ``name`` of :data:`BASELINES` with this length, peak and warmup."""
    spec = dict(BASELINES[name])
    return named_learning_rates(spec.pop("kind"), peak_lr, steps, warmup_steps, **spec)


@float64
def optimal_schedule(params: multipower.MultiPowerParams, steps: int, peak_lr: float, warmup_steps: int = 0, *,
                     iterations: int = ITERATIONS, knots: int = KNOTS) -> ScheduleOptimum:
    """The non-increasing schedule after a linear warmup of ``warmup_steps`` to ``peak_lr`` that the
    multi-power law ``params`` predicts to end lowest after ``steps`` steps (module docstring), and
    the cosine and WSD schedules of the same length and peak under the same law."""
    if not (steps >= 2 and 0 <= warmup_steps < steps - 1):
        raise ValueError(f"need steps >= 2 and 0 <= warmup_steps < steps - 1; got {steps}, {warmup_steps}")
    if not (np.isfinite(peak_lr) and peak_lr > 0):
        raise ValueError(f"peak_lr must be a number > 0, got {peak_lr}")
    if iterations < 1 or knots < 1:
        raise ValueError(f"iterations and knots must be >= 1, got {iterations}, {knots}")
    check_memory(steps * BYTES_PER_STEP, f"optimising a schedule of {steps:,} steps")
    params = multipower.MultiPowerParams(*(float(v) for v in params))
    warmup = jnp.asarray(named_learning_rates("constant", peak_lr, steps, warmup_steps)[:warmup_steps])
    lrs, history = _descend(jax.tree.map(jnp.asarray, params), peak_lr, warmup, steps, iterations, knots)
    lrs = np.asarray(lrs)
    baselines = {}
    for name in BASELINES:
        rates = baseline_rates(name, steps, peak_lr, warmup_steps)
        baselines[name] = (rates, float(multipower.final_loss(params, jnp.asarray(rates))))
    optimum = ScheduleOptimum(params, steps, float(peak_lr), warmup_steps, lrs,
                              float(multipower.final_loss(params, jnp.asarray(lrs))), baselines, np.asarray(history))
    _check_positive_losses(optimum)
    return optimum


def _check_positive_losses(optimum: ScheduleOptimum) -> None:
    """Refuse a schedule whose predicted final loss, or a baseline's, is not a positive number
    (module docstring)."""
    losses = {"optimised": optimum.loss, **{name: loss for name, (_, loss) in optimum.baselines.items()}}
    bad = {name: loss for name, loss in losses.items() if not (np.isfinite(loss) and loss > 0)}
    if bad:
        listed = ", ".join(f"{name} {loss:.5g}" for name, loss in bad.items())
        raise ValueError(f"the law predicts final losses of {listed} at peak_lr {optimum.peak_lr:g} over "
                         f"{optimum.steps:,} steps: a loss is never <= 0, so these rates lie outside what the law "
                         "describes; give a peak_lr near the rates it was fitted on")
