"""The posterior of the joint law L(N, D, eta, B) and of its optimal learning rate and batch size.

The model is :func:`jaxscale.inference.models.law_model` of :mod:`jaxscale.laws.hparam_bowl` on the
runs of every group's window, with a level per (N, D) group (:class:`~jaxscale.inference.models.Levels`:
the Bayesian form of the group levels of :mod:`jaxscale.fitting.joint_hyperparameters`), under the
law's documented priors. It is sampled by NUTS (or its Laplace approximation) from the joint fit;
every draw's optimum (eta*, B*) at the groups' (N, D), and its local exponents, come from the
implicit-differentiation solver (:func:`jaxscale.optimum.hyperparameters.optimum`), vmapped over draws.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from jaxscale.core.numerics import float64
from jaxscale.fitting import joint_hyperparameters as jh
from jaxscale.fitting.hyperparameters import GridRuns, interval95
from jaxscale.inference import models
from jaxscale.inference.sample import NutsConfig, laplace_draws, run_nuts
from jaxscale.optimum import hyperparameters as optimum

#: The starting level SD of the chains (about the spread of the joint fit's group levels).
START_LEVEL_SCALE = 0.004


@dataclass(frozen=True)
class JointPosterior:
    """Posterior draws of the joint law (``params``, [S] fields), of every draw's optimum at the
    groups' (N, D) (``optimum``, [S, G] fields) and of the exponents, by ``method`` ("nuts" or
    "laplace") in ``seconds``; ``divergences`` for NUTS."""

    params: Any
    optimum: optimum.Optimum
    method: str
    seconds: float
    divergences: int | None = None

    def exponents(self) -> dict[str, np.ndarray]:
        """Per draw, Step Law's exponents by implicit differentiation (alpha = -d log eta*/d log N,
        beta = d log eta*/d log D, beta_batch = d log B*/d log D), median over the groups."""
        o = self.optimum
        return {"alpha": -np.nanmedian(o.lr_exponent_n, axis=1), "beta": np.nanmedian(o.lr_exponent_d, axis=1),
                "beta_batch": np.nanmedian(o.batch_exponent_d, axis=1)}

    def to_dict(self) -> dict[str, Any]:
        """Median and 95% interval of each exponent, of each group's eta* and B*, and the sampler's facts."""
        def entry(draws: np.ndarray) -> dict[str, Any]:
            ci = interval95(draws)
            median = float(np.nanmedian(draws)) if np.isfinite(draws).any() else math.nan
            return {"median": median if math.isfinite(median) else None, "ci95": None if ci is None else list(ci)}

        return {"method": self.method, "draws": len(self.params[0]), "seconds": self.seconds,
                "divergences": self.divergences, "exponents": {k: entry(v) for k, v in self.exponents().items()},
                "lr_opt": [entry(v) for v in self.optimum.lr.T], "batch_opt": [entry(v) for v in self.optimum.batch.T]}


@float64
def joint_posterior(runs: GridRuns, joint: jh.JointFit, *, method: str = "nuts", config: NutsConfig = NutsConfig(),
                    draws: int = 4000, seed: int = 0) -> JointPosterior:
    """The joint law's posterior on the windows' runs of ``runs``, started from the fit ``joint``
    (module docstring): NUTS with ``config``, or ``draws`` from the Laplace approximation."""
    if method not in ("nuts", "laplace"):
        raise ValueError(f"method must be 'nuts' or 'laplace', got {method!r}")
    law = joint.law
    rows = jh.in_windows(runs)
    table = jh.window_table(runs)
    index = np.unique(runs.group[rows], return_inverse=True)[1]
    levels = models.Levels(index, int(index.max()) + 1)
    inputs = table.law_inputs(law.inputs)
    residual = np.log(table.loss) - np.log(law.evaluate(joint.params, *inputs)) - joint.levels[index]
    sigma = float(max(1.4826 * np.median(np.abs(residual - np.median(residual))), 1e-4))
    init = {**models.sites(law, joint.params, inputs, sigma), "level_scale": START_LEVEL_SCALE,
            "level_z": joint.levels / START_LEVEL_SCALE}
    model = partial(models.law_model, law, levels=levels)
    t0 = time.perf_counter()
    divergences = None
    if method == "nuts":
        mcmc = run_nuts(model, inputs, table.loss, init=init, config=config)
        samples = {k: np.asarray(v) for k, v in mcmc.get_samples().items()}
        divergences = int(np.sum(mcmc.get_extra_fields().get("diverging", 0)))
    else:
        samples = laplace_draws(model, inputs, table.loss, init=init, draws=draws, seed=seed)
    seconds = time.perf_counter() - t0
    params = models.params_of(law, samples)
    groups = runs.groups
    best = optimum.optimum(law, params, groups["N"].to_numpy(np.float64), groups["D"].to_numpy(np.float64))
    return JointPosterior(params, best, method, seconds, divergences)
