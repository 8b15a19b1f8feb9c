"""Approach 3 on several groups of runs at once, some of the law's coordinates shared.

The runs fall into G groups (recipes, datasets, two extractions of one figure); the law's vector
coordinates named *shared* (e.g. the exponents alpha and beta) hold for every group, the others
(e.g. log A, log B, log E) are fitted once per group. The objective is Hoffmann et al. (2022)
Eq. 3 summed over every run, each under its own group's parameters::

    min_theta  sum_i w_i Huber_delta( log L_i - log Lhat(N_i, D_i; theta_g(i)) ),   delta = 1e-3,

theta = (shared coordinates, then each group's own coordinates), theta_g the law's vector of
group g. It is the frequentist twin of the grouped Bayesian model
(:mod:`jaxscale.inference.grouped`), with the same split into groups.

It is minimised by L-BFGS (:mod:`jaxscale.core.lbfgs`) from G + 1 starts: each group's own
Approach-3 optimum (:func:`jaxscale.fitting.approach3.fit_approach3`) with the shared coordinates
at their mean over the groups, and with them at each group's value. The bootstrap
(:func:`grouped_bootstrap`) resamples runs within each group (a stratified bootstrap: every
resample keeps each group's number of runs) and refits all resamples in one batched call, warm
from the fit.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core import lbfgs
from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import fit_approach3
from jaxscale.fitting.bootstrap import resample_counts
from jaxscale.fitting.objective import DELTA, fit_data, huber
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Tolerances of the grouped fit and its refits (one problem per start; tight, as the likelihood
#: fit's): the intercepts and exponents of each group form the same thin valleys as one law's.
GROUPED = lbfgs.Options(max_iter=5000, ftol=1e-13, gtol=1e-11, memory_size=20)


class Layout(NamedTuple):
    """Where each group's law vector sits in the grouped vector: ``shared`` coordinates first
    (in the law's order), then each of ``count`` groups' own coordinates."""

    law: Law
    count: int
    shared: tuple[str, ...]

    @property
    def own(self) -> tuple[str, ...]:
        """The coordinates fitted once per group."""
        return tuple(name for name in self.law.vector_names if name not in self.shared)

    def names(self, labels: Sequence[str]) -> tuple[str, ...]:
        """Names of the grouped vector's coordinates: ``alpha``, then ``log_A[label]``, ..."""
        return self.shared + tuple(f"{name}[{label}]" for label in labels for name in self.own)

    def expand(self, theta: ArrayLike) -> jnp.ndarray:
        """(G, p) the law's vector of every group from the grouped vector (any leading axes)."""
        xp = jnp if isinstance(theta, jax.Array) else np
        theta = xp.asarray(theta)
        k, o = len(self.shared), len(self.own)
        own = theta[..., k:].reshape(*theta.shape[:-1], self.count, o)
        columns = {name: own[..., j] for j, name in enumerate(self.own)}
        columns |= {name: xp.broadcast_to(theta[..., None, i], own.shape[:-1]) for i, name in enumerate(self.shared)}
        return xp.stack([columns[name] for name in self.law.vector_names], -1)

    def pack(self, vectors: ArrayLike) -> np.ndarray:
        """The grouped vector of (G, p) law vectors, each shared coordinate at its mean."""
        vectors = np.asarray(vectors, np.float64)
        index = {name: j for j, name in enumerate(self.law.vector_names)}
        shared = [np.mean(vectors[:, index[name]]) for name in self.shared]
        own = vectors[:, [index[name] for name in self.own]].reshape(-1)
        return np.concatenate([shared, own])


class GroupedData(NamedTuple):
    """Runs of every group in log space (a pytree): ``log_x`` one array per law input, the
    ``log_y`` log loss, row ``weights`` and each row's ``group`` (0 .. G - 1)."""

    log_x: tuple[np.ndarray, ...]
    log_y: np.ndarray
    weights: np.ndarray
    group: np.ndarray


def grouped_objective(theta: jnp.ndarray, data: GroupedData, layout: Layout, delta: float = DELTA) -> jnp.ndarray:
    """sum_i w_i Huber_delta(log L_i - log Lhat(N_i, D_i; theta_g(i))) (module docstring)."""
    rows = layout.expand(theta)[data.group]
    r = data.log_y - layout.law.log_loss(layout.law.from_vector(rows), *data.log_x)
    return jnp.sum(data.weights * huber(r, delta))


@functools.cache
def _objective(layout: Layout, delta: float):
    return functools.partial(grouped_objective, layout=layout, delta=delta)


@dataclass(frozen=True)
class GroupedOptimum:
    """The grouped Approach-3 optimum.

    Attributes:
        layout: the split of the grouped vector.
        labels: the groups' names, in the order of the group index.
        vector: the grouped vector at the optimum.
        objective: the Huber sum there.
        data: the runs fitted.
        curvature: the L-BFGS curvature pairs the best start ended with.
    """

    layout: Layout
    labels: tuple[str, ...]
    vector: np.ndarray
    objective: float
    data: GroupedData
    curvature: lbfgs.Memory
    delta: float
    seconds: float

    @property
    def law(self) -> Law:
        return self.layout.law

    @property
    def vectors(self) -> np.ndarray:
        """(G, p) each group's law vector."""
        return np.asarray(self.layout.expand(self.vector))

    def params(self, group: int) -> NamedTuple:
        """The law's parameters of group ``group``."""
        return jax.tree.map(float, self.law.from_vector(self.vectors[group]))


def grouped_data(runs: RunsTable, law: Law, group: np.ndarray) -> GroupedData:
    """The runs of every group in log space, unit weights."""
    data = fit_data(runs.law_inputs(law.inputs), runs.loss)
    return GroupedData(data.log_x, data.log_y, data.weights, np.asarray(group, np.int64))


@float64
def fit_grouped(runs: RunsTable, group: ArrayLike, labels: Sequence[str], shared: Sequence[str],
                law: Law = chinchilla.LAW, delta: float = DELTA) -> GroupedOptimum:
    """Fit ``law`` to ``runs`` whose row i belongs to group ``group[i]`` (0 .. G - 1, named by
    ``labels``), the coordinates ``shared`` common to every group (module docstring)."""
    group = np.asarray(group, np.int64)
    layout = Layout(law, len(labels), tuple(name for name in law.vector_names if name in shared))
    unknown = sorted(set(shared) - set(law.vector_names))
    if unknown:
        raise ValueError(f"the {law.name} law has no coordinate {unknown[0]!r}; its coordinates are "
                         f"{', '.join(law.vector_names)}")
    if len(labels) < 2 or group.shape != (len(runs),) or not set(np.unique(group)) == set(range(len(labels))):
        raise ValueError(f"grouping needs two or more groups, each with runs; got {len(labels)} labels")
    own = np.stack([fit_approach3(runs.select(group == g), law=law, delta=delta).vector for g in range(len(labels))])
    starts = [layout.pack(own)]
    for g in range(len(labels)):  # the shared coordinates at each group's own values
        starts.append(layout.pack(np.where([name in layout.shared for name in law.vector_names], own[g], own)))
    data = grouped_data(runs, law, group)
    t0 = time.perf_counter()
    solve = lbfgs.solver(_objective(layout, delta), GROUPED, keep_memory=True)
    sol = jax.tree.map(np.asarray, solve(jnp.asarray(np.stack(starts)), data))
    best = lbfgs.best_converged(sol)
    return GroupedOptimum(layout=layout, labels=tuple(labels), vector=sol.theta[best], objective=float(sol.value[best]),
                      data=data, curvature=jax.tree.map(lambda a: a[best], sol.memory), delta=delta,
                      seconds=time.perf_counter() - t0)


def stratified_counts(group: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(R, n) counts that resample runs with replacement within each group, keeping each group's
    size (:func:`jaxscale.fitting.bootstrap.resample_counts` per group, seeds ``seed`` + g)."""
    counts = np.zeros((n_resamples, len(group)))
    for g in np.unique(group):
        rows = np.flatnonzero(group == g)
        counts[:, rows] = resample_counts(len(rows), n_resamples, seed + int(g))
    return counts


class GroupedBootstrap(NamedTuple):
    """Refits of R stratified resamples: ``vectors`` (R, G, p) each group's law vector,
    ``converged`` [R]."""

    vectors: np.ndarray
    converged: np.ndarray


@float64
def grouped_bootstrap(fit: GroupedOptimum, n_resamples: int, seed: int = 0) -> GroupedBootstrap:
    """Refit ``fit`` on ``n_resamples`` stratified resamples of its runs, all at once, warm from
    its optimum and curvature pairs (module docstring)."""
    counts = stratified_counts(fit.data.group, n_resamples, seed)
    data = GroupedData(tuple(np.broadcast_to(x, counts.shape) for x in fit.data.log_x),
                       np.broadcast_to(fit.data.log_y, counts.shape), counts,
                       np.broadcast_to(fit.data.group, counts.shape))
    solve = lbfgs.solver(_objective(fit.layout, fit.delta), GROUPED, batch="data")
    sol = jax.tree.map(np.asarray, solve(jnp.asarray(fit.vector), data, fit.curvature))
    vectors = np.asarray(fit.layout.expand(sol.theta))
    return GroupedBootstrap(vectors, sol.converged & np.all(np.isfinite(vectors), axis=(1, 2)))
