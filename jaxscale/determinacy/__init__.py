"""What a table of runs determines of a fitted law, measured after the fit (behind the
``identifiability`` section of :func:`jaxscale.fit`).

- :mod:`~jaxscale.determinacy.curvature`: Fisher information and the Laplace covariance of a
  law's parameters, by autodiff through the fit's objective.
- :mod:`~jaxscale.determinacy.identifiability`: how well the runs pin each parameter and each
  decision quantity, which parameters trade off, and which runs would help.

The rule decided *before* a fit (more runs than parameters, distinct values over enough decades)
is :mod:`jaxscale.fitting.determinable`: the fitters refuse tables that break it.
"""
