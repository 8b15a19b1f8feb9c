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
intercept, k_N(implied) / k_N(law) - 1, and of the exponent, a(implied) - a(law). On a centred,
symmetric grid this is Open Athena's closed-form vertex shift (their 15 log-spaced sizes within
a factor k of N*: ``open_athena_bias``), computed here through the law numerically.

**Warnings** (declared before measuring; :class:`GridWarning`):

- ``intercept bias``: the implied intercept bias, in ln k_N, exceeds the half-width of the
  rule's 95% interval of ln k_N;
- ``exponent bias``: the implied exponent bias exceeds the half-width of the 95% interval of a;
- ``drifting centre``: the centring's least-squares slope on log10 C, over the accepted budgets,
  exceeds :data:`DRIFT` decades per decade of compute in absolute value: a centre that drifts
  with the budget biases the exponent itself, not only the intercept.
"""

#: A centre drifting by more than this many decades per decade of compute is flagged.
DRIFT = 0.05
#: Open Athena's grid: sizes log-spaced within a factor k of N* at each budget.
OPEN_ATHENA_SIZES = 15
