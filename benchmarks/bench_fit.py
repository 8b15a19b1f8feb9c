"""Approach 3 on Epoch AI's 240 Chinchilla runs: scipy's serial L-BFGS-B (Epoch's method)
against jaxscale's batched L-BFGS, in the same process, on the same work.

1. Multistart: Epoch's 4500-point initialisation grid, Huber loss (delta 1e-3, sum) on
   log-sum-exp; scipy fits the starts one after another (as Epoch does), jaxscale fits them
   all in one jit-compiled call (its time includes compilation).
2. Bootstrap: R resamples of the runs (the same count vectors for both), each refitted from
   the full-data optimum; scipy serially, jaxscale in one call (compilation included).

scipy gets the exact analytic gradient (a faster anchor than Epoch's finite differences;
``--scipy-finite-diff`` reproduces Epoch's call). On a slow or shared machine, ``--starts K``
and ``--resamples K`` run scipy on an evenly spread subset and extrapolate its per-fit time
to the full count; the output says what was measured and what was extrapolated. scipy's
small-array numpy calls are far more sensitive to other load than the compiled jaxscale
program (on a shared 2-core machine the same scipy fits ran 2-8x slower from one minute to
the next): compare ratios from quiet runs only, and see the load average printed.

    python benchmarks/bench_fit.py [--starts 450] [--resamples 200] [--bootstrap 4000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import jax
import numpy as np
from scipy.optimize import minimize

from jaxscale.fit import lbfgs
from jaxscale.fit.approach3 import MULTISTART, fit_approach3
from jaxscale.fit.bootstrap import WARM_START, bootstrap, resample_counts
from jaxscale.laws.chinchilla import LAW as CHINCHILLA
from jaxscale.runs import drop_highest_loss, load_runs

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "chinchilla_svg_extracted_data.csv"
DELTA = 1e-3


def huber_and_gradient(theta: np.ndarray, log_n: np.ndarray, log_d: np.ndarray, log_y: np.ndarray,
                       weights: np.ndarray) -> tuple[float, np.ndarray]:
    """Epoch's objective sum_i w_i Huber(log L_i - LSE(a - alpha log N, b - beta log D, e))
    and its exact gradient, in numpy (the scipy anchor)."""
    a, b, e, alpha, beta = theta
    terms = np.stack([a - alpha * log_n, b - beta * log_d, np.full_like(log_n, e)])
    top = terms.max(axis=0)
    share = np.exp(terms - top)
    total = share.sum(axis=0)
    r = log_y - (top + np.log(total))
    abs_r = np.abs(r)
    value = np.sum(weights * np.where(abs_r <= DELTA, 0.5 * r * r, DELTA * (abs_r - 0.5 * DELTA)))
    slope = -weights * np.clip(r, -DELTA, DELTA)  # d value / d prediction
    soft = share / total
    grad = np.array([
        np.sum(slope * soft[0]), np.sum(slope * soft[1]), np.sum(slope * soft[2]),
        -np.sum(slope * soft[0] * log_n), -np.sum(slope * soft[1] * log_d),
    ])
    return value, grad


def scipy_fit(theta0: np.ndarray, args: tuple, finite_diff: bool, tight: lbfgs.Options | None):
    """One scipy L-BFGS-B fit: Epoch's call (default tolerances), with the analytic gradient
    unless ``finite_diff``; ``tight``: jaxscale's tolerances and iteration cap instead (scipy's
    ftol is relative to max(|f|, 1) = 1 here, jaxscale's to |f| ~ 1e-3: scaled by 1e-3)."""
    options = {} if tight is None else {"ftol": tight.ftol * 1e-3, "gtol": tight.gtol, "maxiter": tight.max_iter}
    if finite_diff:
        return minimize(lambda t, *a: huber_and_gradient(t, *a)[0], theta0, args=args,
                        method="L-BFGS-B", options=options)
    return minimize(huber_and_gradient, theta0, args=args, method="L-BFGS-B", jac=True, options=options)


def timed(fn):
    """(wall seconds, CPU seconds of this process, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def spread(k: int, total: int) -> np.ndarray:
    """k indices evenly spread over range(total)."""
    return np.unique(np.linspace(0, total - 1, min(k, total)).round().astype(int))


def bench_multistart(table, n_scipy: int, finite_diff: bool, tight: bool) -> dict:
    tight = MULTISTART if tight else None
    grid = CHINCHILLA.init_grid()
    jax_seconds, jax_cpu, fit = timed(lambda: fit_approach3(table))

    args = (np.log(table.n), np.log(table.d), np.log(table.loss), np.ones(len(table)))
    picked = spread(n_scipy, len(grid))
    measured, cpu, results = timed(lambda: [scipy_fit(grid[i], args, finite_diff, tight) for i in picked])
    ok = [r.fun for r in results if r.success]
    best = min(ok) if ok else float("nan")
    per_fit = measured / len(picked)
    return {
        "scipy_starts_measured": len(picked),
        "scipy_measured_seconds": measured,
        "scipy_seconds": per_fit * len(grid),
        "scipy_extrapolated": len(picked) < len(grid),
        "scipy_cpu_seconds": cpu / len(picked) * len(grid),
        "jaxscale_cpu_seconds": jax_cpu,
        "scipy_objective": best,
        "scipy_converged": f"{len(ok)}/{len(picked)}",
        "jaxscale_seconds": jax_seconds,
        "jaxscale_objective": fit.objective,
        "jaxscale_converged": f"{fit.n_converged}/{fit.n_starts}",
        "ratio": per_fit * len(grid) / jax_seconds,
        "objective_gap": fit.objective - best,
        "params": fit.summary(),
        "_fit": fit,
    }


def bench_bootstrap(fit, n_resamples: int, n_scipy: int, finite_diff: bool, tight: bool, seed: int) -> dict:
    tight = WARM_START if tight else None
    counts = resample_counts(fit.n_points, n_resamples, seed)
    jax_seconds, jax_cpu, boot = timed(lambda: bootstrap(fit, counts=counts))

    log_x = (np.log(fit.runs.n), np.log(fit.runs.d), np.log(fit.runs.loss))
    picked = spread(n_scipy, n_resamples)
    measured, cpu, results = timed(
        lambda: [scipy_fit(fit.vector, (*log_x, counts[i]), finite_diff, tight) for i in picked])
    scipy_obj = np.array([r.fun for r in results])
    jax_obj = boot.objective[picked]
    per_fit = measured / len(picked)
    return {
        "bootstrap_resamples": n_resamples,
        "bootstrap_scipy_resamples_measured": len(picked),
        "bootstrap_scipy_measured_seconds": measured,
        "bootstrap_scipy_seconds": per_fit * n_resamples,
        "bootstrap_scipy_extrapolated": len(picked) < n_resamples,
        "bootstrap_scipy_cpu_seconds": cpu / len(picked) * n_resamples,
        "bootstrap_jaxscale_cpu_seconds": jax_cpu,
        "bootstrap_jaxscale_seconds": jax_seconds,
        "bootstrap_ratio": per_fit * n_resamples / jax_seconds,
        "bootstrap_jaxscale_converged": int(boot.converged.sum()),
        "bootstrap_scipy_converged": int(sum(r.success for r in results)),
        # on the resamples both fitted: how often jaxscale is at least as low, and the worst gap
        "bootstrap_jaxscale_not_worse_fraction": float(np.mean(jax_obj <= scipy_obj + 1e-10)),
        "bootstrap_max_objective_excess": float(np.max(jax_obj - scipy_obj)),
        "bootstrap_scipy_objective_mean": float(np.mean(scipy_obj)),
        "bootstrap_jaxscale_objective_mean": float(np.mean(jax_obj)),
        "bootstrap_se": boot.se(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=4500, help="scipy multistart subset (extrapolated)")
    parser.add_argument("--bootstrap", type=int, default=4000, help="bootstrap resamples")
    parser.add_argument("--resamples", type=int, default=None, help="scipy bootstrap subset (extrapolated)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scipy-finite-diff", action="store_true", help="Epoch's call: no analytic gradient")
    parser.add_argument("--scipy-tight", action="store_true",
                        help="scipy with jaxscale's tolerances and iteration caps instead of its defaults (Epoch's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not DATA.is_file():
        raise SystemExit(f"{DATA} not found: the shared data folder sits beside the clone")

    table = drop_highest_loss(load_runs(DATA), 5)
    multi = bench_multistart(table, args.starts, args.scipy_finite_diff, args.scipy_tight)
    boot = bench_bootstrap(multi.pop("_fit"), args.bootstrap, args.resamples or args.bootstrap,
                           args.scipy_finite_diff, args.scipy_tight, args.seed)
    result = {**multi, **boot, "scipy_gradient": "finite differences" if args.scipy_finite_diff else "analytic",
              "scipy_tolerances": "matched to jaxscale" if args.scipy_tight else "scipy defaults (Epoch's)",
              "device": str(jax.devices()[0]), "cpu_count": os.cpu_count(),
              "load_average": os.getloadavg()[0]}
    if args.json:
        print(json.dumps(result, indent=2, default=float))
        return
    print(f"Epoch's 240 runs, Huber delta={DELTA}; jaxscale on {result['device']}, "
          f"{result['cpu_count']} CPUs, load average {result['load_average']:.1f}; scipy gradient: "
          f"{result['scipy_gradient']}, tolerances: {result['scipy_tolerances']}")
    for title, prefix, count in (("multistart, 4500 starts", "", multi["scipy_starts_measured"]),
                                 (f"bootstrap, {args.bootstrap} resamples", "bootstrap_",
                                  boot["bootstrap_scipy_resamples_measured"])):
        extrapolated = result[f"{prefix}scipy_extrapolated"]
        how = f"measured on {count}, extrapolated" if extrapolated else "measured"
        print(f"\n{title}")
        print(f"  scipy L-BFGS-B serial   {result[f'{prefix}scipy_seconds']:10.2f} s  ({how}; "
              f"{result[f'{prefix}scipy_measured_seconds']:.2f} s measured)")
        print(f"  jaxscale batched        {result[f'{prefix}jaxscale_seconds']:10.2f} s  (compilation included)")
        print(f"  ratio                   {result[f'{prefix}ratio']:10.1f}x   (CPU time: scipy "
              f"{result[f'{prefix}scipy_cpu_seconds']:.1f} s, jaxscale {result[f'{prefix}jaxscale_cpu_seconds']:.1f} s)")
    print(f"\n  best objective: scipy {multi['scipy_objective']:.10e}   jaxscale {multi['jaxscale_objective']:.10e}"
          f"   (jaxscale - scipy = {multi['objective_gap']:.2e})")
    print(f"  bootstrap, on the resamples both fitted: jaxscale <= scipy + 1e-10 on "
          f"{100 * boot['bootstrap_jaxscale_not_worse_fraction']:.1f}%, worst excess "
          f"{boot['bootstrap_max_objective_excess']:.2e}")
    p = multi["params"]
    print(f"  jaxscale fit: A={p['A']:.4g} B={p['B']:.4g} E={p['E']:.5g} alpha={p['alpha']:.4f} "
          f"beta={p['beta']:.4f} a={p['a']:.4f}")


if __name__ == "__main__":
    main()
