"""The Bayesian model of any :class:`~jaxscale.laws.law.Law`, as a plain NumPyro function.

:func:`law_model` takes the law, the runs' two inputs ``x1``, ``x2`` (e.g. N and D) and, when
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
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.typing import ArrayLike

from jaxscale.laws.law import Law, NoisePriors, Normal
from jaxscale.numerics import float64

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


def _positive(name: str, prior: Normal) -> jnp.ndarray:
    return numpyro.sample(name, dist.TruncatedNormal(prior[0], prior[1], low=0.0))


def _centred_intercept(name: str, prior: Normal, slope: jnp.ndarray, centre: jnp.ndarray) -> jnp.ndarray:
    """Draw ``name`` ~ Normal(prior) through its centred form ``name_c = name - slope * centre``
    (unit Jacobian given ``slope``) and record ``name`` as a deterministic site."""
    centred = numpyro.sample(f"{name}_c", dist.Normal(prior[0] - slope * centre, prior[1]))
    return numpyro.deterministic(name, centred + slope * centre)


def _observe(mu: jnp.ndarray, log_loss: jnp.ndarray | None, sigma_scale: float, df: float) -> None:
    sigma = numpyro.sample("sigma", dist.HalfNormal(sigma_scale))
    with numpyro.plate("runs", mu.shape[0]):
        numpyro.sample("log_loss", dist.StudentT(df, mu, sigma), obs=log_loss)


def _sampling_order(law: Law) -> list[str]:
    """Slopes that centre an intercept first (the intercept needs them), then the rest."""
    slopes = {slope for _, slope, _ in law.centred}
    return [c for c in law.vector_names if c in slopes] + [c for c in law.vector_names if c not in slopes]


def law_model(law: Law, x1: ArrayLike, x2: ArrayLike, loss: ArrayLike | None = None,
              priors: NoisePriors | None = None) -> None:
    """The law in log space with a Student-t likelihood:
    log L_i ~ StudentT(df, log_loss(params, log x1_i, log x2_i), sigma).

    Sample sites: the law's vector coordinates (``<name>_c`` for centred intercepts, with
    ``<name>`` deterministic) and ``sigma``. Without ``loss`` it draws from the prior predictive."""
    log_x = (jnp.log(x1), jnp.log(x2))
    prior = coordinate_priors(law, priors)
    centres = {intercept: (slope, k) for intercept, slope, k in law.centred}
    scales = {name for name, log in zip(law.vector_names, law.log_scale) if log}
    value: dict[str, jnp.ndarray] = {}
    for name in _sampling_order(law):
        if name in centres:
            slope, k = centres[name]
            value[name] = _centred_intercept(name, prior[name], value[slope], jnp.mean(log_x[k]))
        elif name in scales:
            value[name] = numpyro.sample(name, dist.Normal(*prior[name]))
        else:
            value[name] = _positive(name, prior[name])
    params = law.from_vector(jnp.stack([value[name] for name in law.vector_names]))
    noise = law.priors if priors is None else priors
    _observe(law.log_loss(params, *log_x), None if loss is None else jnp.log(loss), noise.sigma, noise.df)


def sites(law: Law, params: NamedTuple, x1: ArrayLike, x2: ArrayLike, sigma: float) -> dict[str, float]:
    """Values of :func:`law_model`'s sample sites at law parameters ``params`` (e.g. the
    Approach-3 optimum) for the data ``x1``, ``x2`` (which fix the centring)."""
    vector = dict(zip(law.vector_names, np.asarray(law.to_vector(params), np.float64)))
    means = (float(np.mean(np.log(x1))), float(np.mean(np.log(x2))))
    out = {name: float(v) for name, v in vector.items()}
    for intercept, slope, k in law.centred:
        out[f"{intercept}_c"] = out.pop(intercept) - out[slope] * means[k]
    return {**out, "sigma": float(sigma)}


@float64
def params_of(law: Law, samples: Mapping[str, Any]) -> NamedTuple:
    """The law parameters of every draw (NumPy float64 arrays of the draws' shape)."""
    vector = np.stack([np.asarray(samples[name], np.float64) for name in law.vector_names], axis=-1)
    return jax.tree.map(np.asarray, law.from_vector(vector))
