"""One sensitivity study, end to end: what ``jaxscale sensitivity`` reports, as JSON-ready dicts.

For a law fitted to a runs table (:func:`fit_study`), posterior draws (:func:`draws_study`) or a
published parameter set (:func:`published_study`), three sections:

1. ``quantities``: for each named quantity (:mod:`jaxscale.sensitivities.quantities`), its value
   and elasticities d log q / d log theta_k; with draws of the parameters (bootstrap refits or
   posterior draws), the delta-method SD of log q from their full covariance beside the SD of
   log q over the draws (:mod:`jaxscale.sensitivities.delta_method`);
2. ``influence`` (fits only): each run's first-order effect on every quantity by implicit
   differentiation of the fit, the runs ranked by it, and its agreement with exact
   leave-one-out refits (:mod:`jaxscale.sensitivities.influence`);
3. ``reconciliation``: the reconciled exponent's derivatives with respect to the law, the
   embedding relation and Kaplan's size window (:mod:`jaxscale.reconciliation.choice_sensitivity`);
   None, with ``reconciliation_undefined`` saying why, for a law other than Chinchilla's
   (:attr:`jaxscale.laws.law.Law.chinchilla_undefined`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

import numpy as np

from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.bootstrap import BootstrapResult, bootstrap
from jaxscale.laws import chinchilla, pearce_song
from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law
from jaxscale.reconciliation.pipeline import EmbeddingFit
from jaxscale.reconciliation.choice_sensitivity import (
    KAPLAN_EXPONENT,
    KNOBS,
    reconciliation_sensitivity,
)
from jaxscale.sensitivities import influence as infl
from jaxscale.sensitivities.delta_method import delta_method, log_covariance
from jaxscale.sensitivities.elasticity import values_and_elasticities
from jaxscale.sensitivities.quantities import (
    Quantity,
    evaluate_draws,
    law_quantities,
    stacked,
)


@dataclass(frozen=True)
class StudySettings:
    """What to study: N*(C) and D*(C) at ``budgets`` (FLOP), the loss of the ``planned`` runs
    (N, D), the reconciled exponent under ``embedding`` (gamma, delta; Chinchilla law only),
    ``n_bootstrap`` refits (seed ``seed``) for the covariance, the ``top`` runs to list and the
    ``target`` exponent of the reconciliation's first-order answers."""

    budgets: tuple[float, ...] = (1e24,)
    planned: tuple[tuple[float, float], ...] = ((7e10, 1.4e12),)
    embedding: EmbeddingFit = EmbeddingFit(pearce_song.GAMMA_PAPER, pearce_song.DELTA_KAPLAN)
    n_bootstrap: int = 1000
    seed: int = 0
    top: int = 5
    target: float = KAPLAN_EXPONENT


def study_quantities(law: Law, settings: StudySettings) -> dict[str, Quantity]:
    """The settings' quantities of ``law`` (the reconciled exponent for the Chinchilla law only)."""
    embedding = settings.embedding if law.chinchilla_undefined is None else None
    return law_quantities(law, settings.budgets, settings.planned, embedding)


def quantity_section(names: list[str], params: NamedTuple, values: np.ndarray, elasticities: np.ndarray,
                     draws: NamedTuple | None = None, log_q_draws: np.ndarray | None = None) -> dict[str, dict[str, Any]]:
    """Per quantity (``names``): value and elasticities ((Q, K), from
    :func:`~jaxscale.sensitivities.elasticity.values_and_elasticities` at ``params``); with
    ``draws`` of the parameters and the (S, Q) ``log_q_draws`` of the quantities there (e.g.
    ``np.log(evaluate_draws(quantities, draws))``), the delta-method SDs of log q with and
    without correlations, the SD of log q over the draws and the variance shares."""
    fields = params._fields
    out = {q: {"value": float(values[j]), "elasticities": dict(zip(fields, elasticities[j].tolist()))}
           for j, q in enumerate(names)}
    if draws is None:
        return out
    dm = delta_method(elasticities, log_covariance(draws), log_q_draws)
    for j, q in enumerate(names):
        out[q].update(sd_log_delta=float(dm.sd_log[j]), sd_log_independent=float(dm.sd_log_independent[j]),
                      sd_log_draws=float(dm.sd_log_draws[j]), shares=dict(zip(fields, dm.shares[j].tolist())))
    return out


def _run_rows(fit: FitResult, order: np.ndarray, columns: Mapping[str, np.ndarray]) -> list[dict[str, Any]]:
    n, d = fit.inputs
    return [{"run": int(i), "N": float(n[i]), "D": float(d[i]), "loss": float(fit.runs.loss[i]),
             **{k: float(v[i]) for k, v in columns.items()}} for i in order]


def influence_section(fit: FitResult, names: list[str], elasticities: np.ndarray, first: infl.Influence,
                      exact: np.ndarray, top: int) -> dict[str, Any]:
    """Each run's first-order change of log q for every quantity (``first``, chained with the
    (Q, K) ``elasticities``) against the (n, Q) ``exact`` leave-one-out changes: correlations
    (also for the route through d theta*/d log L_i alone), the ``top`` most influential runs,
    the ``top`` worst-matched runs, and every run's values (``per_run``)."""
    gradient = infl.vector_gradient(elasticities, fit.params, fit.law.log_scale)
    linear = infl.linear_changes(gradient, first.removal)
    via_log_loss = infl.linear_changes(gradient, first.removal_via_log_loss)
    section: dict[str, Any] = {"n_runs": fit.n_points, "quadratic_runs": int(first.quadratic.sum()),
                               "jackknife_converged": int(np.isfinite(exact[:, 0]).sum()), "quantities": {}}
    for j, q in enumerate(names):
        match = infl.agreement(linear[:, j], exact[:, j])
        columns = {"linear": linear[:, j], "exact": exact[:, j], "residual": first.residuals,
                   "leverage": first.leverage}
        section["quantities"][q] = {
            "correlation_jackknife": match.correlation,
            "correlation_jackknife_log_loss_route": infl.agreement(via_log_loss[:, j], exact[:, j]).correlation,
            "most_influential": _run_rows(fit, np.argsort(-np.abs(linear[:, j]))[:top], columns),
            "worst_matched": _run_rows(fit, match.worst[:top], columns),
        }
    section["per_run"] = {"N": fit.inputs[0], "D": fit.inputs[1], "loss": fit.runs.loss,
                          "residual": first.residuals, "linear": dict(zip(names, linear.T)),
                          "exact": dict(zip(names, exact.T))}
    return section


def reconciliation_section(params: chinchilla.ChinchillaParams, settings: StudySettings) -> dict[str, Any]:
    """The reconciled exponent's sensitivity to every knob of the reconciliation (per knob:
    value, derivative, elasticity, first-order factor to the target, exponent there)."""
    r = reconciliation_sensitivity(params, settings.embedding.gamma, settings.embedding.delta, settings.target)
    knobs = {k: {"value": r.values[i], "derivative": r.derivative[i], "elasticity": r.elasticity[i],
                 "factor_to_target": r.factor[i], "exponent_at_factor": r.exponent_at_factor[i]}
             for i, k in enumerate(KNOBS)}
    return {"exponent": r.exponent, "frontier_exponent": r.frontier_exponent, "target": r.target,
            "gamma": settings.embedding.gamma, "delta": settings.embedding.delta, "knobs": knobs}


def _reconciliation(law: Law, params: NamedTuple, settings: StudySettings) -> dict[str, Any]:
    """The ``reconciliation`` section, or None and why it is undefined for ``law``."""
    if law.chinchilla_undefined is not None:
        return {"reconciliation": None,
                "reconciliation_undefined": f"undefined for the {law.name} law: {law.chinchilla_undefined}"}
    return {"reconciliation": reconciliation_section(params, settings)}


def published_study(law: Law, params: NamedTuple, settings: StudySettings = StudySettings()) -> dict[str, Any]:
    """Elasticities and the reconciliation's sensitivities at a published parameter set of
    ``law`` (no draws: no delta method; no runs: no influence)."""
    quantities = study_quantities(law, settings)
    values, e = values_and_elasticities(stacked(quantities), params)
    return {"law": law.name, "params": params._asdict(),
            "quantities": quantity_section(list(quantities), params, values, e),
            **_reconciliation(law, params, settings)}


def draws_study(draws: Draws, settings: StudySettings = StudySettings()) -> dict[str, Any]:
    """The quantities and their elasticities at the median of ``draws`` (e.g. a posterior's),
    the delta method from the covariance of the valid draws beside the SD over them, and the
    reconciliation's sensitivities at the median (no runs: no influence)."""
    params = draws.median()
    quantities = study_quantities(draws.law, settings)
    values, e = values_and_elasticities(stacked(quantities), params)
    log_q = np.log(evaluate_draws(quantities, draws.used))
    return {"law": draws.law.name, "params": params._asdict(), "draws": {"kind": draws.kind, "count": draws.n_valid},
            "quantities": quantity_section(list(quantities), params, values, e, draws.used, log_q),
            **_reconciliation(draws.law, params, settings)}


def fit_study(fit: FitResult, settings: StudySettings = StudySettings(),
              refits: BootstrapResult | None = None) -> dict[str, Any]:
    """All three sections for an Approach-3 fit, the covariance from bootstrap ``refits`` of it
    (default: ``settings.n_bootstrap`` refits with ``settings.seed``, none when 0). The
    quantities are evaluated once, vmapped over the jackknife refits, the all-runs refit and the
    bootstrap refits together."""
    fit.check_settled("differentiate")
    nonpositive = fit.nonpositive_exponents()
    if nonpositive:
        raise ValueError(f"the fitted {', '.join(f'{k} = {v:.4g}' for k, v in nonpositive.items())} is <= 0: the loss "
                         "does not fall along that input, so the optimum and exponents this study differentiates "
                         "do not exist (`jaxscale fit` prints the fit)")
    quantities = study_quantities(fit.law, settings)
    names = list(quantities)
    out: dict[str, Any] = {"law": fit.law.name, "params": fit.params._asdict(), "n_points": fit.n_points}
    values, e = values_and_elasticities(stacked(quantities), fit.params)
    t0 = time.perf_counter()
    first, jack = infl.influence(fit), infl.jackknife(fit)
    blocks = [jack.vectors, jack.base[None]]
    if refits is None and settings.n_bootstrap:
        refits = bootstrap(fit, settings.n_bootstrap, seed=settings.seed)
    if refits is not None:
        blocks.append(refits.vectors[refits.converged])
        out["bootstrap"] = {"resamples": len(refits.converged), "converged": int(refits.converged.sum()),
                            "seed": refits.seed, "seconds": refits.seconds}
    log_q = np.log(evaluate_draws(quantities, fit.law.from_vector(np.vstack(blocks))))
    n = fit.n_points
    exact = np.where(jack.converged[:, None], log_q[:n] - log_q[n], np.nan)
    draws = fit.law.from_vector(blocks[2]) if refits is not None else None
    out["quantities"] = quantity_section(names, fit.params, values, e, draws, log_q[n + 1:])
    out["influence"] = influence_section(fit, names, e, first, exact, settings.top)
    out["influence"]["seconds"] = time.perf_counter() - t0
    return out | _reconciliation(fit.law, fit.params, settings)
