"""Planning a scaling study: which runs to train next, and how much better one recipe is.

- :mod:`~jaxscale.planning.targets`: what a study decides (N*(C), D*(C), L(N, D), a) as a
  differentiable function of the law's vector;
- :mod:`~jaxscale.planning.selection`: the expected posterior variance of a target per FLOP, from
  the Laplace belief at the current fit (or the priors), and greedy selection under a budget;
- :mod:`~jaxscale.planning.ensemble_belief`: the same variance reduction read off bootstrap refits
  (the belief of the ensemble design);
- :mod:`~jaxscale.planning.pacing`: a run's value per FLOP discounted by the share of the
  study's compute it would hold (the paced design);
- :mod:`~jaxscale.planning.candidates`: grids of candidate runs up to a cost;
- :mod:`~jaxscale.planning.target_intervals`: bootstrap and Laplace intervals of a target;
- :mod:`~jaxscale.planning.refits`: cheap refits of a growing subset of a pool of runs;
- :mod:`~jaxscale.planning.replay`: replaying a study on runs already trained, strategy against
  strategy;
- :mod:`~jaxscale.planning.simulated_runs`: runs tables from a known law with noise;
- :mod:`~jaxscale.planning.multiplier`: the effective compute multiplier between two recipes;
- :mod:`~jaxscale.planning.recipes`: several recipes fitted with shared exponents, their
  multipliers with bootstrap and posterior intervals, and PSIS-LOO of the sharing.
"""
