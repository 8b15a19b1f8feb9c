"""NUTS refit of Epoch AI's 240 Chinchilla runs: jaxscale's sampler against a textbook NumPyro
setup of the same posterior, in the same process, on the same work.

Work: 4 chains x 1000 warmup + 1000 draws (``--chains``, ``--warmup``, ``--samples``) of the
Chinchilla law with the Student-t likelihood and the priors of
:class:`jaxscale.inference.law_model.ChinchillaPriors`, on the runs with the 5 highest losses
dropped, started from the Approach-3 optimum (fitted once, outside the timings).

- jaxscale: :func:`jaxscale.inference.sample.run_nuts`, centred intercepts, dense mass matrix,
  chains in parallel, one CPU device each (this script asks XLA for 4 host devices before JAX
  starts, unless ``XLA_FLAGS`` is already set), with JAX's persistent compilation cache on
  (:mod:`jaxscale.support.compilation_cache`; ``--cache-dir``, or ``--no-cache``): the first run fills
  the cache, later runs load the compiled programs instead of compiling them.
- anchor: the same model written the textbook way (log A and log B sampled directly),
  NumPyro's default diagonal mass matrix and ``chain_method="sequential"`` (what
  ``"parallel"`` falls back to on one CPU device).

Wall times include compilation (or loading it from the cache: the header says how many entries
the cache held before the run); process CPU time is printed beside them (on a shared machine
it tells more than the wall time). ESS/s is the bulk effective sample size (ArviZ, rank-normalised)
per second of that wall time. ``--no-anchor`` runs jaxscale only.

    python benchmarks/bench_bayes.py [--chains 4] [--warmup 1000] [--samples 1000] [--no-anchor] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from functools import partial
from pathlib import Path

# One CPU device per chain, so that the chains run in parallel: set before JAX starts.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import arviz as az  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from numpyro.infer import MCMC, NUTS, init_to_value  # noqa: E402

from jaxscale.core.numerics import float64  # noqa: E402
from jaxscale.inference import law_model, refit
from jaxscale.inference.sample import NutsConfig, chain_method, run_nuts  # noqa: E402
from jaxscale.laws import chinchilla  # noqa: E402
from jaxscale.reconciliation import per_draw as derived  # noqa: E402
from jaxscale.tables.table import drop_highest_loss, read_runs_table  # noqa: E402
from jaxscale.support import compilation_cache  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "chinchilla_svg_extracted_data.csv"
NAMES = ("alpha", "beta", "log_A", "log_B", "log_E", "sigma")


def textbook_model(n, d, loss=None, priors: chinchilla.ChinchillaPriors = chinchilla.ChinchillaPriors()) -> None:
    """The anchor: the same prior and likelihood with log A, log B sampled directly."""
    alpha = numpyro.sample("alpha", dist.TruncatedNormal(*priors.alpha, low=0.0))
    beta = numpyro.sample("beta", dist.TruncatedNormal(*priors.beta, low=0.0))
    log_a = numpyro.sample("log_A", dist.Normal(*priors.log_A))
    log_b = numpyro.sample("log_B", dist.Normal(*priors.log_B))
    log_e = numpyro.sample("log_E", dist.Normal(*priors.log_E))
    sigma = numpyro.sample("sigma", dist.HalfNormal(priors.sigma))
    p = chinchilla.LAW.from_vector(jnp.stack([log_a, log_b, log_e, alpha, beta]))
    mu = chinchilla.log_loss(p, jnp.log(n), jnp.log(d))
    numpyro.sample("log_loss", dist.StudentT(priors.df, mu, sigma), obs=jnp.log(loss))


def _report(label: str, mcmc: MCMC, seconds: float, cpu_seconds: float) -> dict:
    idata = az.from_numpyro(mcmc, log_likelihood=False)
    ess = az.ess(idata, var_names=list(NAMES), method="bulk")
    rhat = az.rhat(idata, var_names=list(NAMES))
    divergences = int(idata.sample_stats["diverging"].values.sum())
    post = idata.posterior
    row = {
        "seconds": seconds, "cpu_seconds": cpu_seconds, "divergences": divergences,
        "ess_bulk": {k: float(ess[k]) for k in NAMES},
        "ess_per_second": {k: float(ess[k]) / seconds for k in NAMES},
        "r_hat": {k: float(rhat[k]) for k in NAMES},
        "mean": {k: float(post[k].mean()) for k in NAMES},
    }
    print(f"\n{label}: {seconds:.1f} s wall (compilation included; {cpu_seconds:.1f} s process CPU), "
          f"{divergences} divergences")
    print(f"  {'param':>6} {'mean':>9} {'R-hat':>7} {'ESS bulk':>9} {'ESS/s':>8}")
    for k in NAMES:
        print(f"  {k:>6} {row['mean'][k]:9.4f} {row['r_hat'][k]:7.3f} {row['ess_bulk'][k]:9.0f} "
              f"{row['ess_per_second'][k]:8.1f}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-anchor", action="store_true", help="skip the textbook NumPyro anchor")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument("--cache-dir", default=None, help="persistent compilation cache (default: jaxscale's)")
    parser.add_argument("--no-cache", action="store_true", help="compile everything in this process")
    args = parser.parse_args()
    if not DATA.exists():
        raise SystemExit(f"shared data not found at {DATA}")
    results = run(args)
    if args.json:
        print(json.dumps(results, indent=2))


@float64
def run(args: argparse.Namespace) -> dict:
    cache = None if args.no_cache else compilation_cache.enable_compilation_cache(
        None if args.cache_dir is None else {"JAXSCALE_CACHE_DIR": str(args.cache_dir)})
    entries = len(list(Path(cache).glob("*"))) if cache and Path(cache).is_dir() else 0
    print(f"jax {jax.__version__}, numpyro {numpyro.__version__}, {os.cpu_count()} CPU cores, "
          f"{jax.local_device_count()} devices; load average {os.getloadavg()[0]:.1f}; persistent "
          f"compilation cache: {cache or 'off'}" + (f" ({entries} entries before this run)" if cache else ""))
    runs = drop_highest_loss(read_runs_table(DATA), 5)
    law = chinchilla.LAW
    start, sigma = refit.approach3_start(law, runs)
    print(f"{len(runs)} runs; {args.chains} chains x ({args.warmup} warmup + {args.samples} draws); "
          f"init = Approach-3 optimum {dict(start._asdict())}")

    config = NutsConfig(chains=args.chains, warmup=args.warmup, samples=args.samples, seed=args.seed,
                        progress_bar=False)
    t0, c0 = time.perf_counter(), time.process_time()
    mcmc = run_nuts(partial(law_model.law_model, law), (runs.n, runs.d), runs.loss,
                    init=law_model.sites(law, start, (runs.n, runs.d), sigma), config=config)
    jax.block_until_ready(mcmc.get_samples())
    results = {"jaxscale": _report(f"jaxscale (centred, dense mass, {chain_method(config)} chains)", mcmc,
                                   time.perf_counter() - t0, time.process_time() - c0)}
    results["jaxscale"] |= {"chain_method": chain_method(config), "cache_entries_before": entries,
                            "load_average": os.getloadavg()[0]}

    draws = law_model.params_of(law, {k: np.asarray(v) for k, v in mcmc.get_samples().items()})
    t0 = time.perf_counter()
    exponents = derived.reconciled_exponents(draws)
    seconds = time.perf_counter() - t0
    print(f"  reconciled exponent of all {len(draws.alpha)} draws (Step-4 simulation, jit+vmap): "
          f"{seconds:.1f} s, median {np.median(exponents.nonembedding):.4f}")
    results["jaxscale"]["reconcile_seconds"] = seconds

    if not args.no_anchor:
        init = {"alpha": start.alpha, "beta": start.beta, "log_A": np.log(start.A),
                "log_B": np.log(start.B), "log_E": np.log(start.E), "sigma": sigma}
        t0, c0 = time.perf_counter(), time.process_time()
        anchor = MCMC(NUTS(textbook_model, init_strategy=init_to_value(values=init)),
                      num_warmup=args.warmup, num_samples=args.samples, num_chains=args.chains,
                      chain_method="sequential", progress_bar=False)
        anchor.run(jax.random.PRNGKey(args.seed), runs.n, runs.d, runs.loss)
        jax.block_until_ready(anchor.get_samples())
        results["anchor"] = _report("anchor (textbook NumPyro: log A sampled, diagonal mass, sequential chains)",
                                    anchor, time.perf_counter() - t0, time.process_time() - c0)
        ratio = {k: results["jaxscale"]["ess_per_second"][k] / results["anchor"]["ess_per_second"][k]
                 for k in NAMES}
        print("\nESS/s ratio jaxscale / anchor: " + ", ".join(f"{k} {v:.1f}x" for k, v in ratio.items()))
        print(f"wall-time ratio anchor / jaxscale: {results['anchor']['seconds'] / results['jaxscale']['seconds']:.2f}x")
        results["ess_per_second_ratio"] = ratio
    return results


if __name__ == "__main__":
    main()
