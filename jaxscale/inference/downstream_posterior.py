"""The joint posterior of both stages of the two-step form (:mod:`jaxscale.accuracy.two_step`),
sampled by NUTS: the Bayesian counterpart of the bootstrap that resamples both stages.

One NumPyro model holds both stages, each evaluation's own standard error in its likelihood and
a scatter beyond it per stage::

    log L_i   ~ Normal(log A - alpha log N_i,                       sqrt(s_i^2 + tau_1^2))   (finished runs)
    acc_j     ~ Normal(chance + (1 - chance) sigma(log B - k L_j),  sqrt(s_j^2 + tau_2^2))   (counted checkpoints)

with the laws' documented priors on their vector coordinates (scales as Normal logs, exponents as
Normals truncated to > 0: :attr:`jaxscale.laws.law.Law.priors`) and tau_1, tau_2 ~ HalfNormal of
each law's ``sigma``. A prediction draw puts posterior draw i of stage 1 through draw i of stage
2, so its interval carries both stages' uncertainty, jointly.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from jaxscale.accuracy.ladder import TaskLadder
from jaxscale.accuracy.two_step import TwoStepFit
from jaxscale.accuracy.weighted_fit import WeightedFit
from jaxscale.inference.law_model import coordinate_priors
from jaxscale.inference.sample import NutsConfig, run_nuts
from jaxscale.laws.downstream_accuracy import accuracy
from jaxscale.laws.law import Law


def _law_params(law: Law, stage: str):
    """The law's parameters drawn from its priors, as sites ``stage.COORDINATE``."""
    coordinates = []
    for (name, (loc, scale)), log in zip(coordinate_priors(law).items(), law.log_scale):
        prior = dist.Normal(loc, scale) if log else dist.TruncatedNormal(loc, scale, low=0.0)
        coordinates.append(numpyro.sample(f"{stage}.{name}", prior))
    return law.from_vector(jnp.stack(coordinates))


def two_step_model(stage1: Law, stage2: Law, chance: float, log_n, log_loss, log_loss_se, map_loss, acc, acc_se) -> None:
    """The joint model of the module docstring."""
    p1 = _law_params(stage1, "stage1")
    p2 = _law_params(stage2, "stage2")
    tau1 = numpyro.sample("stage1.tau", dist.HalfNormal(stage1.priors.sigma))
    tau2 = numpyro.sample("stage2.tau", dist.HalfNormal(stage2.priors.sigma))
    numpyro.sample("loss", dist.Normal(stage1.log_loss(p1, log_n), jnp.sqrt(log_loss_se**2 + tau1**2)), obs=log_loss)
    mean = accuracy(jnp.exp(stage2.log_loss(p2, jnp.log(map_loss))), chance)
    numpyro.sample("acc", dist.Normal(mean, jnp.sqrt(acc_se**2 + tau2**2)), obs=acc)


def _init(fit: WeightedFit, stage: str) -> dict[str, float]:
    vector = np.asarray(fit.law.to_vector(fit.params), np.float64)
    return {f"{stage}.{name}": float(v) for name, v in zip(fit.law.vector_names, vector)}


def _as_draws(fit: WeightedFit, samples: dict, stage: str) -> WeightedFit:
    vector = np.stack([np.asarray(samples[f"{stage}.{name}"]) for name in fit.law.vector_names], -1)
    draws = fit.law.from_vector(vector)
    return fit._replace(draws=draws, valid=np.ones(len(vector), bool))


def sample_two_step(fit: TwoStepFit, ladder: TaskLadder, config: NutsConfig = NutsConfig(chains=2, warmup=500,
                                                                                       samples=500, progress_bar=False)) -> TwoStepFit:
    """``fit`` with its draws replaced by joint posterior draws of both stages (module docstring),
    started at the least-squares fit. Unknown standard errors count as 0 (the scatter tau holds
    all the noise)."""
    log_loss_se = (np.zeros_like(ladder.final_loss) if ladder.final_loss_se is None
                   else ladder.final_loss_se / ladder.final_loss)
    acc_se = np.zeros_like(ladder.map_acc) if ladder.map_se is None else ladder.map_se
    init = {**_init(fit.stage1, "stage1"), **_init(fit.stage2, "stage2"), "stage1.tau": 0.01, "stage2.tau": 0.01}
    mcmc = run_nuts(two_step_model, fit.stage1.law, fit.stage2.law, ladder.chance, np.log(ladder.final_n),
                    np.log(ladder.final_loss), log_loss_se, ladder.map_loss, ladder.map_acc, acc_se,
                    init=init, config=config)
    samples = mcmc.get_samples()
    return fit._replace(stage1=_as_draws(fit.stage1, samples, "stage1"), stage2=_as_draws(fit.stage2, samples, "stage2"))
