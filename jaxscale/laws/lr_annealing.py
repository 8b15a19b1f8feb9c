"""The learning-curve law with learning-rate annealing (Tissue et al. 2024).

Tissue, Wang & Wang (2024), "Scaling Law with Learning Rate Annealing" (arXiv:2408.11029), Eq. 1:
the validation loss after step s of one model trained with rates eta_1..eta_s is

    L(s) = L0 + A S1^(-alpha) - C S2,

S1 the forward area and S2 the annealing area of the schedule up to step s
(:mod:`jaxscale.laws.schedule_areas`, with the decay factor lambda of S2's momentum). The power
law in S1 is the usual data term with "data" measured as the area under the learning-rate curve;
the subtracted term is the extra drop that annealing brings. The law is fitted per model size on
every checkpoint of one or two runs and then predicts the curve of any other schedule of that
model (:mod:`jaxscale.curves.lr_annealing_fit`).

Its inputs are (S1, S2), so a runs table serves it once S1 and S2 are columns
(:meth:`jaxscale.tables.table.RunsTable.law_inputs`); lambda is not a parameter of the law but of its
inputs (fixed, or profiled by the fitter over a grid). In log form, overflow-safe::

    log L = P + log(1 - exp(log C + log S2 - P)),   P = LSE(log L0, log A - alpha log S1),

which is NaN where C S2 >= L0 + A S1^(-alpha): there the law predicts a loss <= 0, outside its
domain (``Law.positive`` is False), and fits reject such steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
from jax.typing import ArrayLike

from jaxscale.laws.law import Law, NoisePriors, Normal, grid, lse
from jaxscale.tables import schema as rs


class LRAnnealingParams(NamedTuple):
    """Parameters of L(s) = L0 + A S1^(-alpha) - C S2 (Tissue et al. 2024, Eq. 1)."""

    L0: ArrayLike
    A: ArrayLike
    C: ArrayLike
    alpha: ArrayLike


def log_difference(log_a: ArrayLike, log_b: ArrayLike) -> jnp.ndarray:
    """log(a - b) from log a and log b: NaN where b > a, -inf where b = a, exact as b -> 0."""
    return log_a + jnp.log(-jnp.expm1(log_b - log_a))


def log_loss(p: LRAnnealingParams, log_s1: ArrayLike, log_s2: ArrayLike) -> jnp.ndarray:
    """log L(s) of Eq. 1 from log S1 and log S2 (log S2 = -inf for a schedule not yet annealed)."""
    L0, A, C, alpha = p
    return log_difference(lse(jnp.log(L0), jnp.log(A) - alpha * log_s1), jnp.log(C) + log_s2)


@dataclass(frozen=True)
class LRAnnealingPriors(NoisePriors):
    """``log_L0`` ~ Normal(1, 0.5) (L0 about 2.7 nats, the loss of an endless constant-rate run);
    ``log_A`` ~ Normal(0, 2) and ``log_C`` ~ Normal(-1, 3), wide because S1 and S2 are in
    learning-rate x steps, whose scale depends on the peak rate and the run's length;
    ``alpha`` ~ Normal(0.5, 0.5) truncated to > 0."""

    log_L0: Normal = (1.0, 0.5)
    log_A: Normal = (0.0, 2.0)
    log_C: Normal = (-1.0, 3.0)
    alpha: Normal = (0.5, 0.5)


LAW: Law[LRAnnealingParams] = Law(
    name="lr-annealing",
    params_type=LRAnnealingParams,
    log_loss=log_loss,
    log_scale=(True, True, True, False),
    init_grid=grid(log_l0=(0.5, 1.0, 1.5, 2.0), log_a=(-2.0, -0.5, 1.0, 2.5), log_c=(-4.0, -2.0, 0.0, 2.0),
                   alpha=(0.1, 0.3, 0.6, 1.0)),
    priors=LRAnnealingPriors(),
    formula="L(s) = L0 + A S1^(-alpha) - C S2",
    citation="Tissue, Wang & Wang (2024), Scaling Law with Learning Rate Annealing, Eq. 1",
    inputs=(rs.FORWARD_AREA, rs.ANNEALING_AREA),
    positive=False,
    needs_independent_inputs=False,  # C S2 has no exponent to trade with S1's: one line of runs determines it
    scaled_inputs=(rs.FORWARD_AREA,),  # S2 enters linearly (and is 0 before the decay starts)
    # one run's curve after warmup spans what its training spans in S1 (0.4 decades from 10 warmups
    # on in the tests' runs); the decay term, not the range of S1, tells the terms apart there
    min_decades=0.0,
)
