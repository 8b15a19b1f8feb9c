"""The optimal learning rate and batch size, fitted to hyperparameter grids (behind
:func:`jaxscale.hparams`).

- :mod:`~jaxscale.hyperparameters.per_group`: each (N, D) group's optimum by a declared rule, then
  power laws through the optima, with a bootstrap over runs within groups.
- :mod:`~jaxscale.hyperparameters.joint`: one joint law L(N, D, eta, B) fitted to every run, its
  optima by implicit differentiation (:mod:`jaxscale.optimum.hparam_optimum`).

The joint law's posterior is :mod:`jaxscale.inference.joint_hyperparameters`.
"""
