"""Many parameter sets of one law: the one type that bootstrap refits and posterior draws share.

A :class:`Draws` is a law, its parameter NamedTuple with a leading axis of S draws on every
field, which of the draws are valid (a bootstrap refit that converged; every posterior draw)
and where they came from. Whatever takes draws (intervals, allocations and their bands,
sensitivities, the reconciled exponent of every draw) takes a fit's bootstrap and a posterior
alike, and reads the valid draws from :attr:`Draws.used`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Generic

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.intervals import interval
from jaxscale.core.numerics import float64
from jaxscale.laws.law import Law, P
from jaxscale.support.compiled_programs import persistent_jit

#: Where draws come from, and the interval each reports (:meth:`Draws.interval`): bootstrap
#: refits give percentile intervals (Besiroglu et al. 2024), posterior draws highest-density ones.
KINDS = {"bootstrap": "percentile", "nuts": "hdi", "laplace": "hdi"}


@partial(persistent_jit, static_argnums=0)
def _derived_map(law: Law, draws: Any) -> dict[str, jnp.ndarray]:
    return jax.vmap(law.derived)(draws)


@float64
def derived_draws(law: Law, draws: Any) -> dict[str, np.ndarray]:
    """The law's closed-form derived quantities (:attr:`Law.closed_forms`, e.g. Chinchilla's a, b,
    G of Hoffmann et al. Eq. 4) for every draw of ``draws`` (the law's NamedTuple, [S] fields),
    as NumPy float64; NaN where a draw is outside the law's definition (:meth:`Law.derived`)."""
    if law.closed_forms is None:
        return {}
    return jax.tree.map(np.asarray, _derived_map(law, jax.tree.map(lambda v: jnp.asarray(v, jnp.float64), draws)))


@dataclass(frozen=True, eq=False)
class Draws(Generic[P]):
    """Parameter sets of ``law``, one per draw.

    Attributes:
        law: the law the draws are parameters of.
        params: the law's NamedTuple, every field an [S] array.
        valid: [S] booleans, the draws to use (bootstrap refits that converged to finite
            parameters; every posterior draw).
        kind: ``"bootstrap"``, ``"nuts"`` or ``"laplace"`` (:data:`~jaxscale.laws.draws.KINDS`).
    """

    law: Law
    params: P
    valid: np.ndarray
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {tuple(KINDS)}, got {self.kind!r}")
        shapes = {np.shape(v) for v in self.params}
        if len(shapes) != 1 or len(next(iter(shapes))) != 1 or np.shape(self.valid) != next(iter(shapes)):
            raise ValueError(f"draws need one [S] array per field of {self.law.params_type.__name__} and [S] valid "
                             f"flags; got field shapes {sorted(shapes)} and valid {np.shape(self.valid)}")

    @classmethod
    def of(cls, law: Law, params: P, kind: str, valid: np.ndarray | None = None) -> Draws:
        """Draws of ``params`` (fields of any array type), all valid unless ``valid`` says otherwise."""
        params = jax.tree.map(lambda v: np.asarray(v, np.float64), params)
        return cls(law, params, np.ones(len(params[0]), bool) if valid is None else np.asarray(valid, bool), kind)

    def __len__(self) -> int:
        return len(self.valid)

    @property
    def n_valid(self) -> int:
        return int(np.sum(self.valid))

    @property
    def used(self) -> P:
        """The parameters of the valid draws ([S_valid] fields)."""
        return jax.tree.map(lambda v: v[self.valid], self.params)

    @property
    def interval_method(self) -> str:
        """``"percentile"`` for bootstrap refits, ``"hdi"`` for posterior draws."""
        return KINDS[self.kind]

    def quantities(self) -> dict[str, np.ndarray]:
        """Every parameter and closed-form derived quantity over the valid draws, [S_valid] each."""
        used = self.used
        return {**used._asdict(), **derived_draws(self.law, used)}

    def median(self) -> P:
        """The median of each parameter over the valid draws, as the law's NamedTuple of floats."""
        return jax.tree.map(lambda v: float(np.median(v)), self.used)

    def interval(self, values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
        """The ``level`` interval (:attr:`interval_method`) of a quantity's values over these draws
        (e.g. ``quantities()["a"]``), NaN draws left out."""
        lo, hi = interval(values, level, method=self.interval_method)
        return float(lo), float(hi)
