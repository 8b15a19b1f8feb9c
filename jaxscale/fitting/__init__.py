"""Fitting scaling laws to runs tables: Chinchilla's Approaches 1-3, the bootstrap, and more.

Every fitter takes a :class:`jaxscale.runs.table.RunsTable` and any :class:`jaxscale.laws.law.Law`
(by object or registry name), and returns the law's own parameter NamedTuple.

- :mod:`~jaxscale.fitting.objective`: the Huber objective (a sum) and its likelihood form.
- :mod:`~jaxscale.core.lbfgs`: batched L-BFGS, thousands of fits in one compiled call.
- :mod:`~jaxscale.fitting.approach3`: multistart Huber fit (Epoch AI's 4500-point grid).
- :mod:`~jaxscale.fitting.bootstrap`: all resamples refitted at once, SEs and intervals.
- :mod:`~jaxscale.fitting.likelihood`: scale-sigma likelihood fit and likelihood-ratio test.
- :mod:`~jaxscale.fitting.approach1`, :mod:`~jaxscale.fitting.approach2`: frontier and isoFLOP fits of
  N*(C), D*(C) on a runs table, on either parameter basis, power laws and percentile intervals
  by :mod:`~jaxscale.fitting.allocation_laws`.
- :mod:`~jaxscale.fitting.holdout`: fit small runs, measure the error on the large ones.

N*(C), D*(C) of a fitted law, with bands over draws, are in :mod:`jaxscale.optimum.allocation`;
least-squares power laws in :mod:`jaxscale.core.power_law`. Read runs with
:func:`jaxscale.runs.table.load_runs` (or :func:`jaxscale.runs.table.from_arrays`).
"""
