"""Inference for the models of :mod:`jaxscale.inference.law_model`: NUTS and a Laplace approximation.

Both are generic over a NumPyro model and its arguments; both start from given values of the
model's sample sites (for the Chinchilla law, the Approach-3 optimum: see
:mod:`jaxscale.inference.refit`) and are reproducible from an integer seed.

- :func:`run_nuts`: the No-U-Turn sampler (Hoffman & Gelman 2014) with a dense mass matrix,
  each chain started from the initial values plus a small jitter in the unconstrained space so
  that R-hat can detect chains that have not mixed. Chains run in parallel, one per device, when
  there are enough devices (on a CPU, set ``XLA_FLAGS=--xla_force_host_platform_device_count=4``
  before JAX starts; ``benchmarks/bench_bayes.py`` does), else one after another. Not
  vectorised: under ``vmap`` every chain waits at each draw for the one building the deepest
  tree. On Epoch's 240 runs (4 chains x 2000 iterations, 2-core CPU, load 5-6, programs
  already compiled) the sampling took 1.7 s of CPU in parallel, 3.0 s sequentially and 4.4 s
  vectorised, for the same effective sample sizes.
- :func:`laplace_draws`: the fast path for interactive use. The posterior mode is found by
  L-BFGS from the same initial values and the posterior is approximated by the Gaussian with the
  inverse Hessian of the log density there (in the unconstrained space): what NumPyro's
  ``AutoLaplaceApproximation`` computes, written as one jitted function, which compiles several
  times faster than going through SVI. Exact only for Gaussian posteriors.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from numpyro.infer import MCMC, NUTS, init_to_value
from numpyro.infer.util import constrain_fn, initialize_model, unconstrain_fn

from jaxscale.core.lbfgs import Options, minimize
from jaxscale.core.numerics import float64, float64_on_every_thread
from jaxscale.support.progress import interactive

Model = Callable[..., None]

#: L-BFGS tolerances of the Laplace mode search (float64; the potential is O(1e3)).
LAPLACE_OPTIONS = Options(max_iter=2000, gtol=1e-9, ftol=1e-14)


CHAIN_METHODS = ("auto", "parallel", "sequential", "vectorized")
#: Draws in NumPyro's first slow window of mass-matrix adaptation (its ``build_adaptation_schedule``
#: for 150 or more warmup steps): a dense covariance of this many coordinates or more estimated
#: from them is singular.
FIRST_WINDOW = 25


@dataclass(frozen=True)
class NutsConfig:
    """Settings of :func:`run_nuts`.

    ``init_jitter`` is the SD of the Gaussian jitter added to the initial values (unconstrained
    space) independently for each chain; ``target_accept`` is NUTS' target acceptance rate
    during step-size adaptation (raise it towards 0.95 if divergences appear); ``max_tree_depth``
    bounds each draw's leapfrog steps at 2^depth - 1 (NumPyro's 10 by default), a bound on the
    cost of a posterior whose long ridge would otherwise build the deepest trees.

    ``chain_method`` is NumPyro's (``"parallel"``, ``"sequential"``, ``"vectorized"``) or
    ``"auto"``: parallel when there is a device per chain, else sequential (module docstring).

    ``progress_bar`` shows NumPyro's bars where they redraw in place (a terminal or a notebook:
    :func:`jaxscale.support.progress.interactive`); never in a log, where their carriage returns
    and escape codes would become lines of control characters.

    ``regularize_mass`` is off by default: NumPyro's regulariser shrinks the estimated
    covariance towards 1e-3 x identity, an absolute amount. Scaling-law posteriors have
    conditional SDs of ~1e-3 or less in the unconstrained space (the exponents are pinned to
    ~0.01 and tightly coupled to the intercepts), so the shrinkage swamps them: on the
    Chinchilla runs it cuts the adapted step size from ~0.55 to ~0.13 and quadruples the
    leapfrog steps per draw, for fewer effective draws. It is on, whatever the setting, for a
    model of :data:`FIRST_WINDOW` or more unconstrained coordinates with a dense mass matrix: the
    first window of the adaptation estimates the covariance from that many draws, which is then
    singular (the joint law of learning rate and batch size, 30-odd coordinates: one chain, 500
    warmup, 100 of 100 transitions divergent unregularised, 1 of 100 regularised).
    """

    chains: int = 4
    warmup: int = 1000
    samples: int = 1000
    seed: int = 0
    target_accept: float = 0.8
    dense_mass: bool = True
    regularize_mass: bool = False
    chain_method: str = "auto"
    init_jitter: float = 0.1
    progress_bar: bool = True
    max_tree_depth: int = 10

    def __post_init__(self) -> None:
        for name in ("chains", "samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.warmup < 0:
            raise ValueError(f"warmup must be >= 0, got {self.warmup}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"target_accept must be in (0, 1), got {self.target_accept}")
        if self.chain_method not in CHAIN_METHODS:
            raise ValueError(f"chain_method must be one of {CHAIN_METHODS}, got {self.chain_method!r}")
        if self.max_tree_depth < 1:
            raise ValueError(f"max_tree_depth must be >= 1, got {self.max_tree_depth}")
        if self.init_jitter < 0:
            raise ValueError(f"init_jitter must be >= 0, got {self.init_jitter}")


def chain_method(config: NutsConfig) -> str:
    """The NumPyro chain method ``config`` asks for, ``"auto"`` resolved: ``"parallel"`` when
    JAX has a device per chain, else ``"sequential"``."""
    if config.chain_method != "auto":
        return config.chain_method
    return "parallel" if config.chains > 1 and jax.local_device_count() >= config.chains else "sequential"


def _chain_inits(model: Model, args: tuple, kwargs: dict, init: Mapping[str, Any],
                 chains: int, jitter: float, key: jax.Array) -> dict[str, jnp.ndarray]:
    """Initial values in the unconstrained space, one jittered copy per chain."""
    z0 = unconstrain_fn(model, args, kwargs, {k: jnp.asarray(v) for k, v in init.items()})
    keys = dict(zip(sorted(z0), jax.random.split(key, len(z0))))
    return {
        name: z + jitter * jax.random.normal(keys[name], (chains, *jnp.shape(z)))
        for name, z in z0.items()
    }


@float64
def run_nuts(model: Model, *args: Any, init: Mapping[str, Any], config: NutsConfig = NutsConfig(),
             **kwargs: Any) -> MCMC:
    """Sample ``model(*args, **kwargs)`` with NUTS from ``init`` (values of every sample site).

    Returns the NumPyro ``MCMC`` object after the run (draws grouped by chain via
    ``get_samples(group_by_chain=True)``; ``energy`` and ``diverging`` are collected for the
    diagnostics). The same ``config.seed`` gives identical draws."""
    init_key, run_key = jax.random.split(jax.random.PRNGKey(config.seed))
    z0 = _chain_inits(model, args, kwargs, init, config.chains, config.init_jitter, init_key)
    coordinates = sum(int(np.size(v)) // config.chains for v in z0.values())
    regularize = config.regularize_mass or (config.dense_mass and coordinates >= FIRST_WINDOW)
    kernel = NUTS(model, dense_mass=config.dense_mass, target_accept_prob=config.target_accept,
                  regularize_mass_matrix=regularize, max_tree_depth=config.max_tree_depth,
                  init_strategy=init_to_value(values=dict(init)))
    # NumPyro's bars redraw with carriage returns and escape codes: only where they redraw in place
    bar = config.progress_bar and interactive()
    mcmc = MCMC(kernel, num_warmup=config.warmup, num_samples=config.samples,
                num_chains=config.chains, chain_method=chain_method(config), progress_bar=bar)
    if config.chains == 1:
        z0 = {k: v[0] for k, v in z0.items()}
    with float64_on_every_thread() if bar else contextlib.nullcontext():
        mcmc.run(run_key, *args, init_params=z0, extra_fields=("energy", "num_steps"), **kwargs)
    return mcmc


def _potential(model: Model, args: tuple, kwargs: dict, init: Mapping[str, Any], seed: int):
    """The model's potential (negative log density, Jacobians included) as a function of one
    flat unconstrained vector, that vector at ``init``, and the model's initialisation info."""
    info = initialize_model(jax.random.PRNGKey(seed), model, model_args=args, model_kwargs=kwargs,
                            init_strategy=init_to_value(values=dict(init)))
    z0, unravel = ravel_pytree(info.param_info.z)

    def potential(z: jnp.ndarray, data: None = None) -> jnp.ndarray:
        return info.potential_fn(unravel(z))

    return potential, z0, unravel, info


@float64
def posterior_mode(model: Model, *args: Any, init: Mapping[str, Any], **kwargs: Any) -> dict[str, np.ndarray]:
    """Values of the model's sample sites at the mode of its density in the unconstrained
    space, found by L-BFGS from ``init``: a start for NUTS when ``init`` is only roughly right
    (e.g. pieced together from separate fits)."""
    potential, z0, unravel, _ = _potential(model, args, kwargs, init, 0)
    mode = jax.jit(lambda z: minimize(potential, z, None, LAPLACE_OPTIONS).theta)(z0)
    values = constrain_fn(model, args, kwargs, unravel(mode))
    if not all(bool(jnp.all(jnp.isfinite(v))) for v in values.values()):
        raise ValueError("the posterior mode search diverged from its start")
    return {k: np.asarray(v) for k, v in values.items()}


#: (draw, run) values evaluated at once when the Laplace draws pass through the model (which
#: evaluates the law at every run): 2^22, so that memory stays O(draws + runs).
POSTPROCESS_TERMS = 2**22


@float64
def laplace_draws(model: Model, *args: Any, init: Mapping[str, Any], draws: int = 4000,
                  seed: int = 0, **kwargs: Any) -> dict[str, np.ndarray]:
    """Draws from the Laplace approximation of the posterior of ``model(*args, **kwargs)``.

    The mode z* of the log density in the unconstrained space is found by L-BFGS
    (:func:`jaxscale.core.lbfgs.minimize`) from ``init``; the approximation is the Gaussian
    N(z*, H^-1), H the Hessian of the potential (negative log density, Jacobians included) at
    z*, pushed through the constraining transforms. Returns every latent and deterministic site,
    ``draws`` values each."""
    potential, z0, unravel, info = _potential(model, args, kwargs, init, seed)
    rows = max((np.size(x) for x in jax.tree.leaves((args, kwargs))), default=1)
    batch = max(1, min(draws, POSTPROCESS_TERMS // rows))  # the model's sites are evaluated at every run

    @jax.jit
    def approximate(z0: jnp.ndarray, key: jax.Array) -> dict[str, jnp.ndarray]:
        mode = minimize(potential, z0, None, LAPLACE_OPTIONS).theta
        chol = jnp.linalg.cholesky(jnp.linalg.inv(jax.hessian(potential)(mode)))
        z = mode + jax.random.normal(key, (draws, mode.shape[0]), mode.dtype) @ chol.T
        return jax.lax.map(lambda zi: info.postprocess_fn(unravel(zi)), z, batch_size=batch)

    sites = approximate(z0, jax.random.PRNGKey(seed + 1))
    if not all(bool(jnp.all(jnp.isfinite(v))) for v in sites.values()):
        raise ValueError("Laplace approximation failed: the Hessian at the mode is not positive definite")
    return {k: np.asarray(v) for k, v in sites.items()}
