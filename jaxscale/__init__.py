"""jaxscale: a differentiable scaling-law engine in JAX.

Subpackages
-----------
- :mod:`jaxscale.laws`       Kaplan, Chinchilla and Pearce & Song laws as pure JAX functions.
- :mod:`jaxscale.optimum.solver`    generic compute-optimal solver and implicit-diff local exponents.
- :mod:`jaxscale.reconciliation.simulate`   synthetic training curves and the compute-efficient frontier.
- :mod:`jaxscale.runs.table`       the runs table: the one door data comes in through.
- :mod:`jaxscale.fitting`        Chinchilla Approaches 1-3, bootstrap, Kaplan-form fits.
- :mod:`jaxscale.inference`  NumPyro posteriors over law parameters and derived quantities.
- :mod:`jaxscale.models`, :mod:`jaxscale.train`, :mod:`jaxscale.text`  models that generate runs.

Numerics: laws, solvers, fits and inference run in float64 (see :mod:`jaxscale.core.numerics`);
training runs in float32/bfloat16 with explicit dtypes, whatever the global x64 flag says.
"""

__version__ = "0.1.0"
