"""Identifiability of a fit: how well its runs determine each parameter and each decision quantity.

Every fit reports, at its optimum theta and in the fit's own coordinates (the law's vector with each
intercept centred on the runs' mean log input, :mod:`jaxscale.fitting.centring`):

- the condition number of the Hessian of its objective (the Huber sum, Hoffmann et al. 2022 Eq. 3)
  and of the Fisher information J^T J / sigma^2 of :mod:`jaxscale.determinacy.curvature`, the latter
  equilibrated (scaled to a unit diagonal, D^-1/2 I D^-1/2, so that no coordinate's units enter:
  van der Sluis 1969 showed this scaling within a factor p of the best diagonal one);
- for a law that declares the coordinates its loss is linear in (:attr:`~jaxscale.laws.law.Law.linear`),
  the condition number of the Hessian of the projected objective, the linear coordinates minimised
  out (what variable projection, :mod:`jaxscale.fitting.vpnls`, searches): at the optimum it is the
  Schur complement of the linear block, H_nn - H_nl H_ll^-1 H_ln, whatever the linear coordinates'
  parametrisation;
- the correlations between the coordinates: over the bootstrap refits or the posterior draws when
  there are any, else of the sandwich covariance of the Huber fit
  (:mod:`jaxscale.determinacy.sandwich`);
- the decades spanned by each input of the law (N, D) and by the compute C.

The rules below were declared before they were measured on any table.

**Undefined: a singular curvature.** Where the equilibrated information has a condition number
above :data:`CONDITION_LIMIT` (1e10), the runs leave some direction of the parameters undetermined:
the standard error along its weakest eigenvector is sqrt(1e10) = 1e5 times that along its strongest,
so an exponent known to 0.01 in the best direction is known to 1000 in the worst, which no reader
would call a number; it is also where float64 inverses keep fewer than 6 of their 16 digits. The
parameters that load on such a direction (an eigenvector component above :data:`WEAK_LOADING` in
absolute value) and every quantity derived from them (a, b, G, the allocation) are reported as
undefined, never as numbers.

**Warnings: a quantity not determined.** The law's exponents and its allocation exponents
(:data:`DECISION_QUANTITIES`, Chinchilla's a = beta / (alpha + beta) and b) are not determined by the
runs where the width of their 95% interval (the bootstrap's about the estimate, posterior HDI, or else the
estimate -/+ t standard errors of the sandwich covariance, by the delta method, t Student's with
n - p degrees of freedom: :mod:`jaxscale.determinacy.sandwich`) exceeds
:data:`UNDETERMINED_WIDTH` (1) times the estimate's magnitude: +-50% or more. At that width the
allocation exponent a may be 0.25 or 0.75, a choice between a compute-optimal model that grows
mostly by data and one that grows mostly by parameters, and the runs have not decided it. The
warning says it in words, with the decades the runs span of the input the exponent belongs to
and, where another exponent correlates with it beyond :data:`SEPARATION_CORRELATION` (0.9 in
absolute value: the two share more than 80% of their variance), that the two cannot be
separated. The warnings are computed here; the runs that would settle them are proposed by
:mod:`jaxscale.planning` (the verbs attach them).
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core.intervals import robust_normal
from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.centring import centre, centres, uncentre
from jaxscale.determinacy.curvature import condition_number, correlation, curvature, robust_sigma
from jaxscale.determinacy.sandwich import degrees_of_freedom, fit_sandwich, t_quantile
from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law
from jaxscale.support.compiled_programs import persistent_jit
from jaxscale.support.significant import format_or_undefined as undefined_or

#: Condition number of the equilibrated information above which a fit is singular (module docstring).
CONDITION_LIMIT = 1e10
#: |eigenvector component| above which a coordinate lies on a singular direction.
WEAK_LOADING = 0.1
#: A quantity whose 95% interval is wider than this times |estimate| is not determined.
UNDETERMINED_WIDTH = 1.0
#: |correlation| above which two exponents cannot be separated.
SEPARATION_CORRELATION = 0.9
#: Closed forms checked beside the exponents: the allocation exponents N* ~ C^a, D* ~ C^b.
DECISION_QUANTITIES = ("a", "b")


@dataclass(frozen=True)
class Identifiability:
    """What the runs of a fit determine (module docstring).

    Attributes:
        names: the fit's coordinates (the law's vector, intercepts centred on the runs).
        condition_hessian: condition number of the objective's Hessian in those coordinates.
        condition_information: condition number of the equilibrated Fisher information.
        correlation: (p, p) correlations of the coordinates.
        correlation_source: ``"bootstrap"``, ``"posterior"`` or ``"sandwich"``.
        decades: decades spanned by each input of the law, and by C for a law of N and D.
        undefined: parameters on a singular direction, reported as undefined.
        intervals: the 95% interval of each exponent and decision quantity the rules judged.
        warnings: each undetermined quantity, in words.
        condition_projected: condition number of the projected objective's Hessian (None for a law
            that declares no linear coordinates).
        residual_scale: the robust scale of the fit's log residuals (0: the law passes through every
            run; NaN where the optimum ran off).
        suggested_runs: (N, D) of runs that would determine them (attached by the verbs).
    """

    names: tuple[str, ...]
    condition_hessian: float
    condition_information: float
    correlation: np.ndarray
    correlation_source: str
    decades: dict[str, float]
    undefined: tuple[str, ...]
    intervals: dict[str, tuple[float, float, float]]
    warnings: tuple[str, ...]
    residual_scale: float = math.nan
    condition_projected: float | None = None
    suggested_runs: tuple[tuple[float, float], ...] = field(default=())

    def correlations(self) -> dict[str, float]:
        """Each pair's correlation, as ``"alpha,beta": 0.42``."""
        p = len(self.names)
        return {f"{self.names[i]},{self.names[j]}": float(self.correlation[i, j])
                for i in range(p) for j in range(i + 1, p)}

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``identifiability`` in ``jaxscale fit --json`` and ``bayes --json``."""
        return {"condition_hessian": self.condition_hessian, "condition_information": self.condition_information,
                "condition_projected": self.condition_projected, "correlation_source": self.correlation_source, "correlations": self.correlations(),
                "decades": self.decades, "undefined": list(self.undefined),
                "intervals": {k: list(v) for k, v in self.intervals.items()}, "warnings": list(self.warnings),
                "residual_scale": None if math.isnan(self.residual_scale) else self.residual_scale,
                "suggested_runs": [{"N": n, "D": d} for n, d in self.suggested_runs]}


def identifiability_text(section: Mapping[str, Any]) -> list[str]:
    """:meth:`Identifiability.to_dict` as text, the lines a fit's and a posterior's text show: the
    condition numbers and decades spanned, the three strongest correlations, each warning and the
    runs that would settle them.

    Args:
        section: the ``identifiability`` object of a result's JSON (a correlation undefined: None).

    Returns:
        The lines, each indented by two spaces.
    """
    spans = ", ".join(f"{k} {v:.2f}" for k, v in section["decades"].items())
    lines = [f"  identifiability: condition number {undefined_or(section['condition_hessian'], '.3g')} (Hessian of "
             f"the objective), {undefined_or(section['condition_information'], '.3g')} (equilibrated information); "
             f"decades spanned: {spans}"]
    if section.get("condition_projected") is not None:
        lines[0] += f"; {section['condition_projected']:.3g} projected (linear coordinates solved out)"
    strongest = sorted(section["correlations"].items(), key=lambda kv: -abs(kv[1] if kv[1] is not None else 0))[:3]
    lines.append(f"  correlations ({section['correlation_source']}): "
                 + ", ".join(f"{k} {'undefined' if v is None else format(v, '+.2f')}" for k, v in strongest))
    lines += [f"  WARNING: {text}" for text in section["warnings"]]
    if section["suggested_runs"]:
        lines.append("  runs that would settle it (jaxscale design): "
                     + ", ".join(f"N={r['N']:.3g} D={r['D']:.3g}" for r in section["suggested_runs"]))
    return lines


def _centring_matrix(law: Law, m: np.ndarray) -> np.ndarray:
    """(p, p) T with theta = T u: the law's vector of the centred vector u (a linear map)."""
    return np.stack([np.asarray(uncentre(law, e, m)) for e in np.eye(law.n_params)], -1)


def projected_condition(law: Law, hessian: np.ndarray) -> float | None:
    """The condition number of the Schur complement of ``law``'s linear coordinates in ``hessian``
    (module docstring); None for a law that declares none, inf where the linear block is singular."""
    if law.linear is None:
        return None
    if not np.isfinite(hessian).all() or not np.isfinite(condition_number(hessian)):
        return float("inf")
    linear = [law.param_names.index(c) for c in law.linear.coefficients]
    rest = [i for i in range(law.n_params) if i not in linear]
    h_ll, h_ln, h_nn = hessian[np.ix_(linear, linear)], hessian[np.ix_(linear, rest)], hessian[np.ix_(rest, rest)]
    try:
        return condition_number(h_nn - h_ln.T @ np.linalg.solve(h_ll, h_ln))
    except np.linalg.LinAlgError:
        return float("inf")


def equilibrated(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` scaled to a unit diagonal (D^-1/2 M D^-1/2; NaN where a diagonal entry is <= 0)."""
    d = np.sqrt(np.where(np.diag(matrix) > 0, np.diag(matrix), np.nan))
    return matrix / np.outer(d, d)


def weak_coordinates(matrix: np.ndarray, names: tuple[str, ...]) -> tuple[str, ...]:
    """The coordinates on a direction of the equilibrated ``matrix`` whose eigenvalue is below its
    largest over :data:`CONDITION_LIMIT` (all of them when it is not finite)."""
    scaled = equilibrated(matrix)
    if not np.isfinite(scaled).all():
        bad = ~np.isfinite(np.diag(scaled))
        return tuple(n for n, b in zip(names, bad) if b) or names
    eig, vec = np.linalg.eigh(scaled)
    weak = eig < eig.max() / CONDITION_LIMIT
    loaded = np.any(np.abs(vec[:, weak]) > WEAK_LOADING, axis=1)
    return tuple(n for n, on in zip(names, loaded) if on)


def decades(law: Law, fit: FitResult) -> dict[str, float]:
    """Decades spanned by each input of the law (its positive values), and by C for a law of N and D."""
    spans = {}
    for name, x in zip(law.inputs, fit.inputs):
        x = np.asarray(x)[np.asarray(x) > 0]
        spans[name] = float(np.log10(x.max() / x.min())) if len(x) else 0.0
    if law.inputs[:2] == ("N", "D"):
        spans["C"] = float(np.log10(fit.runs.c.max() / fit.runs.c.min()))
    return spans


def _judged_names(law: Law, theta: jnp.ndarray) -> list[str]:
    """The exponents and the decision quantities the law has (its closed forms, by shape only)."""
    derived = jax.eval_shape(law.derived, law.from_vector(theta))
    return [*law.exponent_names, *(k for k in DECISION_QUANTITIES if k in derived)]


@partial(persistent_jit, static_argnums=(0, 1))
def _quantities_and_jacobian(law: Law, names: tuple[str, ...], theta: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    def quantities(v: jnp.ndarray) -> jnp.ndarray:
        params = law.from_vector(v)
        values = {**params._asdict(), **law.derived(params)}
        return jnp.stack([values[k] for k in names])

    return quantities(theta), jax.jacfwd(quantities)(theta)


@partial(persistent_jit, static_argnums=0)
def _log_residuals(law: Law, theta: jnp.ndarray, log_x: tuple[jnp.ndarray, ...], log_y: jnp.ndarray) -> jnp.ndarray:
    return log_y - law.log_loss(law.from_vector(theta), *log_x)


def _delta_intervals(law: Law, vector: np.ndarray, covariance: np.ndarray,
                     quantile: float) -> dict[str, tuple[float, float, float]]:
    """Intervals estimate -/+ ``quantile`` SE (delta method through ``covariance``) of the exponents
    and decision quantities."""
    theta = np.asarray(vector, np.float64)  # a host array: converting it compiles nothing
    names = tuple(_judged_names(law, theta))
    values, grad = (np.asarray(a) for a in _quantities_and_jacobian(law, names, theta))
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.einsum("qi,ij,qj->q", grad, covariance, grad))
    return {k: (float(v), float(v - quantile * s), float(v + quantile * s)) for k, v, s in zip(names, values, se)}


def _input_of(law: Law, exponent: str) -> str | None:
    """The input whose term carries ``exponent`` (from the law's centred triples), if the law says."""
    vector = law.vector_names
    for _, slope, k in law.centred:
        if slope == vector[law.param_names.index(exponent)]:
            return law.inputs[k]
    return None


def _warnings(law: Law, judged: Mapping[str, tuple[float, float, float]], corr: np.ndarray, names: tuple[str, ...],
              spans: Mapping[str, float], undefined: tuple[str, ...], condition: float) -> tuple[str, ...]:
    out = []
    if undefined:
        out.append(f"{', '.join(undefined)} {'is' if len(undefined) == 1 else 'are'} not determined by these runs: the "
                   f"curvature of the fit is singular (condition number {condition:.2g} > {CONDITION_LIMIT:.0e}); "
                   "they and what derives from them are undefined")
    exponents = [k for k in law.exponent_names if k in names]
    for k, (est, lo, hi) in judged.items():
        if not (np.isfinite(hi - lo) and hi - lo <= UNDETERMINED_WIDTH * abs(est)):
            text = f"{k} is not determined: its 95% interval [{lo:.3g}, {hi:.3g}] is wider than its value {est:.3g}"
            where = _input_of(law, k) if k in exponents else None
            if where is not None and where in spans:
                text += f"; the runs span {spans[where]:.1f} decades of {where}"
            if k in exponents:
                i = names.index(k)
                partners = [(abs(corr[i, names.index(o)]), o) for o in exponents if o != k]
                r, other = max(partners, default=(0.0, None))
                if other is not None and r > SEPARATION_CORRELATION:
                    text = (f"{k} and {other} cannot be separated: "
                            f"{text.split('; ', 1)[1] + '; ' if '; ' in text else ''}their correlation is "
                            f"{corr[i, names.index(other)]:.2f} ({k}'s 95% interval [{lo:.3g}, {hi:.3g}])")
            out.append(text)
    return tuple(out)


@float64
def identifiability(fit: FitResult, draws: Draws | None = None) -> Identifiability:
    """What the runs of ``fit`` determine (module docstring).

    Args:
        fit: an Approach-3 fit.
        draws: its bootstrap refits or a posterior of the same law on the same runs
            (:class:`~jaxscale.laws.draws.Draws`): the correlations and 95% intervals come from
            them; None: from the sandwich covariance at the fit (:mod:`jaxscale.determinacy.sandwich`).

    Returns:
        The :class:`Identifiability`.
    """
    law, names = fit.law, fit.law.vector_names
    spans = decades(law, fit)
    p = law.n_params
    source = "sandwich" if draws is None else ("bootstrap" if draws.kind == "bootstrap" else "posterior")
    if fit.infinite_parameters():  # the optimum ran off: no curvature there
        nan = np.full((p, p), np.nan)
        return Identifiability(names, np.inf, np.inf, nan, source, spans, tuple(fit.infinite_parameters()), {}, ())
    m = np.asarray(centres(fit.data()))
    t = _centring_matrix(law, m)
    data = fit.data()
    residuals = np.asarray(_log_residuals(law, np.asarray(fit.vector), data.log_x, data.log_y))
    sigma = robust_sigma(residuals)
    # a fit through every run (sigma 0): the information at sigma = 1 has the same condition numbers,
    # correlations and singular directions (none of them depends on sigma), and the intervals are points
    curv = curvature(fit, sigma=sigma if sigma > 0 else 1.0)
    hessian, info = t.T @ curv.hessian @ t, t.T @ curv.information @ t
    undefined_coords = weak_coordinates(info, names)
    undefined = tuple(f for f, v in zip(law.param_names, names) if v in undefined_coords)
    if draws is None:
        robust = fit_sandwich(fit)
        t_inv = np.linalg.inv(t)  # theta = T u: the centred coordinates' covariance is T^-1 Sigma T^-T
        corr = correlation(t_inv @ robust @ t_inv.T)
        quantile = t_quantile(degrees_of_freedom(data.weights, p))
        judged = _delta_intervals(law, np.asarray(fit.vector), robust, quantile)
    else:
        u = np.asarray(centre(law, np.asarray(law.to_vector(draws.used), np.float64), m))
        u = u[np.all(np.isfinite(u), axis=1)]
        corr = np.corrcoef(u, rowvar=False) if len(u) > 2 else np.full((p, p), np.nan)
        quantities = draws.quantities()
        estimates = fit.summary()
        judged = {k: (float(estimates[k]), *_interval_of_draws(draws, float(estimates[k]), quantities[k]))
                  for k in (*law.exponent_names, *DECISION_QUANTITIES) if k in quantities}
    # a quantity without a value at the fit (a closed form of an exponent <= 0) has nothing to judge
    judged = {k: v for k, v in judged.items() if k not in undefined and np.isfinite(v[0])}
    condition = condition_number(equilibrated(info))
    return Identifiability(names=names, condition_hessian=condition_number(hessian), condition_information=condition,
                           correlation=corr, correlation_source=source, decades=spans, undefined=undefined,
                           intervals=judged,
                           warnings=_warnings(law, judged, corr, names, spans, undefined, condition),
                           residual_scale=float(sigma), condition_projected=projected_condition(law, np.asarray(hessian)))


def _interval_of_draws(draws: Draws, estimate: float, values: np.ndarray) -> tuple[float, float]:
    """The 95% interval of an exponent or a, b over ``draws``: the bootstrap's about the fit's
    estimate (:func:`jaxscale.core.intervals.robust_normal`, as ``jaxscale fit`` prints it), a
    posterior's HDI."""
    return robust_normal(estimate, values) if draws.kind == "bootstrap" else draws.interval(values)


@float64
def undefined_derived(law: Law, undefined: tuple[str, ...]) -> tuple[str, ...]:
    """The closed forms of ``law`` that depend on any of the ``undefined`` parameters (their
    derivative with respect to it is not zero at a generic point: the mean of the law's grid)."""
    if not undefined or law.closed_forms is None:
        return ()
    theta = jnp.asarray(np.mean(law.init_grid(), axis=0))
    grads = jax.jacfwd(lambda v: law.closed_forms(law.from_vector(v)))(theta)
    idx = [law.param_names.index(k) for k in undefined]
    return tuple(k for k, g in grads.items() if np.any(np.asarray(g)[idx] != 0))


def check_determined(ident: Identifiability, use: str) -> None:
    """Refuse (ValueError, saying which parameters) to ``use`` a fit with undefined parameters."""
    if ident.undefined:
        raise ValueError(f"the runs do not determine {', '.join(ident.undefined)} (the fit's curvature is singular, "
                         f"condition number {ident.condition_information:.2g}): no {use} (add runs; `jaxscale fit` "
                         "prints what is determined)")
