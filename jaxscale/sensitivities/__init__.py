"""Autodiff sensitivity studies (behind :func:`jaxscale.sensitivity`): which parameters, which
runs and which of the reconciliation's own choices drive a conclusion.

- :mod:`~jaxscale.sensitivities.elasticity`: d log q / d log theta of positive quantities by
  forward-mode autodiff (through implicit solves);
- :mod:`~jaxscale.sensitivities.quantities`: the named quantities of a law, N*(C), D*(C), the loss
  of a planned run, a, b and the reconciled exponent;
- :mod:`~jaxscale.sensitivities.delta_method`: Var log q ~= e^T Sigma e from the full covariance
  of bootstrap or posterior draws, beside the spread over the draws;
- :mod:`~jaxscale.sensitivities.influence`: each run's influence on an Approach-3 fit by implicit
  differentiation of its stationarity condition, checked against leave-one-out refits;
- :mod:`~jaxscale.sensitivities.study`: all of it for a fit, posterior draws or a published
  parameter set.

The reconciled exponent's derivatives with respect to the law, the embedding relation and
Kaplan's size window are in :mod:`jaxscale.reconciliation.choice_sensitivity`.
"""
