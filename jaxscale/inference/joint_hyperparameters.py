"""The posterior of the joint law L(N, D, eta, B): intervals on eta*, B* and their exponents.

The Bayesian counterpart of :mod:`jaxscale.hyperparameters.joint` (the law
:mod:`jaxscale.laws.hparam_bowl`, fitted to every group's window of runs), its bowl sampled by
NUTS::

    phi     ~ the law's priors of the bowl's coordinates (:data:`BOWL`: eta*(N, D) and B*(D), the
              curvatures and the tilt; :func:`jaxscale.inference.law_model.coordinates`), the tilt
              rho's truncated to (-1, 1) rather than (0, inf): the bowl has a minimum for |rho| < 1,
              and the data decide the sign,
    m_g     ~ Normal(log of group g's lowest loss, FLOOR_SCALE),      g = 1..G,
    sigma   ~ HalfNormal(priors.sigma),
    log L_i ~ StudentT(df, log(e^(m_g(i)) + bowl_i(phi)), sigma),

bowl_i the loss run i's learning rate and batch add (:func:`jaxscale.laws.hparam_bowl.bowl`) and
m_g group g's tuned log loss, a free coordinate: the group levels of the profiled fit become
floors of their own. **What is not sampled**: the law's Chinchilla part (E, A, B_D, alpha, beta),
held at the profiled fit's values. The optimum in (eta, B) does not depend on it (the bowl adds
nats to whatever floor), and 17 floors determine its five coordinates too weakly for the sampler:
drawn as m_g ~ Normal(log T(N_g, D_g), tau), its ridges made 1.5% of the transitions diverge on
Step Law's table (4 chains x 1,000) and R-hat of its beta 1.13 on a six-group synthetic grid
(2 chains x 250). An earlier attempt drew the levels as offsets inside every run's mean, with the
unregularised dense mass matrix (regularised now for models this size, :class:`~jaxscale.inference.sample.NutsConfig`), and every transition diverged;
that parametrisation was not tried with the regularised one. The floors' prior is weak: 10% of
the loss, against posterior SDs of ~1e-4 from each window's 20-50 runs.

The optimum (eta*, B*) of every draw at every group's (N, D), and its local exponents, come from
the implicit-differentiation solver (:func:`jaxscale.optimum.hparam_optimum.optimum`), vmapped
over the draws: posterior intervals on eta*, B* and on the exponents alpha = -d log eta*/d log N,
beta = d log eta*/d log D and beta_batch = d log B*/d log D.

**Agreement with the per-group route** (declared before the first posterior was drawn): the
joint law's eta*(N_g, D_g) agrees with group g's optimum when its posterior median lies inside the
per-group route's 95% bootstrap interval of that optimum; an exponent agrees when the two 95%
intervals (posterior and bootstrap) overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pandas as pd

from jaxscale.core.numerics import float64
from jaxscale.hyperparameters.per_group import GridRuns, HyperparameterFit, interval95
from jaxscale.determinacy.curvature import robust_sigma
from jaxscale.hyperparameters.joint import EXPONENTS, JointFit, in_windows, median_exponents, window_table
from jaxscale.inference import law_model
from jaxscale.inference.diagnostics import Diagnostics
from jaxscale.inference.refit import nuts_idata
from jaxscale.inference.sample import NutsConfig, posterior_mode
from jaxscale.laws import hparam_bowl
from jaxscale.laws.law import NoisePriors
from jaxscale.optimum import hparam_optimum as optimum

#: The bowl's coordinates, the ones sampled (the Chinchilla part is held at the profiled fit).
BOWL = ("log_eta0", "alpha_eta", "beta_eta", "log_batch0", "beta_batch", "log_k_eta", "log_k_batch", "rho")  # rho last
#: Scale of the Normal prior of each group's floor m_g about its lowest log loss.
FLOOR_SCALE = 0.1


def nuts_config(**settings: Any) -> NutsConfig:
    """The sampler's settings for this model: a jitter of 1e-4 of each chain's start in the
    unconstrained space, the order of the floors' posterior SDs (the default 0.1 starts a chain
    hundreds of SDs from the mode), ``settings`` (chains, warmup, samples, seed, ...) as given. (Its
    30-odd coordinates have the mass matrix regularised: :class:`~jaxscale.inference.sample.NutsConfig`.)"""
    return NutsConfig(**{"init_jitter": 1e-4, **settings})


class JointData(NamedTuple):
    """The windows' runs: ``log_x`` their log N, D, eta and batch, ``log_loss``, ``group`` each
    run's group (0..G-1), and each group's ``lowest`` log loss."""

    log_x: tuple[jnp.ndarray, ...]
    log_loss: jnp.ndarray
    group: jnp.ndarray
    lowest: jnp.ndarray


def joint_data(runs: GridRuns) -> JointData:
    """The runs of every group's window (:func:`jaxscale.hyperparameters.joint.in_windows`)."""
    rows = in_windows(runs)
    table = window_table(runs)
    lowest = pd.Series(np.log(runs.loss)).groupby(runs.group).min().to_numpy()
    return JointData(tuple(np.log(x) for x in table.law_inputs(hparam_bowl.LAW.inputs)), np.log(table.loss),
                     runs.group[rows], lowest)


def _bowl_params(value: dict[str, jnp.ndarray], fixed: NamedTuple) -> NamedTuple:
    """The law's parameters: the bowl's coordinates ``value``, the rest ``fixed``'s."""
    law = hparam_bowl.LAW
    held = law.to_vector(fixed)
    return law.from_vector(jnp.stack([jnp.broadcast_to(value[name], jnp.shape(value[BOWL[0]])) if name in value
                                      else jnp.broadcast_to(held[..., i], jnp.shape(value[BOWL[0]]))
                                      for i, name in enumerate(law.vector_names)], -1))


def joint_model(data: JointData, fixed: NamedTuple, priors: NoisePriors | None = None, observed: bool = True) -> None:
    """The model of the module docstring (NumPyro), the Chinchilla part held at ``fixed``'s; the
    prior predictive without ``observed``."""
    law = hparam_bowl.LAW
    priors = law.priors if priors is None else priors
    value = law_model.coordinates(law, data.log_x, priors, names=BOWL[:-1])
    loc, scale = law_model.coordinate_priors(law, priors)["rho"]
    value["rho"] = numpyro.sample("rho", dist.TruncatedNormal(loc, scale, low=-1.0, high=1.0))
    params = _bowl_params(value, fixed)
    with numpyro.plate("groups", data.lowest.shape[0]):
        m = numpyro.sample("m", dist.Normal(data.lowest, FLOOR_SCALE))
    sigma = numpyro.sample("sigma", dist.HalfNormal(priors.sigma))
    mean = hparam_bowl.log_loss_above(m[data.group], hparam_bowl.bowl(params, *data.log_x))
    with numpyro.plate("runs", data.log_loss.shape[0]):
        numpyro.sample("log_loss", dist.StudentT(priors.df, mean, sigma), obs=data.log_loss if observed else None)


def start(fit: JointFit, data: JointData) -> dict[str, Any]:
    """Values of every sample site at the profiled fit ``fit``: its bowl, m_g each group's tuned
    log loss plus its level, sigma the residuals' robust scale (floored at 1e-4)."""
    law = hparam_bowl.LAW
    log_n, log_d = np.log(fit.optima["N"].to_numpy()), np.log(fit.optima["D"].to_numpy())
    m = np.asarray(hparam_bowl.log_tuned(fit.params, log_n, log_d)) + fit.levels
    residual = np.asarray(data.log_loss - law.log_loss(fit.params, *data.log_x)) - fit.levels[data.group]
    sigma = max(robust_sigma(residual), 1e-4)
    sites = law_model.sites(law, fit.params, tuple(np.exp(x) for x in data.log_x), sigma)
    kept = {name: value for name, value in sites.items() if name in BOWL or name.removesuffix("_c") in BOWL}
    return {**kept, "sigma": sigma, "m": m}


@dataclass(frozen=True)
class JointPosterior:
    """Draws of the joint law (``params``, [S] fields; the Chinchilla part the profiled fit's), the
    groups' tuned log losses ``m`` [S, G] and ``sigma`` [S], and every draw's optimum at every
    group's (N, D) (``optima``,
    :class:`~jaxscale.optimum.hparam_optimum.Optimum` of [S, G] fields); ``groups`` the groups'
    N and D; sampler diagnostics and wall time."""

    params: NamedTuple
    m: np.ndarray
    sigma: np.ndarray
    optima: optimum.Optimum
    groups: pd.DataFrame
    idata: az.InferenceData
    diagnostics: Diagnostics
    seconds: float

    @property
    def exponents(self) -> dict[str, np.ndarray]:
        """[S] draws of each exponent of :data:`~jaxscale.hyperparameters.joint.EXPONENTS`
        (:func:`~jaxscale.hyperparameters.joint.median_exponents` of each draw)."""
        o = self.optima
        return median_exponents(o.lr_exponent_n, o.lr_exponent_d, o.batch_exponent_d)

    def summary(self) -> pd.DataFrame:
        """quantity, estimate (posterior median), lower, upper (95% central interval): the exponents,
        then eta* and B* at every group's (N, D)."""
        rows = [(name, draws) for name, draws in self.exponents.items()]
        for g, (n, d) in enumerate(zip(self.groups["N"], self.groups["D"])):
            rows += [(f"lr_opt[N={n:.3g}, D={d:.3g}]", self.optima.lr[:, g]),
                     (f"batch_opt[N={n:.3g}, D={d:.3g}]", self.optima.batch[:, g])]
        return pd.DataFrame([_interval_row(name, draws) for name, draws in rows])

    def agreement(self, per_group: HyperparameterFit) -> dict[str, Any]:
        """The declared comparison with the per-group route (module docstring): per exponent both
        95% intervals and whether they overlap; per group the posterior median of eta* and the
        per-group optimum's bootstrap interval, and whether it lies inside (None where undefined)."""
        exponents = {}
        for name, (which, field_) in EXPONENTS.items():
            joint = interval95(self.exponents[name])
            boot = getattr(per_group, which).interval(field_)
            overlap = None if joint is None or boot is None else bool(joint[0] <= boot[1] and boot[0] <= joint[1])
            exponents[name] = {"joint_ci95": _listed(joint), "per_group_ci95": _listed(boot), "overlap": overlap}
        groups = []
        o = per_group.optima
        for g in range(len(self.groups)):
            median = float(np.nanmedian(self.optima.lr[:, g]))
            lo, hi = o["lr_opt_lower"][g], o["lr_opt_upper"][g]
            defined = math.isfinite(median) and math.isfinite(lo) and math.isfinite(hi)
            groups.append({"N": float(o["N"][g]), "D": float(o["D"][g]), "joint_lr_opt": median,
                           "per_group_ci95": [float(lo), float(hi)] if defined else None,
                           "inside": bool(lo <= median <= hi) if defined else None})
        inside = [row["inside"] for row in groups if row["inside"] is not None]
        return {"exponents": exponents, "groups": groups, "groups_inside": sum(inside), "groups_compared": len(inside)}

    def to_dict(self) -> dict[str, Any]:
        """The summary's rows, sigma (median, 95% interval) and the sampler's diagnostics."""
        return {"posterior": self.summary().to_dict("records"), "sigma": _interval_row("sigma", self.sigma), "divergences": self.diagnostics.divergences,
                "r_hat_max": max(self.diagnostics.r_hat.values()), "problems": list(self.diagnostics.problems),
                "sampler_seconds": self.seconds}


def _listed(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else list(interval)


def _interval_row(name: str, draws: np.ndarray) -> dict[str, Any]:
    finite = np.asarray(draws)[np.isfinite(draws)]
    interval = interval95(finite)
    return {"quantity": name, "estimate": float(np.median(finite)) if finite.size else None,
            "lower": None if interval is None else interval[0], "upper": None if interval is None else interval[1]}


@float64
def sample_joint(runs: GridRuns, fit: JointFit, config: NutsConfig | None = None,
                 priors: NoisePriors | None = None, warn: bool = True) -> JointPosterior:
    """NUTS on the joint model of ``runs`` (module docstring), started from the posterior mode found
    from the profiled fit ``fit`` (:func:`jaxscale.hyperparameters.joint.fit_joint`), and the
    optimum of every draw at every group's (N, D) by implicit differentiation. ``config``
    defaults to :func:`nuts_config`'s."""
    law = hparam_bowl.LAW
    config = nuts_config() if config is None else config
    data = jax.tree.map(jnp.asarray, joint_data(runs))
    model = partial(joint_model, fixed=fit.params, priors=priors)
    init = posterior_mode(model, data, init=start(fit, data))
    by_chain, idata, diagnostics, seconds = nuts_idata(model, (data,), init, config, lambda draws: {}, warn,
                                                          rows=len(data.log_loss))
    flat = {k: v.reshape(-1, *v.shape[2:]) for k, v in by_chain.items()}
    params = jax.tree.map(np.asarray, _bowl_params({k: jnp.asarray(flat[k]) for k in BOWL}, fit.params))
    groups = runs.groups.reset_index(drop=True)[["N", "D"]]
    best = optimum.optimum(law, params, groups["N"].to_numpy(), groups["D"].to_numpy())
    return JointPosterior(params, flat["m"], flat["sigma"], best, groups, idata, diagnostics, seconds)
