"""Each isoFLOP budget's optimum by a named rule, the budgets refused at their grid's edge, and
the exponent of N*(C) = k_N C^a through the optima with its interval.

A budget is the runs of one training compute C (:func:`jaxscale.fitting.approach2.isoflop_groups`,
or a label per run). Its points are (x_i, L_i), x = ln N; sizes within :data:`SAME_SIZE` in ln N
are one size (the extractions of Chinchilla's Figure 3 give the same model as 4.246096e8 and
4.246099e8: read as two sizes, they made the Akima interpolant overshoot to a loss near 0). Three rules find its optimum x*; each is
a declared choice, fixed before any was measured on the tables it is judged on:

``parabola``
    Hoffmann et al. (2022), Approach 2 (today's :mod:`jaxscale.fitting.approach2`): the least-squares
    parabola L = p0 + p1 x + p2 x^2 through every point, x* = -p1 / (2 p2).
``akima``
    Porian et al. (2024), Section 3: the Akima interpolant of ln L over x through the distinct
    sizes (the mean ln L where a size is sampled more than once); x* is the lowest of the
    interpolant on the sampled range, found among its critical points and the range's ends.
``law``
    A local fit of the law itself: the law's isoFLOP profile with its nonlinear coordinates
    (Chinchilla's alpha, beta) held at the law's fit to the whole table by variable projection
    (:mod:`jaxscale.fitting.vpnls`) and its linear coordinates (E, A, B) refitted to the budget's
    points alone (non-negative least squares on L weighted by 1/L, as the projection's grid
    stage), x* the law's minimum along the budget (:func:`jaxscale.optimum.solver.optimal_log_n`).

**Refusals, never extrapolation.** A budget is refused, by name and with its range of N, when
it has fewer than :data:`MIN_SIZES` distinct sizes (``too few sizes``); when its lowest loss is
at its smallest or largest size (``edge``: its minimum is at the grid's edge, Porian et al. drop
such budgets); when the rule's x* lies outside the sampled range (``outside``); and, for the
parabola, when it opens downward (``opens downward``). A refusal is a :class:`Refusal`, whose
text names the budget, its sizes and why; the exponent is fitted through the accepted budgets
only, and is undefined with fewer than two.

**The power law.** ln N* = ln k_N + a ln C by unweighted least squares through the accepted
budgets' optima (b = 1 - a for D* = C / (6 N*)). Its intercept is reported where the data are,
as ln N*(C_pivot) at the geometric mean C_pivot of all the table's budgets (the same pivot in
every resample): k_N itself is the value at C = 1 FLOP, ~20 decades from any run, where an
error of the exponent dominates whatever it says of the intercept.

**Intervals** (95% percentile over :data:`RESAMPLES` resamples, seed 0 unless given), two kinds:

- ``resample``: the points of each budget drawn again with replacement, as many as it has
  (:func:`jaxscale.fitting.bootstrap.within_group_counts`; Approach 2's bootstrap);
- ``seed-noise``: Porian et al.'s bootstrap, Gaussian noise of standard deviation ``sigma``
  (default :data:`SEED_NOISE`, the middle of their 0.002-0.01) added to every loss, the points kept.

Each resample runs the rule on every budget again; a budget refused in a resample drops out of
it, and a resample with fewer than two accepted budgets has no exponent (the interval is taken
over those that have one, and the share without one is reported).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike
from scipy.interpolate import Akima1DInterpolator

from jaxscale.core.intervals import interval
from jaxscale.core.numerics import float64
from jaxscale.fitting.approach2 import parabola_minimum, isoflop_groups
from jaxscale.fitting.approach3 import FitResult
from jaxscale.fitting.bootstrap import within_group_counts
from jaxscale.fitting.vpnls import nnls_small
from jaxscale.laws.law import Law
from jaxscale.optimum.solver import optimal_log_n
from jaxscale.tables.table import RunsTable

#: The rules, in the order reports show them.
RULES = ("parabola", "akima", "law")
#: The kinds of interval.
INTERVALS = ("resample", "seed-noise")
#: Sizes closer than this in ln N are one size (module docstring).
SAME_SIZE = 1e-4
#: Distinct sizes a budget needs for any rule.
MIN_SIZES = 3
#: Resamples of an interval.
RESAMPLES = 200
#: Porian et al.'s seed noise, the standard deviation added to each loss.
SEED_NOISE = 0.005


class Refusal(NamedTuple):
    """A budget refused by a rule: its compute, the range and count of its sizes, and why."""

    budget: float
    n_min: float
    n_max: float
    sizes: int
    rule: str
    reason: str

    def __str__(self) -> str:
        return (f"budget {self.budget:.3g} FLOP (N {self.n_min:.3g} to {self.n_max:.3g}, {self.sizes} sizes) "
                f"refused by the {self.rule} rule: {self.reason}")


class Profiles(NamedTuple):
    """The isoFLOP points of a table: ln N, ln D and the loss of each row, its budget's index, and
    each budget's compute (the geometric mean of its rows' C)."""

    log_n: np.ndarray
    log_d: np.ndarray
    loss: np.ndarray
    labels: np.ndarray
    budgets: np.ndarray

    def with_loss(self, loss: ArrayLike) -> "Profiles":
        return self._replace(loss=np.asarray(loss, np.float64))


def profiles(table: RunsTable, groups: ArrayLike | None = None, tol_dex: float = 0.05) -> Profiles:
    """The :class:`Profiles` of ``table``: budgets from ``groups`` (a label per row) or
    :func:`~jaxscale.fitting.approach2.isoflop_groups` with ``tol_dex``."""
    c = table.c
    labels = (isoflop_groups(c, tol_dex) if groups is None
              else np.unique(np.asarray(groups), return_inverse=True)[1].ravel())
    budgets = np.exp(np.array([np.mean(np.log(c[labels == g])) for g in range(labels.max() + 1)]))
    log_n = same_sizes(np.log(table.n))
    return Profiles(log_n, np.log(table.c / 6.0) - log_n, np.asarray(table.loss, np.float64), labels, budgets)


def same_sizes(log_n: np.ndarray) -> np.ndarray:
    """``log_n`` with the sizes closer than :data:`SAME_SIZE` to the previous one (in ascending
    order) set to their group's smallest."""
    order = np.argsort(log_n)
    sorted_x = log_n[order]
    starts = np.concatenate([[True], np.diff(sorted_x) >= SAME_SIZE])
    snapped = np.empty_like(log_n)
    snapped[order] = sorted_x[starts][np.cumsum(starts) - 1]
    return snapped


@dataclass(frozen=True)
class RuleFit:
    """One rule on every budget, the power law through the accepted optima and its interval.

    Attributes:
        rule: the rule's name (:data:`RULES`).
        budgets: each budget's compute C.
        n_star: each budget's N*, NaN where refused.
        loss_star: the rule's loss at N*, NaN where refused.
        refusals: the budgets refused, each with its range and reason.
        a: the exponent of N* = k_N C^a (None with fewer than two budgets accepted).
        log_n_pivot: the power law's ln N* at ``pivot`` (None likewise).
        pivot: the geometric mean of the budgets (module docstring).
        a_interval: its 95% percentile interval over the resamples (None without them).
        log_n_pivot_interval: that of ln N*(pivot).
        undefined_share: the share of resamples with no exponent (fewer than two budgets).
        interval: ``"resample"`` or ``"seed-noise"``; resamples: how many; sigma: the seed noise.
    """

    rule: str
    budgets: np.ndarray
    n_star: np.ndarray
    loss_star: np.ndarray
    refusals: tuple[Refusal, ...]
    a: float | None
    log_n_pivot: float | None
    pivot: float
    a_interval: tuple[float, float] | None = None
    log_n_pivot_interval: tuple[float, float] | None = None
    undefined_share: float = 0.0
    interval: str = "resample"
    resamples: int = 0
    sigma: float | None = None

    @property
    def accepted(self) -> np.ndarray:
        return np.isfinite(self.n_star)

    def to_dict(self) -> dict:
        return {"rule": self.rule, "a": self.a, "a_interval": self.a_interval, "pivot": self.pivot,
                "log_n_pivot": self.log_n_pivot, "log_n_pivot_interval": self.log_n_pivot_interval, "undefined_share": self.undefined_share,
                "interval": self.interval, "resamples": self.resamples, "sigma": self.sigma,
                "budgets": [{"C": float(c), "n_star": None if not np.isfinite(n) else float(n),
                             "loss_star": None if not np.isfinite(l) else float(l)}
                            for c, n, l in zip(self.budgets, self.n_star, self.loss_star)],
                "refusals": [str(r) for r in self.refusals]}


def _per_size(x: np.ndarray, loss: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct sizes with weight and the weighted mean ln L at each."""
    used = w > 0
    xs, inverse = np.unique(x[used], return_inverse=True)
    mean = np.bincount(inverse, w[used] * np.log(loss[used])) / np.bincount(inverse, w[used])
    return xs, mean


def data_refusal(xs: np.ndarray, log_loss: np.ndarray) -> str | None:
    """Why a budget of distinct sizes ``xs`` (ascending) and mean log losses is refused by every
    rule, or None: too few sizes, or its lowest loss at an end of its grid."""
    if len(xs) < MIN_SIZES:
        return f"too few sizes ({len(xs)} < {MIN_SIZES})"
    lowest = int(np.argmin(log_loss))
    if lowest in (0, len(xs) - 1):
        return f"edge: its lowest loss is at its {'smallest' if lowest == 0 else 'largest'} size"
    return None


def akima_minimum(xs: np.ndarray, log_loss: np.ndarray) -> tuple[float, float]:
    """(x*, ln L*): the lowest point of the Akima interpolant of ln L over x on [xs[0], xs[-1]],
    among its critical points and the two ends (Porian et al. 2024)."""
    curve = Akima1DInterpolator(xs, log_loss)
    candidates = np.concatenate([curve.derivative().roots(extrapolate=False), xs[[0, -1]]])
    values = curve(candidates)
    best = int(np.nanargmin(values))
    return float(candidates[best]), float(values[best])


@functools.cache
def _batched_parabola():
    return jax.jit(jax.vmap(jax.vmap(parabola_minimum, in_axes=(None, None, 0)), in_axes=(None, 0, 0)))


@functools.cache
def _batched_law(law: Law):
    """x* and L* of the law rule for weights [R, G, rows] and losses [R, rows] (jit-compiled)."""

    def one(nonlinear, log_n, log_d, loss, w, log_c):
        scale = jnp.sqrt(w) / loss
        basis = law.linear.basis(tuple(nonlinear), log_n, log_d)
        c, _ = nnls_small(basis * scale[:, None], loss * scale)
        params = law.joined(tuple(nonlinear), tuple(c))
        x = optimal_log_n(law, params, log_c)
        return x, jnp.exp(law.log_loss(params, x, log_c - jnp.log(6.0) - x))

    per_budget = jax.vmap(one, in_axes=(None, None, None, None, 0, 0))
    return jax.jit(jax.vmap(per_budget, in_axes=(None, None, None, 0, 0, None)))


def _rule_points(rule: str, data: Profiles, loss: np.ndarray, weights: np.ndarray,
                 reference: FitResult | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every budget's x*, L* and the rule's own refusal (``""`` for none) in each resample
    (losses [R, rows], weights [R, G, rows])."""
    r, g = weights.shape[:2]
    reasons = np.full((r, g), "", dtype=object)
    if rule == "parabola":
        x, l, p2 = map(np.asarray, _batched_parabola()(jnp.asarray(data.log_n), jnp.asarray(loss),
                                                        jnp.asarray(weights)))
        reasons[~(p2 > 0)] = "opens downward"
    elif rule == "law":
        if reference is None or reference.law.linear is None:
            raise ValueError("the law rule needs a fit of a law that declares its linear coordinates")
        nonlinear = jnp.asarray([getattr(reference.params, f) for f in reference.law.nonlinear_names])
        x, l = map(np.asarray, _batched_law(reference.law)(nonlinear, jnp.asarray(data.log_n),
                                                            jnp.asarray(data.log_d), jnp.asarray(loss),
                                                            jnp.asarray(weights), jnp.log(jnp.asarray(data.budgets))))
        reasons[~np.isfinite(x)] = "the law has no minimum along it"
    else:
        x, l = np.full((r, g), np.nan), np.full((r, g), np.nan)
        for i in range(r):
            for j in range(g):
                xs, mean = _per_size(data.log_n, loss[i], weights[i, j])
                if data_refusal(xs, mean) is None:
                    x[i, j], log_l = akima_minimum(xs, mean)
                    l[i, j] = np.exp(log_l)
    return x, l, reasons


@float64
def rule_optima(rule: str, data: Profiles, loss: np.ndarray | None = None, weights: np.ndarray | None = None,
                reference: FitResult | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``rule``'s N* and L* at every budget of each resample (losses [R, rows] and row
    weights [R, rows]; default: the table once), NaN where refused, and the reasons ([R, G];
    ``None`` where accepted)."""
    loss = data.loss[None, :] if loss is None else np.atleast_2d(loss)
    weights = np.ones_like(loss) if weights is None else np.atleast_2d(weights)
    onehot = (data.labels[None, :] == np.arange(len(data.budgets))[:, None]).astype(np.float64)
    per_budget = weights[:, None, :] * onehot[None, :, :]
    x, l, reasons = _rule_points(rule, data, loss, per_budget, reference)
    out = np.full(x.shape, None, dtype=object)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            xs, mean = _per_size(data.log_n, loss[i], per_budget[i, j])
            why = data_refusal(xs, mean) or reasons[i, j]
            if not why and not xs[0] < x[i, j] < xs[-1]:
                why = "outside: its minimum lies outside the sizes sampled"
            out[i, j] = why or None
    accepted = np.equal(out, None)
    return np.where(accepted, np.exp(np.where(accepted, x, 0.0)), np.nan), np.where(accepted, l, np.nan), out


def power_law(budgets: np.ndarray, n_star: np.ndarray, pivot: float) -> tuple[float | None, float | None]:
    """(a, ln N*(pivot)) of ln N* = ln k_N + a ln C through the finite optima (None, None with
    fewer than two)."""
    ok = np.isfinite(n_star)
    if ok.sum() < 2:
        return None, None
    a, at_pivot = np.polyfit(np.log(budgets[ok] / pivot), np.log(n_star[ok]), 1)
    return float(a), float(at_pivot)


def pivot_of(budgets: np.ndarray) -> float:
    """The geometric mean of the budgets, where the intercept is reported."""
    return float(np.exp(np.mean(np.log(budgets))))


def _draws(kind: str, data: Profiles, resamples: int, sigma: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Losses and weights [R, rows] of the resamples of an interval of ``kind``."""
    rows = len(data.loss)
    if kind == "resample":
        return np.tile(data.loss, (resamples, 1)), within_group_counts(data.labels, resamples, seed)
    noise = np.random.default_rng(seed).normal(0.0, sigma, size=(resamples, rows))
    return data.loss[None, :] + noise, np.ones((resamples, rows))


def fit_rule(rule: str, data: Profiles, *, reference: FitResult | None = None, interval_kind: str = "resample",
             resamples: int = RESAMPLES, sigma: float = SEED_NOISE, seed: int = 0) -> RuleFit:
    """``rule`` on every budget of ``data``, the power law through the accepted optima, and its
    95% interval over ``resamples`` of ``interval_kind`` (none if 0); ``reference`` is the fit of
    the law the ``law`` rule refits locally (module docstring)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if interval_kind not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, got {interval_kind!r}")
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    n_star, l_star, reasons = (v[0] for v in rule_optima(rule, data, reference=reference))
    refusals = tuple(_refusal(data, j, rule, reasons[j]) for j in range(len(data.budgets)) if reasons[j])
    pivot = pivot_of(data.budgets)
    a, at_pivot = power_law(data.budgets, n_star, pivot)
    fit = RuleFit(rule, data.budgets, n_star, l_star, refusals, a, at_pivot, pivot, interval=interval_kind,
                  sigma=sigma if interval_kind == "seed-noise" else None)
    if not resamples:
        return fit
    loss, weights = _draws(interval_kind, data, resamples, sigma, seed)
    drawn = rule_optima(rule, data, loss, weights, reference)[0]
    laws = np.array([[np.nan if v is None else v for v in power_law(data.budgets, row, pivot)] for row in drawn], float)
    defined = np.isfinite(laws[:, 0])
    a_ci = tuple(map(float, interval(laws[defined, 0]))) if defined.sum() > 1 else None
    k_ci = tuple(map(float, interval(laws[defined, 1]))) if defined.sum() > 1 else None
    return RuleFit(**{**fit.__dict__, "a_interval": a_ci, "log_n_pivot_interval": k_ci,
                      "undefined_share": float(1 - defined.mean()), "resamples": resamples})


def _refusal(data: Profiles, j: int, rule: str, reason: str) -> Refusal:
    n = np.exp(data.log_n[data.labels == j])
    return Refusal(float(data.budgets[j]), float(n.min()), float(n.max()), len(np.unique(n)), rule, reason)
