"""Bayesian refits of scaling laws with NumPyro (behind :func:`jaxscale.bayes`).

- :mod:`~jaxscale.inference.law_model`: the NumPyro model of any :class:`~jaxscale.laws.law.Law`
  (Student-t likelihood on log loss, the law's documented, overridable priors, centred intercepts);
- :mod:`~jaxscale.inference.sample`: NUTS (chains in parallel or in turn), and the Laplace
  approximation as a fast path;
- :mod:`~jaxscale.inference.diagnostics`: R-hat, ESS, divergences, E-BFMI, predictive checks,
  netCDF output;
- :mod:`~jaxscale.inference.refit`: one law's posterior given a runs table, end to end: its
  draws as :class:`~jaxscale.laws.draws.Draws`, its summary, holdout calibration and Pearce &
  Song's reconciled exponent of every draw (computed in :mod:`jaxscale.reconciliation.per_draw`);
- :mod:`~jaxscale.inference.law_ranking`: laws ranked by PSIS-LOO;
- :mod:`~jaxscale.inference.grouped`: one law on several datasets, some coordinates shared, the
  posterior of the differences and PSIS-LOO of sharing.
- :mod:`~jaxscale.inference.curve_posterior`: what the posteriors of laws of whole curves share
  (the AR(1) Student-t likelihood of each run's log residuals, the sampler's settings, the
  posterior-predictive mean and interval);
- :mod:`~jaxscale.inference.multipower_posterior`: the multi-power law's posterior given whole
  curves and its posterior-predictive mean, a candidate of the held-out rule of
  :mod:`jaxscale.curves.held_out_schedules`;
- :mod:`~jaxscale.inference.annealing_posterior`: the same candidate for Tissue et al.'s annealing
  law (its four coordinates under the law's own priors, lambda fixed at 0.999).

The law's closed-form quantities and compute-optimal allocation of every draw come from
:mod:`jaxscale.laws.draws` and :mod:`jaxscale.optimum.allocation`, shared with fits and bootstraps.
"""
