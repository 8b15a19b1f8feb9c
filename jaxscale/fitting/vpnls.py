"""Variable projection (VPNLS; Golub & Pereyra 1973, as Czech et al. 2026 apply it to the Chinchilla
law): a law whose loss is linear in some coordinates, L = sum_j c_j phi_j(x; theta_nl), c >= 0,
is fitted by solving the linear coordinates exactly at each point of a grid of the nonlinear
ones, then refining every coordinate from the best grid points.

For Chinchilla, L = E + A N^-alpha + B D^-beta: c = (A, B, E), phi = (N^-alpha, D^-beta, 1),
theta_nl = (alpha, beta). A law declares this in :attr:`jaxscale.laws.law.Law.linear`.

1. **Grid.** theta_nl on :data:`GRID` (each exponent from 0.02 to 2.00 in steps of 0.02, 10,000
   points for two). At each, c by non-negative least squares of L on phi with row weights 1/L
   (so the residuals approximate log residuals, ln L - ln Lhat ~ (L - Lhat) / L): the exact NNLS
   solution, the best of the unconstrained solutions on every subset of the columns that are
   non-negative (2^k - 1 subsets; the NNLS optimum is one of them).
2. **Rank.** Every grid point at its c is scored by the fit's own objective, the Huber loss of log
   residuals (:mod:`jaxscale.fitting.objective`).
3. **Refine.** The :data:`REFINE` best are minimised in all coordinates by the L-BFGS of
   Approach 3 (:data:`jaxscale.fitting.approach3.MULTISTART`, centred coordinates); a c_j of 0
   starts at :data:`FLOOR`. The best converged start is the fit.

The result is a :class:`jaxscale.fitting.approach3.FitResult` (method ``vpnls``) at the optimum of
the same objective as Approach 3; the test is that it reaches Approach 3's on Epoch's 240 runs to
1e-8 of the objective.

**Conditioning.** The Hessian of the projected objective (the linear coordinates minimised out)
is the Schur complement of the linear block in the full Hessian; its condition number is reported
beside the full one's (:mod:`jaxscale.determinacy.identifiability`).
"""

#: Each nonlinear coordinate's grid: 0.02 to 2.00 in steps of 0.02.
GRID = (0.02, 2.0, 100)
#: Grid points refined by L-BFGS.
REFINE = 8
#: Where a linear coordinate solved at 0 starts its refinement (its log is the vector's).
FLOOR = 1e-12
