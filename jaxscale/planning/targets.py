"""What a scaling study is run to decide: the target quantity of an experiment design.

A target is a scalar function of the law's vector theta (:meth:`jaxscale.laws.law.Law.to_vector`),
differentiable by JAX, on the scale whose variance the design shrinks:

- ``N*(C)``: log N*(C), the compute-optimal model size at budget C under C = 6 N D,
  N* = argmin_N L(N, C / (6N)) (Pearce & Song 2024, Eq. 11), by the implicit solver of
  :mod:`jaxscale.optimum.solver` (for Chinchilla's law Hoffmann et al. 2022 Eq. 4,
  N* = G (C/6)^a);
- ``D*(C)``: log D*(C) = log C - log 6 - log N*(C);
- ``L(N, D)``: log L(N, D), the loss of a planned run;
- ``a(C)``: d log N*/d log C at C, the local allocation exponent (Chinchilla's
  a = beta / (alpha + beta) at every C), by ``jax.grad`` through the implicit solve.

The first three are positive quantities, designed and reported in log space (an interval's width
is then a ratio: decades); the exponent is designed and reported as it is. Every target is NaN at a
vector whose parameters are not all finite (a fit that ran a scale off to infinity settles no
quantity, :meth:`jaxscale.fitting.approach3.FitResult.infinite_parameters`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from jaxscale.laws.law import Law
from jaxscale.optimum import solver
from jaxscale.optimum.allocation import check_nd

#: The target kinds and the arguments each spec takes after its colon.
KINDS = {"N*": "C", "D*": "C", "L": "N,D", "a": "C"}


@dataclass(frozen=True, eq=False)
class Target:
    """A quantity a study decides, as a function of the law's vector.

    Attributes:
        name: e.g. ``"N*(1e+24)"``.
        log: whether ``fn`` is the log of a positive quantity (its value is then exp(fn)).
        fn: theta (p,) -> scalar, differentiable (JAX).
    """

    name: str
    log: bool
    fn: Callable[[jnp.ndarray], jnp.ndarray]

    def value(self, scale: jnp.ndarray) -> jnp.ndarray:
        """The quantity from the scale ``fn`` returns (exp for a log target)."""
        return jnp.exp(scale) if self.log else scale


def _settled(law: Law, name: str, log: bool, fn: Callable[[jnp.ndarray], jnp.ndarray]) -> Target:
    """The target ``fn``, NaN where a parameter of the law's vector is not finite."""
    def settled(theta: jnp.ndarray) -> jnp.ndarray:
        finite = jnp.all(jnp.isfinite(jnp.stack(law.from_vector(theta))))
        return jnp.where(finite, fn(theta), jnp.nan)
    return Target(name, log, settled)


def n_star(law: Law, budget: float) -> Target:
    """log N*(C) at ``budget`` FLOP (module docstring)."""
    log_c = math.log(budget)
    return _settled(law, f"N*({budget:.3g})", True,
                    lambda theta: solver.optimal_log_n(law, law.from_vector(theta), log_c))


def d_star(law: Law, budget: float) -> Target:
    """log D*(C) = log C - log 6 - log N*(C) at ``budget`` FLOP."""
    log_c = math.log(budget)
    return _settled(law, f"D*({budget:.3g})", True,
                    lambda theta: log_c - solver.LOG6 - solver.optimal_log_n(law, law.from_vector(theta), log_c))


def planned_loss(law: Law, n: float, d: float) -> Target:
    """log L(N, D) of a planned run of ``n`` parameters on ``d`` tokens."""
    log_n, log_d = math.log(n), math.log(d)
    return _settled(law, f"L({n:.3g}, {d:.3g})", True, lambda theta: law.log_loss(law.from_vector(theta), log_n, log_d))


def allocation_exponent(law: Law, budget: float) -> Target:
    """d log N*/d log C at ``budget`` FLOP (Chinchilla's a at every budget)."""
    log_c = math.log(budget)

    def exponent(theta: jnp.ndarray) -> jnp.ndarray:
        return jax.grad(lambda y: solver.optimal_log_n(law, law.from_vector(theta), y))(jnp.asarray(log_c, theta.dtype))

    return _settled(law, f"a({budget:.3g})", False, exponent)


def _numbers(text: str, count: int, spec: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != count or not all(math.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"target {spec!r}: expected {count} positive number(s) after the colon, got {text!r}")
    return values


def parse_target(spec: str, law: Law) -> Target:
    """The target a spec names: ``N*:C``, ``D*:C``, ``a:C`` (C in FLOP, e.g. ``N*:1e24``) or
    ``L:N,D`` (e.g. ``L:7e10,1.4e12``), for ``law`` (a law of N and D)."""
    check_nd(law)
    match = re.fullmatch(r"\s*(N\*|D\*|L|a)\s*:\s*(.+?)\s*", spec)
    if match is None:
        raise ValueError(f"target {spec!r}: write one of {', '.join(f'{k}:{v}' for k, v in KINDS.items())} "
                         "(e.g. N*:1e24 or L:7e10,1.4e12)")
    kind, rest = match.groups()
    if kind == "L":
        return planned_loss(law, *_numbers(rest, 2, spec))
    (budget,) = _numbers(rest, 1, spec)
    return {"N*": n_star, "D*": d_star, "a": allocation_exponent}[kind](law, budget)
