"""The Bayesian model of any :class:`~jaxscale.laws.law.Law`, as a plain NumPyro function.

:func:`law_model` takes the law, the runs' ``inputs`` (one array per input of the law, e.g. N and D) and, when
conditioning, their ``loss``; it draws the law's unconstrained coordinates (its
:attr:`~jaxscale.laws.law.Law.vector_names`) from the law's documented, overridable priors and
scores the observed log loss under a heavy-tailed likelihood. Scales are drawn as logs with
Normal priors, exponents from Normal priors truncated to > 0. Inference (NUTS, Laplace) lives in
:mod:`jaxscale.inference.sample`; nothing here knows how it is sampled.

**Likelihood.** Every law is fitted in log space, as Hoffmann et al. (2022, Appendix D.2) and
Besiroglu et al. (2024) do::

    log L_i ~ StudentT(df, mu_i, sigma),   mu_i = log Lhat(N_i, D_i; theta).

Student-t rather than Normal because the loss values of the Chinchilla runs were read off a
plotted figure (Epoch AI's SVG extraction): most residuals are ~1% but a few points are off by
much more (mis-read markers, runs that diverged). The published fits guard against them with a
Huber loss of tiny delta, i.e. essentially an L1 fit; a Gaussian likelihood instead lets those
points drag the exponents. A Student-t with few degrees of freedom has the same bounded
influence (its score decays like 1/r) while staying smooth, so NUTS sees no kink, and it keeps a
proper scale parameter ``sigma`` whose posterior tells how noisy the table is. ``df = 4`` (tails
heavy enough that its kurtosis is infinite, while the variance stays finite) is the default; set ``df`` larger to
approach a Gaussian fit.

**Parameterisation.** In ``A N^-alpha`` the intercept log A and the slope alpha are nearly
collinear (log N spans only ~18-23), which makes the posterior a thin ridge. For the intercepts a
law names in :attr:`~jaxscale.laws.law.Law.centred`, the sampler therefore draws the *centred*
intercept ``log_A_c = log A - alpha * m_N`` (m_N the mean log N of the data; likewise for B with
D) and records ``log_A`` as a deterministic site. Given alpha this is a shift with unit
Jacobian, so the prior on (log A, alpha) is exactly the documented one.

**Several datasets** (``groups``, :class:`Groups`). Rows fall into groups (e.g. the ``source``
column of a table that pools several studies); the coordinates named in ``Groups.shared`` are
drawn once and hold for every group, every other coordinate is drawn once per group. The prior
of a per-group coordinate is the law's own prior, drawn *independently* for each group (no
pooling): with two or three datasets there is nothing to learn a population spread from, and a
learned spread would shrink the group differences towards zero by an amount its hyperprior
decides, which is the very question asked ("do these datasets share their exponents?"). With
no pooling the differences are those the data make, under the weakly informative law priors,
and the shared and per-group models differ only in the sharing constraint. The noise scale
``sigma`` is always per group: values read off a figure and measured losses are not equally
noisy, and a shared sigma would let the noisiest dataset set the weight of the others. A
per-group intercept is centred on its group's mean log input; an intercept shared by groups
whose slopes differ has no common centre and is drawn as it is.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.laws.law import Law, NoisePriors, Normal

_NOISE = {f.name for f in dataclasses.fields(NoisePriors)}


def coordinate_priors(law: Law, priors: NoisePriors | None = None) -> dict[str, Normal]:
    """(loc, scale) of each vector coordinate: the fields of ``priors`` (default: the law's)
    after sigma and df, in the order of the law's vector (so a
    :meth:`~jaxscale.laws.law.Law.renamed` law reuses its origin's priors)."""
    priors = law.priors if priors is None else priors
    values = [getattr(priors, f.name) for f in dataclasses.fields(priors) if f.name not in _NOISE]
    if len(values) != law.n_params:
        raise ValueError(f"{type(priors).__name__} has {len(values)} coordinate priors; "
                         f"the {law.name} law has {law.n_params}: {law.vector_names}")
    return dict(zip(law.vector_names, values))


class Groups(NamedTuple):
    """Rows split into datasets: ``index[i]`` is the group (0 .. ``count`` - 1) of row i, and
    ``shared`` the vector coordinates common to every group (the rest vary per group)."""

    index: np.ndarray
    count: int
    shared: tuple[str, ...]


def varying(law: Law, groups: Groups | None) -> frozenset[str]:
    """The vector coordinates drawn once per group (none without groups)."""
    if groups is None:
        return frozenset()
    unknown = [name for name in groups.shared if name not in law.vector_names]
    if unknown:
        raise ValueError(f"the {law.name} law has no coordinate {unknown[0]!r}; its coordinates are "
                         f"{', '.join(law.vector_names)}")
    return frozenset(law.vector_names) - frozenset(groups.shared)


def centring(law: Law, per_group: frozenset[str]) -> dict[str, tuple[str, int]]:
    """Intercept -> (slope, input index) of the intercepts sampled centred: all of the law's
    centred intercepts but a shared one whose slope varies per group."""
    return {intercept: (slope, k) for intercept, slope, k in law.centred
            if intercept in per_group or slope not in per_group}


def _centre(log_x: jnp.ndarray, groups: Groups | None) -> jnp.ndarray:
    """Mean log input: over all rows (``groups`` None), else per group ([count])."""
    if groups is None:
        return jnp.mean(log_x)
    total = jax.ops.segment_sum(log_x, groups.index, groups.count)
    return total / jax.ops.segment_sum(jnp.ones_like(log_x), groups.index, groups.count)


def _positive(name: str, prior: Normal) -> jnp.ndarray:
    return numpyro.sample(name, dist.TruncatedNormal(prior[0], prior[1], low=0.0))


def _centred_intercept(name: str, prior: Normal, slope: jnp.ndarray, centre: jnp.ndarray) -> jnp.ndarray:
    """Draw ``name`` ~ Normal(prior) through its centred form ``name_c = name - slope * centre``
    (unit Jacobian given ``slope``) and record ``name`` as a deterministic site."""
    centred = numpyro.sample(f"{name}_c", dist.Normal(prior[0] - slope * centre, prior[1]))
    return numpyro.deterministic(name, centred + slope * centre)


def _sampling_order(law: Law) -> list[str]:
    """Slopes that centre an intercept first (the intercept needs them), then the rest."""
    slopes = {slope for _, slope, _ in law.centred}
    return [c for c in law.vector_names if c in slopes] + [c for c in law.vector_names if c not in slopes]


def _per_group(plate: Any, on: bool) -> Any:
    return plate if on else contextlib.nullcontext()


def coordinates(law: Law, log_x: tuple[jnp.ndarray, ...], priors: NoisePriors | None = None,
                groups: Groups | None = None, plate: Any = None,
                names: tuple[str, ...] | None = None) -> dict[str, jnp.ndarray]:
    """Draw the law's vector coordinates (or those of them in ``names``) from their priors (module
    docstring): scales as Normal logs, exponents truncated to > 0, the centred intercepts through
    their centred form about the mean of ``log_x`` (the runs' log inputs); with ``groups``, the
    coordinates that vary are drawn in ``plate``, one per group. Returns name -> value."""
    prior = coordinate_priors(law, priors)
    per_group = varying(law, groups)
    centred = centring(law, per_group)
    scales = {name for name, log in zip(law.vector_names, law.log_scale) if log}
    value: dict[str, jnp.ndarray] = {}
    for name in (c for c in _sampling_order(law) if names is None or c in names):
        with _per_group(plate, name in per_group):
            if name in centred:
                slope, k = centred[name]
                centre = _centre(log_x[k], groups if name in per_group else None)
                value[name] = _centred_intercept(name, prior[name], value[slope], centre)
            elif name in scales:
                value[name] = numpyro.sample(name, dist.Normal(*prior[name]))
            else:
                value[name] = _positive(name, prior[name])
    return value


def law_model(law: Law, inputs: tuple[ArrayLike, ...], loss: ArrayLike | None = None,
              priors: NoisePriors | None = None, groups: Groups | None = None) -> None:
    """The law in log space with a Student-t likelihood:
    log L_i ~ StudentT(df, log_loss(params_g(i), log x1_i, log x2_i, ...), sigma_g(i)),
    g(i) the group of run i (one group without ``groups``).

    Sample sites: the law's vector coordinates (``<name>_c`` for centred intercepts, with
    ``<name>`` deterministic) and ``sigma``, of shape [count] where they vary per group.
    Without ``loss`` it draws from the prior predictive."""
    log_x = tuple(jnp.log(x) for x in inputs)
    per_group = varying(law, groups)
    plate = None if groups is None else numpyro.plate("groups", groups.count)
    value = coordinates(law, log_x, priors, groups, plate)
    rows = [value[name][groups.index] if name in per_group else value[name] for name in law.vector_names]
    params = law.from_vector(jnp.stack([jnp.broadcast_to(row, log_x[0].shape) for row in rows], -1))
    noise = law.priors if priors is None else priors
    with _per_group(plate, groups is not None):
        sigma = numpyro.sample("sigma", dist.HalfNormal(noise.sigma))
    with numpyro.plate("runs", log_x[0].shape[0]):
        numpyro.sample("log_loss", dist.StudentT(noise.df, law.log_loss(params, *log_x),
                                                 sigma if groups is None else sigma[groups.index]),
                       obs=None if loss is None else jnp.log(loss))


def sites(law: Law, params: NamedTuple, inputs: tuple[ArrayLike, ...], sigma: ArrayLike,
          groups: Groups | None = None) -> dict[str, Any]:
    """Values of :func:`law_model`'s sample sites at law parameters ``params`` (e.g. the
    Approach-3 optimum) for the data ``inputs`` (which fix the centring). With ``groups``,
    ``params`` and ``sigma`` hold one value per group; a shared coordinate starts at their mean."""
    per_group = varying(law, groups)
    vector = np.asarray(law.to_vector(params), np.float64)
    out = {name: vector[..., j] if name in per_group else float(np.mean(vector[..., j]))
           for j, name in enumerate(law.vector_names)}
    log_x = tuple(np.log(x) for x in inputs)
    for intercept, (slope, k) in centring(law, per_group).items():
        centre = np.asarray(_centre(jnp.asarray(log_x[k]), groups if intercept in per_group else None))
        out[f"{intercept}_c"] = out.pop(intercept) - out[slope] * centre
    return {**out, "sigma": np.asarray(sigma, np.float64) if groups is not None else float(sigma)}


@float64
def params_of(law: Law, samples: Mapping[str, Any], groups: Groups | None = None) -> NamedTuple:
    """The law parameters of every draw (NumPy float64 arrays of the draws' shape; with
    ``groups``, of shape [..., count]: a shared coordinate repeated for every group)."""
    per_group = varying(law, groups)
    values = [np.asarray(samples[name], np.float64) for name in law.vector_names]
    values = [v if name in per_group or groups is None else v[..., None]
              for name, v in zip(law.vector_names, values)]
    return jax.tree.map(np.asarray, law.from_vector(np.stack(np.broadcast_arrays(*values), axis=-1)))
