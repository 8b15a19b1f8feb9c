"""Bayesian refits of scaling laws with NumPyro.

- :mod:`~jaxscale.inference.models`: the Chinchilla and Kaplan L(N, D) laws as plain NumPyro
  models (Student-t likelihood on log loss, documented overridable priors);
- :mod:`~jaxscale.inference.sample`: NUTS (chains in parallel or in turn), and a Laplace fast path;
- :mod:`~jaxscale.inference.diagnostics`: R-hat, ESS, divergences, E-BFMI, predictive checks,
  netCDF output;
- :mod:`~jaxscale.reconciliation.per_draw`: a, b, G, N*(C), D*(C), planned-run loss and Pearce &
  Song's reconciled exponent for every posterior draw (jit + vmap);
- :mod:`~jaxscale.inference.refit`: the pipeline behind ``jaxscale bayes``;
- :mod:`~jaxscale.inference.compare`: laws ranked by PSIS-LOO (``jaxscale bayes --compare``);
- :mod:`~jaxscale.inference.grouped`: one law on several datasets, some coordinates shared, the
  posterior of the differences and PSIS-LOO of sharing (``jaxscale bayes --group-by``).
"""
