"""Laws of whole training curves: every checkpoint of a run, under its learning-rate schedule
(behind ``jaxscale curve`` and :func:`jaxscale.schedule`).

- :mod:`~jaxscale.curves.lr_annealing_fit`: Tissue et al.'s (2024) annealing law fitted to the
  curves of some schedules, the curves of the others predicted.
- :mod:`~jaxscale.curves.multipower_fit`: the multi-power law of Luo et al. (2025), fitted and
  judged the same way.
- :mod:`~jaxscale.curves.every_checkpoint`: Chinchilla's exponents from every checkpoint against
  Approach 3 on the last ones.
"""
