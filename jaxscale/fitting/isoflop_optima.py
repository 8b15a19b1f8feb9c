"""Each isoFLOP budget's optimum by a named rule, the budgets refused at their grid's edge, and
the exponent of N*(C) = k_N C^a through the optima with its interval.

A budget is the runs of one training compute C (:func:`jaxscale.fitting.approach2.isoflop_groups`,
or a label per run). Its points are (x_i, L_i), x = ln N. Three rules find its optimum x*; each is
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
budgets' optima (b = 1 - a for D* = C / (6 N*)).

**Intervals** (95% percentile over :data:`RESAMPLES` resamples, seed 0 unless given), two kinds:

- ``resample``: the points of each budget drawn again with replacement, as many as it has
  (:func:`jaxscale.fitting.bootstrap.within_group_counts`; Approach 2's bootstrap);
- ``seed-noise``: Porian et al.'s bootstrap, Gaussian noise of standard deviation ``sigma``
  (default :data:`SEED_NOISE`, the middle of their 0.002-0.01) added to every loss, the points kept.

Each resample runs the rule on every budget again; a budget refused in a resample drops out of
it, and a resample with fewer than two accepted budgets has no exponent (the interval is taken
over those that have one, and the share without one is reported).
"""

#: Distinct sizes a budget needs for any rule.
MIN_SIZES = 3
#: Resamples of an interval.
RESAMPLES = 200
#: Porian et al.'s seed noise, the standard deviation added to each loss.
SEED_NOISE = 0.005
