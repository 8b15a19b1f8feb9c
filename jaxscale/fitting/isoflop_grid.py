"""What an isoFLOP grid can and cannot tell: each budget's width and centring, and the bias that
the fitted law implies a rule makes on exactly that grid (Czech et al. 2026, Open Athena,
"Problems with Chinchilla Approach 2").

The reference is the law fitted to the whole table by variable projection
(:mod:`jaxscale.fitting.vpnls`); N*_law(C) its optimum along each budget. For each budget:

- **width**: log10(N_max / N_min) of its sampled sizes, in decades;
- **centring**: the middle of its sampled range, (log10 N_min + log10 N_max) / 2, minus
  log10 N*_law(C), in decades (positive: the grid sits above the law's optimum).

**Implied bias.** The rule (:mod:`jaxscale.fitting.isoflop_optima`) is run on the law's own
noise-free losses at the budget's sampled sizes: every difference between the optimum it finds
and N*_law(C) is the rule's error on that grid, not noise. The power law through those implied
optima of the accepted budgets, against the one through N*_law(C), gives the implied bias of the
intercept, N*(implied) / N*(law) - 1 at the budgets' geometric mean (where
:mod:`~jaxscale.fitting.isoflop_optima` reports the intercept; with an exact exponent it is
k_N(implied) / k_N(law) - 1 at every budget), and of the exponent, a(implied) - a(law). On a centred,
symmetric grid this is Open Athena's closed-form vertex shift (their 15 log-spaced sizes within
a factor k of N*: ``open_athena_bias``), computed here through the law numerically.

**Warnings** (declared before measuring; :class:`GridWarning`):

- ``intercept bias``: the implied intercept bias, in ln N*, exceeds the half-width of the
  rule's 95% interval of ln N* at the budgets' geometric mean;
- ``exponent bias``: the implied exponent bias exceeds the half-width of the 95% interval of a;
- ``drifting centre``: the centring's least-squares slope on log10 C, over the accepted budgets,
  exceeds :data:`DRIFT` decades per decade of compute in absolute value: a centre that drifts
  with the budget biases the exponent itself, not only the intercept.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.numerics import float64
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.isoflop_optima import Profiles, RuleFit, pivot_of, power_law, rule_optima
from jaxscale.laws import chinchilla
from jaxscale.laws.law import Law
from jaxscale.optimum.solver import optimal_log_n

#: A centre drifting by more than this many decades per decade of compute is flagged.
DRIFT = 0.05
#: Open Athena's grid: sizes log-spaced within a factor k of N* at each budget.
OPEN_ATHENA_SIZES = 15
#: Open Athena's Chinchilla surface (Hoffmann et al.'s A, B, E with alpha = 0.34, beta = 0.28) and
#: their five budgets, 1e17 to 1e21 FLOP.
OPEN_ATHENA_SURFACE = chinchilla.ChinchillaParams(A=406.4, B=410.7, E=1.69, alpha=0.34, beta=0.28)
OPEN_ATHENA_BUDGETS = (1e17, 1e18, 1e19, 1e20, 1e21)


@float64
def law_optima(law: Law, params: Any, budgets: ArrayLike) -> np.ndarray:
    """N*(C) of ``law`` at ``params`` at each budget (NaN where it has none)."""
    params = jax.tree.map(lambda v: jnp.asarray(v, jnp.float64), params)
    return np.exp(np.asarray(_optima(law)(params, jnp.log(jnp.asarray(budgets, jnp.float64)))))


@functools.cache
def _optima(law: Law):
    return jax.jit(jax.vmap(lambda params, lc: optimal_log_n(law, params, lc), in_axes=(None, 0)))


@float64
def synthetic_profiles(law: Law, params: Any, budgets: ArrayLike, *, k: float = 16.0,
                       sizes: int = OPEN_ATHENA_SIZES, offset: float = 1.0, drift: float = 1.0,
                       noise: float = 0.0, seed: int = 0) -> Profiles:
    """IsoFLOP grids of a known law: at each budget ``sizes`` sizes log-spaced from 1/k to k times
    the grid's centre, which is N*(C) times ``offset`` times ``drift`` ** t, t going from 0 at the
    smallest budget to 1 at the largest linearly in log C (Open Athena's linear drift); the law's
    loss at each, plus Gaussian noise of standard deviation ``noise``."""
    budgets = np.asarray(budgets, np.float64)
    log_c = np.log(budgets)
    t = (log_c - log_c.min()) / max(np.ptp(log_c), 1e-300)
    centre = np.log(law_optima(law, params, budgets) * offset * drift**t)
    log_n = (centre[:, None] + np.linspace(-np.log(k), np.log(k), sizes)[None, :]).ravel()
    labels = np.repeat(np.arange(len(budgets)), sizes)
    log_d = log_c[labels] - np.log(6.0) - log_n
    loss = np.exp(np.asarray(law.log_loss(params, jnp.asarray(log_n), jnp.asarray(log_d))))
    loss = loss + np.random.default_rng(seed).normal(0.0, noise, loss.shape) if noise else loss
    return Profiles(log_n, log_d, loss, labels, budgets)


@dataclass(frozen=True)
class ImpliedBias:
    """What the law implies a rule makes of this grid: its optima on the law's noise-free losses,
    and the bias of the power law through them (module docstring)."""

    rule: str
    n_star: np.ndarray
    intercept_bias: float | None
    exponent_bias: float | None


@dataclass(frozen=True)
class GridDiagnostics:
    """Each budget's width and centring against the reference law's optimum, the centre's drift,
    each rule's implied bias, and the warnings (module docstring)."""

    budgets: np.ndarray
    width: np.ndarray
    centring: np.ndarray
    n_law: np.ndarray
    drift: float | None
    implied: Mapping[str, ImpliedBias]
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"budgets": [{"C": float(c), "width_decades": float(w), "centring_decades": float(m),
                             "n_star_law": float(n)} for c, w, m, n in zip(self.budgets, self.width, self.centring,
                                                                           self.n_law)],
                "drift_decades_per_decade": self.drift,
                "implied": {r: {"intercept_bias": b.intercept_bias, "exponent_bias": b.exponent_bias}
                            for r, b in self.implied.items()},
                "warnings": list(self.warnings)}


def implied_bias(rule: str, data: Profiles, reference: FitResult, accepted: np.ndarray) -> ImpliedBias:
    """The ``rule`` run on the reference law's noise-free losses at ``data``'s sizes; its bias over
    the budgets ``accepted`` (by the rule on the data) that it accepts there too."""
    law, params = reference.law, reference.params
    clean = data.with_loss(np.asarray(float64(law.evaluate)(params, np.exp(data.log_n), np.exp(data.log_d))))
    n_star = rule_optima(rule, clean, reference=reference)[0][0]
    both = accepted & np.isfinite(n_star)
    truth = law_optima(law, params, data.budgets)
    pivot = pivot_of(data.budgets)
    a_rule, k_rule = power_law(data.budgets[both], n_star[both], pivot)
    a_law, k_law = power_law(data.budgets[both], truth[both], pivot)
    if a_rule is None:
        return ImpliedBias(rule, n_star, None, None)
    return ImpliedBias(rule, n_star, float(np.exp(k_rule - k_law) - 1), a_rule - a_law)


def centring_drift(budgets: np.ndarray, centring: np.ndarray) -> float | None:
    """The least-squares slope of the centring (decades) on log10 C (None with fewer than two)."""
    ok = np.isfinite(centring)
    if ok.sum() < 2:
        return None
    return float(np.polyfit(np.log10(budgets[ok]), centring[ok], 1)[0])


def diagnose(data: Profiles, reference: FitResult, fits: Mapping[str, RuleFit]) -> GridDiagnostics:
    """The grid diagnostics of ``data`` against the ``reference`` fit, for each rule's ``fits``."""
    g = len(data.budgets)
    lo = np.array([data.log_n[data.labels == j].min() for j in range(g)]) / np.log(10)
    hi = np.array([data.log_n[data.labels == j].max() for j in range(g)]) / np.log(10)
    n_law = law_optima(reference.law, reference.params, data.budgets)
    centring = (lo + hi) / 2 - np.log10(n_law)
    accepted = np.any([f.accepted for f in fits.values()], axis=0) if fits else np.ones(g, bool)
    drift = centring_drift(data.budgets[accepted], centring[accepted])
    implied = {rule: implied_bias(rule, data, reference, fit.accepted) for rule, fit in fits.items()}
    warnings = [*(_bias_warnings(fits[r], implied[r]) for r in fits)]
    flat = [w for ws in warnings for w in ws]
    if drift is not None and abs(drift) > DRIFT:
        flat.append(f"drifting centre: the grids' centres move {drift:+.3f} decades per decade of compute against "
                    f"the law's optimum (> {DRIFT}); a drift biases the exponent itself, not only the intercept")
    return GridDiagnostics(data.budgets, hi - lo, centring, n_law, drift, implied, tuple(flat))


def _half_width(pair: tuple[float, float] | None) -> float | None:
    return None if pair is None else (pair[1] - pair[0]) / 2


def _bias_warnings(fit: RuleFit, bias: ImpliedBias) -> list[str]:
    """The intercept- and exponent-bias warnings of one rule (module docstring)."""
    out = []
    half = _half_width(fit.log_n_pivot_interval)
    if bias.intercept_bias is not None and half is not None and abs(np.log1p(bias.intercept_bias)) > half:
        out.append(f"intercept bias: on these grids the law implies the {fit.rule} rule's N* are "
                   f"{bias.intercept_bias:+.2%} off, beyond its 95% interval's half-width (x{np.exp(half):.4f})")
    half = _half_width(fit.a_interval)
    if bias.exponent_bias is not None and half is not None and abs(bias.exponent_bias) > half:
        out.append(f"exponent bias: on these grids the law implies the {fit.rule} rule's a is "
                   f"{bias.exponent_bias:+.4f} off, beyond its 95% interval's half-width ({half:.4f})")
    return out


def known_law(law: Law, params: Any) -> FitResult:
    """A law known exactly, as the reference of the diagnostics (synthetic grids): a
    :class:`~jaxscale.fitting.approach3.FitResult` of no runs at ``params``."""
    return FitResult(law=law, params=params, vector=np.asarray(law.to_vector(params)), objective=0.0, runs=None,
                     n_starts=0, n_minimised=0, n_converged=0, seconds=0.0, method="known")


def open_athena_bias(k: float, *, sizes: int = OPEN_ATHENA_SIZES, rule: str = "parabola",
                     params: Any = OPEN_ATHENA_SURFACE) -> dict[str, float]:
    """The ``rule``'s bias on Open Athena's centred grids (sizes within a factor ``k`` of N*,
    budgets :data:`OPEN_ATHENA_BUDGETS`) of the Chinchilla surface ``params``, through the law:
    ``d_intercept_bias``, k_D(rule) / k_D - 1 (their D* error, constant across budgets), and
    ``b0_relative_error``, the relative error of b0 in log10 D* = b0 + b log10 C (their table)."""
    law = chinchilla.LAW
    data = synthetic_profiles(law, params, OPEN_ATHENA_BUDGETS, k=k, sizes=sizes)
    bias = implied_bias(rule, data, known_law(law, params), np.ones(len(data.budgets), bool))
    n_law = law_optima(law, params, data.budgets)
    b, b0 = np.polyfit(np.log10(data.budgets), np.log10(data.budgets / (6 * n_law)), 1)
    d_bias = 1 / (1 + bias.intercept_bias) - 1
    return {"d_intercept_bias": d_bias, "b0_relative_error": float(np.log10(1 + d_bias) / b0),
            "exponent_bias": bias.exponent_bias, "b": float(b), "b0": float(b0)}
