"""Fitting scaling laws to runs tables: Chinchilla's Approaches 1-3, the bootstrap, and more.

- :mod:`~jaxscale.fit.forms`: laws written for fitting (log loss of two log inputs and a
  parameter vector) — Chinchilla, tied exponents, Kaplan Eq. 1.5 and Eq. 1.6; add your own.
- :mod:`~jaxscale.fit.objective`: the Huber objective (a sum) and its likelihood form.
- :mod:`~jaxscale.fit.lbfgs`: batched L-BFGS, thousands of fits in one compiled call.
- :mod:`~jaxscale.fit.approach3`: multistart Huber fit (Epoch AI's 4500-point grid).
- :mod:`~jaxscale.fit.bootstrap`: all resamples refitted at once, SEs and intervals.
- :mod:`~jaxscale.fit.likelihood`: scale-sigma likelihood fit and likelihood-ratio test.
- :mod:`~jaxscale.fit.approach1`, :mod:`~jaxscale.fit.approach2`: frontier and isoFLOP fits of
  N*(C), D*(C) on a runs table, on either parameter basis, power laws and percentile intervals
  by :mod:`~jaxscale.fit.allocation_laws`; :mod:`~jaxscale.fit.allocation`: N*(C), D*(C), D/N
  from a fit, with bands.
- :mod:`~jaxscale.fit.holdout`: fit small runs, measure the error on the large ones.
- :mod:`~jaxscale.power_law`: least-squares power laws.

Read runs with :func:`jaxscale.runs.load_runs`.
"""
