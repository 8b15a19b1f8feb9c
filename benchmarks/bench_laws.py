"""Local exponent g (Pearce & Song Eq. 17) over 10^6 sizes N_\\E: jaxscale's jit-compiled autodiff
against a numpy implementation of the hand-derived closed form, in the same process. Two jaxscale
routes are timed: ``jax.grad`` of the optimum curve Eq. 16 (autodiff replaces the hand derivative),
and the fully generic solver (root solve of the stationarity condition + implicit differentiation,
no closed form at all). Prints the times, the ratios and the max errors.

    python benchmarks/bench_laws.py [--n 1000000] [--repeats 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.laws import chinchilla, reconcile
from jaxscale.optimum import solver as optimal


def numpy_eq17(n: np.ndarray, gamma: float, alpha: float, beta: float) -> np.ndarray:
    """Eq. 17 (δ = 1/3) in plain numpy: the anchor."""
    n23 = n ** (2.0 / 3.0)
    inv_g = 1.0 - (1.0 / beta) * (n23 + gamma / 9.0) / (n23 + gamma / 3.0) + (
        (1.0 + alpha) / beta
    ) * (n23 + gamma / 3.0) / (n23 + gamma)
    return 1.0 / inv_g


def best_of(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    p = chinchilla.EPOCH
    n_np = np.logspace(2, 12, args.n)
    numpy_seconds, g_numpy = best_of(lambda: numpy_eq17(n_np, reconcile.GAMMA_PAPER, p.alpha, p.beta), args.repeats)

    q = reconcile.ReconciledParams(p, reconcile.GAMMA_PAPER)
    routes = {
        "autodiff_eq16": lambda n: reconcile.local_exponent_autodiff(n, q),
        "generic_solver": lambda n: optimal.local_exponent_at_n(reconcile.loss, q, n),
    }
    result = {"n_values": args.n, "numpy_seconds": numpy_seconds, "device": str(jax.devices()[0])}
    with jax.enable_x64(True):
        n_jax = jnp.asarray(n_np)
        for name, route in routes.items():
            compiled = jax.jit(route)
            start = time.perf_counter()
            compiled(n_jax).block_until_ready()
            first = time.perf_counter() - start
            seconds, g = best_of(lambda: compiled(n_jax).block_until_ready(), args.repeats)
            result[name] = {
                "seconds": seconds,
                "first_call_seconds": first,
                "ratio": numpy_seconds / seconds,
                "max_abs_error": float(np.max(np.abs(np.asarray(g) - g_numpy))),
            }
    # Headline (the keys): the autodiff route.
    result.update(jaxscale_seconds=result["autodiff_eq16"]["seconds"], ratio=result["autodiff_eq16"]["ratio"],
                  max_abs_error=result["autodiff_eq16"]["max_abs_error"])
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"local exponent g over {args.n:,} values of N_\\E (Epoch spec, gamma = {reconcile.GAMMA_PAPER:.0f}), best of {args.repeats}")
    print(f"  {'route':<44}{'time':>10}{'ratio':>9}{'max error':>11}   first call")
    print(f"  {'numpy, hand-derived Eq. 17 (anchor)':<44}{numpy_seconds * 1e3:8.1f}ms{1.0:9.2f}{0.0:11.1e}")
    labels = {"autodiff_eq16": "jaxscale, jax.grad of Eq. 16 (jit)",
              "generic_solver": "jaxscale, generic solver + implicit diff (jit)"}
    for name, label in labels.items():
        r = result[name]
        print(f"  {label:<44}{r['seconds'] * 1e3:8.1f}ms{r['ratio']:9.2f}{r['max_abs_error']:11.1e}   {r['first_call_seconds']:.2f} s")
    print("  (ratio = numpy time / jaxscale time; > 1 means jaxscale is faster)")


if __name__ == "__main__":
    main()
