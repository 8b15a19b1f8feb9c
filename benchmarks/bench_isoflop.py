"""Variable projection on the isoFLOP tables: a scipy anchor, jaxscale's VPNLS and Approach 3.

The tables: the rows of each ``source`` of ``isoflops_public.csv`` (``epochai_chinchilla``,
``ml_scalefit``, ``misfitting``), N = ``params``, D = ``tokens``, nothing dropped. Three fits of
the Chinchilla law to each, in one process:

1. **anchor**: variable projection in scipy, written for this benchmark: the grid of
   :data:`jaxscale.fitting.vpnls.GRID`, at each point ``scipy.optimize.nnls`` of L on
   (N^-alpha, D^-beta, 1) with rows weighted by 1/L (a Python loop), the point of least weighted
   residual sum of squares refined in (alpha, beta) by L-BFGS-B (``scipy.optimize.minimize``,
   finite differences) on that projected sum. Its own objective is that sum; the Huber objective
   of jaxscale at its parameters is printed beside it.
2. **vpnls**: :func:`jaxscale.fitting.vpnls.fit_vpnls`.
3. **approach3**: :func:`jaxscale.fitting.approach3.fit_approach3` (Epoch's 4500-start grid).

**Cold** is each fit's first call in the process (compilation included for jaxscale; the anchor's
first call); **warm** the median of ``--repeats`` further calls, alternating the three so that load
drifts hit all alike. Printed: both times, the warm ratio anchor / vpnls (the goal: >= 5), each
fit's Huber objective and parameters, and the load average.

    python benchmarks/bench_isoflop.py [--repeats 5] [--json]
"""
