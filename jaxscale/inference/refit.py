"""A Bayesian refit of a runs table, end to end: the entry point of ``jaxscale bayes``.

1. The Approach-3 optimum (:func:`jaxscale.fitting.approach3.fit_approach3`, Huber loss on log
   residuals) gives the starting point, and the MAD of its log residuals the starting sigma.
2. NUTS (:func:`jaxscale.inference.sample.run_nuts`) samples :func:`~jaxscale.inference.law_model.law_model`
   of the chosen law, or the Laplace approximation (:func:`~jaxscale.inference.sample.laplace_draws`)
   stands in for it.
3. The draws become an ArviZ InferenceData with the law's parameters (A, B, E, ...) and its
   closed-form derived quantities (for Chinchilla a, b, G) added, and are checked
   (:mod:`jaxscale.inference.diagnostics`), warning on any failed threshold.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import arviz as az
import jax
import numpy as np

from jaxscale.core.intervals import interval
from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult, fit_approach3
from jaxscale.fitting.holdout import (
    calibration,
    extrapolation_distance,
    extrapolation_scale,
)
from jaxscale.inference import diagnostics, law_model
from jaxscale.inference.sample import NutsConfig, laplace_draws, run_nuts
from jaxscale.laws import chinchilla
from jaxscale.laws.draws import Draws, derived_draws
from jaxscale.laws.law import Law, NoisePriors
from jaxscale.optimum.allocation import loss_draws
from jaxscale.reconciliation import per_draw as derived
from jaxscale.tables.table import RunsTable


@dataclass(frozen=True)
class BayesFit:
    """Posterior draws of one refit.

    ``draws`` maps every model site, every law parameter and every closed-form derived quantity
    (for Chinchilla a, b, G) to a [S] array, S = chains x samples; ``params`` holds the law
    parameters of every draw; ``idata`` and ``diagnostics`` exist for NUTS only."""

    law: Law
    priors: NoisePriors
    method: str  # "nuts" or "laplace"
    draws: dict[str, np.ndarray]
    params: NamedTuple
    init: NamedTuple  # the Approach-3 optimum the sampler started from
    seconds: float  # wall time of the sampler, compilation included
    idata: az.InferenceData | None = None
    diagnostics: diagnostics.Diagnostics | None = None

    @property
    def df(self) -> float:
        return self.priors.df

    def row_params(self) -> tuple[NamedTuple, np.ndarray]:
        """Law parameters and sigma of every draw ([S]: the same at every run)."""
        return self.params, self.draws["sigma"]

    @property
    def parameter_draws(self) -> Draws:
        """The law's parameters of every draw as :class:`~jaxscale.laws.draws.Draws`."""
        return Draws.of(self.law, self.params, self.method)


#: Exponents are positive a priori (:mod:`jaxscale.inference.law_model`); an Approach-3 optimum
#: with an exponent <= 0 (a loss that does not fall along that input), outside the prior's
#: support, starts the chains at this exponent instead (else they never leave their start).
MIN_START_EXPONENT = 1e-3


def start_at(fit: FitResult) -> tuple[NamedTuple, float]:
    """An Approach-3 ``fit`` as the sampler's start: its parameters (exponents at least
    :data:`MIN_START_EXPONENT`) and a robust scale of its log residuals (1.4826 x median absolute
    residual) as sigma. A fit that did not settle is refused before any sampling."""
    fit.check_settled("start the chains from")
    runs, law = fit.runs, fit.law
    r = np.log(runs.loss) - np.log(fit.predict(*runs.law_inputs(law.inputs)))
    start = fit.params._replace(**{k: max(getattr(fit.params, k), MIN_START_EXPONENT) for k in law.exponent_names})
    return start, float(max(1.4826 * np.median(np.abs(r - np.median(r))), 1e-4))


def approach3_start(law: Law, runs: RunsTable) -> tuple[NamedTuple, float]:
    """The Approach-3 optimum of ``runs`` under ``law`` as the sampler's start (:func:`start_at`)."""
    return start_at(fit_approach3(runs, law=law))


def parameter_draws(law: Law, draws: Mapping[str, np.ndarray],
                    groups: law_model.Groups | None = None) -> dict[str, np.ndarray]:
    """Law parameters and closed-form derived quantities of every draw, in the draws' shape
    (with ``groups``, [..., count] per group: see :func:`~jaxscale.inference.law_model.params_of`)."""
    params = law_model.params_of(law, draws, groups)
    shape = np.shape(params[0])
    flat = jax.tree.map(lambda v: np.reshape(v, -1), params)
    return {**params._asdict(), **{k: np.reshape(v, shape) for k, v in derived_draws(law, flat).items()}}


Start = tuple[NamedTuple, float]  # law parameters and sigma the sampler starts from


class _Problem(NamedTuple):
    """What both samplers need: the law, its priors, the model, its data and its start."""

    law: Law
    priors: NoisePriors
    model: Any
    data: tuple[tuple[np.ndarray, ...], np.ndarray]  # the law's inputs (e.g. N, D), loss
    start: NamedTuple
    init: dict[str, float]  # values of the model's sample sites at the start


def _problem(runs: RunsTable, law: Law, priors: NoisePriors | None, start: Start | None) -> _Problem:
    priors = priors or law.priors
    params, sigma = start or approach3_start(law, runs)
    inputs = runs.law_inputs(law.inputs)
    return _Problem(law, priors, partial(law_model.law_model, law, priors=priors), (inputs, runs.loss), params,
                    law_model.sites(law, params, inputs, sigma))


#: The pointwise log likelihood of every draw at every run (what PSIS-LOO reads) is kept for up to
#: this many (draw, run) values, 2^25 float64 (256 MiB); beyond, the InferenceData holds none, so
#: the memory of a refit stays O(draws + runs), and a comparison by LOO is refused before sampling.
POINTWISE_TERMS = 2**25


def keeps_pointwise(config: NutsConfig, rows: int) -> bool:
    """Whether a NUTS refit of ``rows`` runs keeps the pointwise log likelihood (:data:`POINTWISE_TERMS`)."""
    return config.chains * config.samples * rows <= POINTWISE_TERMS


def check_pointwise(config: NutsConfig, rows: int) -> None:
    """Refuse (``ValueError``, before any sampling) a comparison by PSIS-LOO whose pointwise log
    likelihood would exceed :data:`POINTWISE_TERMS` values."""
    if not keeps_pointwise(config, rows):
        draws = config.chains * config.samples
        raise ValueError(f"ranking by PSIS-LOO needs the log likelihood of every draw at every run: {draws:,} x "
                         f"{rows:,} values ({draws * rows * 8 / 2**30:.1f} GiB), more than {POINTWISE_TERMS:,}; "
                         "fit fewer rows (e.g. --final-only) or draw fewer samples")


def nuts_idata(model: Any, data: tuple, init: Mapping[str, Any], config: NutsConfig,
               quantities: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]], warn: bool = True,
               groups: Sequence[str] | None = None, rows: int | None = None,
               ) -> tuple[dict[str, np.ndarray], az.InferenceData, diagnostics.Diagnostics, float]:
    """NUTS on ``model(*data)`` from ``init``: the draws by chain ([chains, samples, ...]), their
    InferenceData with ``quantities(draws)`` added, its diagnostics (warned about with ``warn``)
    and the sampler's wall time. Draws with a trailing axis are per group, named ``groups``;
    ``rows`` the observations (default: the size of ``data``'s last element, the loss)."""
    t0 = time.perf_counter()
    mcmc = run_nuts(model, *data, init=init, config=config)
    by_chain = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    seconds = time.perf_counter() - t0
    coords = None if groups is None else {"group": list(groups)}
    idata = az.from_numpyro(mcmc, coords=coords, dims={k: ["group"] for k, v in by_chain.items() if v.ndim == 3},
                            log_likelihood=keeps_pointwise(config, np.size(data[-1]) if rows is None else rows))
    for name, values in quantities(by_chain).items():
        idata.posterior[name] = (("chain", "draw", "group")[:values.ndim], values)
    diag = diagnostics.diagnose(idata)
    if warn:
        diagnostics.warn_problems(diag)
    return by_chain, idata, diag, seconds


@float64
def sample_posterior(runs: RunsTable, law: Law = chinchilla.LAW, config: NutsConfig = NutsConfig(),
                     priors: NoisePriors | None = None, warn: bool = True, start: Start | None = None) -> BayesFit:
    """NUTS refit of ``runs`` under ``law``, started from ``start`` (default: the Approach-3
    optimum of ``runs``, :func:`approach3_start`). Emits
    :class:`~jaxscale.inference.diagnostics.SamplingWarning` for failed checks."""
    problem = _problem(runs, law, priors, start)
    law = problem.law
    grouped, idata, diag, seconds = nuts_idata(problem.model, problem.data, problem.init, config,
                                               partial(parameter_draws, law), warn)
    flat = {k: v.reshape(-1) for k, v in grouped.items()}
    flat |= parameter_draws(law, flat)
    return BayesFit(law=law, priors=problem.priors, method="nuts", draws=flat, params=law_model.params_of(law, flat),
                    init=problem.start, seconds=seconds, idata=idata, diagnostics=diag)


@float64
def approximate_posterior(runs: RunsTable, law: Law = chinchilla.LAW, draws: int = 4000, seed: int = 0,
                          priors: NoisePriors | None = None, start: Start | None = None) -> BayesFit:
    """Laplace-approximation refit of ``runs`` (the fast path); the mode search starts from
    ``start`` (default: the Approach-3 optimum of ``runs``)."""
    problem = _problem(runs, law, priors, start)
    t0 = time.perf_counter()
    sites = laplace_draws(problem.model, *problem.data, init=problem.init, draws=draws, seed=seed)
    seconds = time.perf_counter() - t0
    flat = sites | parameter_draws(problem.law, sites)
    return BayesFit(law=problem.law, priors=problem.priors, method="laplace", draws=flat,
                    params=law_model.params_of(problem.law, flat), init=problem.start, seconds=seconds)


def summarize(fit: BayesFit, names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per quantity: mean, sd, 95% HDI and (NUTS only) R-hat and bulk/tail ESS (None for a
    quantity the law fixes: :func:`jaxscale.inference.diagnostics.varies`)."""
    names = names or [*fit.law.param_names, *(k for k in fit.law.derived(fit.init) if k in fit.draws)]
    diag = fit.diagnostics
    out = {}
    for name in names:
        x = fit.draws[name]
        lo, hi = interval(x, method="hdi")
        out[name] = {
            "mean": float(np.mean(x)), "sd": float(np.std(x, ddof=1)), "hdi95": [float(lo), float(hi)],
            "r_hat": diag.r_hat.get(name) if diag else None,
            "ess_bulk": diag.ess_bulk.get(name) if diag else None,
            "ess_tail": diag.ess_tail.get(name) if diag else None,
        }
    return out


def median_and_hdi(x: np.ndarray) -> dict[str, Any]:
    """Median and 95% HDI of a set of draws, as reported."""
    lo, hi = interval(x, method="hdi")
    return {"median": float(np.median(x)), "hdi95": [float(lo), float(hi)]}


def predictive_checks(fit: BayesFit, runs: RunsTable, level: float = 0.95) -> dict[str, float]:
    """Posterior predictive checks on ``runs`` (held-out runs for an honest check): the spread
    of the log-loss residuals and the coverage of the central ``level`` predictive interval."""
    sigma = fit.draws["sigma"]
    inputs = runs.law_inputs(fit.law.inputs)
    r = diagnostics.log_residuals(fit.law, fit.params, inputs, runs.loss)
    coverage = diagnostics.predictive_coverage(fit.law, fit.params, sigma, fit.df, inputs, runs.loss, level)
    return {"residual_median_abs": float(np.median(np.abs(r))), "residual_max_abs": float(np.max(np.abs(r))),
            "coverage": coverage, "level": level}


@float64
def holdout_calibration(fit: BayesFit, fitted: RunsTable, heldout: RunsTable, by: str, seed: int = 0) -> dict[str, Any]:
    """Errors and predictive-interval coverage on runs left out of ``fit`` (sampled on
    ``fitted``; :func:`jaxscale.fitting.holdout.calibration`): the point prediction is the posterior
    median of Lhat, the predictive distribution the posterior predictive, noise scale included,
    with and without the extrapolation term of :mod:`jaxscale.fitting.holdout`."""
    inputs = heldout.law_inputs(fit.law.inputs)
    median = np.median(loss_draws(fit.law, fit.params, *inputs), axis=0)
    replicas = diagnostics.posterior_predictive(fit.law, fit.params, fit.draws["sigma"], fit.df, inputs, seed)
    return calibration(heldout.loss, median, np.exp(replicas), extrapolation_distance(heldout, fitted, by),
                       extrapolation_scale(fitted, by, law=fit.law), seed)


@dataclass(frozen=True)
class Reconciled:
    """Pearce & Song's Step-4 exponents of every draw and the embedding relation used."""

    exponents: derived.ReconciledExponents
    embedding: str  # "paper" (gamma = 47491, delta = 1/3), "bootstrap" (Table A9 resamples) or the table's


def reconciled_exponent_draws(draws: Draws, embedding_uncertainty: bool = False, seed: int = 0,
                              max_draws: int | None = None, table: RunsTable | None = None) -> Reconciled:
    """The reconciled (Kaplan-basis) and total-basis frontier exponents of every valid draw of
    the Chinchilla law (of every k-th draw, about ``max_draws`` of them, when given); gamma
    fixed at the paper's value or, with ``embedding_uncertainty``, drawn with delta from the
    bootstrap of the Table A9 fit (one pair per draw). With a runs ``table`` of both bases, the
    Step-4 simulation is the table's own instead: gamma and delta fitted to its model sizes,
    its size range and budget windows (:mod:`jaxscale.reconciliation.on_runs`). Raises
    ValueError, saying why, for a law of another form (:attr:`Law.chinchilla_undefined`)."""
    from jaxscale.reconciliation.on_runs import (
        model_sizes,
        simulation_config,
        table_embedding,
    )

    draws.law.require_chinchilla("the reconciled exponent")
    used = draws.used
    step = 1 if max_draws is None else max(1, len(used[0]) // max_draws)
    params = jax.tree.map(lambda v: v[::step], used)
    if table is not None:
        embedding = table_embedding(table)
        median = jax.tree.map(lambda v: float(np.median(v)), params)
        config = simulation_config(median, embedding, model_sizes(table)[1])
        return Reconciled(derived.reconciled_exponents(params, embedding, config),
                          f"table (gamma = {embedding.gamma:.4g}, delta = {embedding.delta:.4f})")
    embedding = derived.embedding_draws(len(params.alpha), seed) if embedding_uncertainty else None
    return Reconciled(derived.reconciled_exponents(params, embedding),
                      "bootstrap" if embedding_uncertainty else "paper")


def report(fit: BayesFit, runs: RunsTable, reconciled: Reconciled | None = None) -> dict[str, Any]:
    """Everything ``jaxscale bayes`` prints, as one JSON-ready dict. Without ``reconciled``, the
    reconciled exponent is None and ``reconciled_exponent_undefined`` says why where the law has
    none (:attr:`~jaxscale.laws.law.Law.chinchilla_undefined`)."""
    out: dict[str, Any] = {
        "law": fit.law.name, "method": fit.method, "n_points": len(runs),
        "posterior": summarize(fit),
        "sigma": median_and_hdi(fit.draws["sigma"]),
        "init_approach3": fit.init._asdict(),
        "predictive_check": predictive_checks(fit, runs),
        "sampler_seconds": fit.seconds,
    }
    if fit.diagnostics is not None:
        out |= {"divergences": fit.diagnostics.divergences, "bfmi": list(fit.diagnostics.bfmi),
                "problems": list(fit.diagnostics.problems)}
    if reconciled is not None:
        out |= {"reconciled_exponent": median_and_hdi(reconciled.exponents.nonembedding),
                "total_exponent": median_and_hdi(reconciled.exponents.total),
                "embedding": reconciled.embedding}
    elif fit.law.chinchilla_undefined is not None:
        out |= {"reconciled_exponent": None, "total_exponent": None, "embedding": None,
                "reconciled_exponent_undefined": f"undefined for the {fit.law.name} law: "
                                                 f"{fit.law.chinchilla_undefined}"}
    return out
