"""Fitting scaling laws to runs tables: Chinchilla's Approaches 1-3, the bootstrap, and more
(behind :func:`jaxscale.fit`).

Every fitter takes a :class:`jaxscale.tables.table.RunsTable` and any :class:`jaxscale.laws.law.Law`
(by object or registry name), and returns the law's own parameter NamedTuple.

- :mod:`~jaxscale.fitting.objective`: the Huber objective (a sum) and its likelihood form.
- :mod:`~jaxscale.fitting.centring`: the fits' centred coordinates, and the one centred solve
  that the multistart fit and the bootstrap share.
- :mod:`~jaxscale.fitting.approach3`: multistart Huber fit (Epoch AI's 4500-point grid), on the
  batched L-BFGS of :mod:`jaxscale.core.lbfgs`.
- :mod:`~jaxscale.fitting.bootstrap`: all resamples refitted at once, SEs and intervals; the
  refits as :class:`~jaxscale.laws.draws.Draws`.
- :mod:`~jaxscale.fitting.likelihood`: scale-sigma likelihood fit and likelihood-ratio test.
- :mod:`~jaxscale.fitting.approach1`, :mod:`~jaxscale.fitting.approach2`: the compute-efficient
  frontier of training curves and of isoFLOP profiles on either parameter basis, and the power
  laws N*(C), D*(C) fitted to it with percentile intervals (:mod:`~jaxscale.fitting.frontier_laws`).
- :mod:`~jaxscale.fitting.holdout`: fit small runs, measure the error on the large ones.
- :mod:`~jaxscale.fitting.determinable`: the rule, checked before a fit, of what a set of runs
  can determine.

What a finished fit determines is :mod:`jaxscale.determinacy`; laws of whole training curves are
:mod:`jaxscale.curves`; hyperparameter optima :mod:`jaxscale.hyperparameters`.

A fitted law's own compute-optimal N*(C), D*(C), with bands over draws, is in
:mod:`jaxscale.optimum.allocation`; least-squares power laws in :mod:`jaxscale.core.power_law`.
Read runs with :func:`jaxscale.load_runs`.
"""
