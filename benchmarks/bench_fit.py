"""Approach 3 on Epoch AI's 240 Chinchilla runs: scipy's serial L-BFGS-B (Epoch's method)
against jaxscale's batched L-BFGS, in the same process, on the same work.

1. Multistart: Epoch's 4500-point initialisation grid, Huber loss (delta 1e-3, sum) on
   log-sum-exp; scipy fits the starts one after another (as Epoch does), jaxscale screens them
   and minimises the best 128 in one jit-compiled call (:mod:`jaxscale.fitting.approach3`; the
   full grid, ``screen=None``, is run too, to show that it finds the same optimum).
2. Bootstrap: R resamples of the runs (the same count vectors for both), each refitted from
   the full-data optimum; scipy serially, jaxscale in one call.

jaxscale's times are "cold" (its first call in this process: compilation, or loading the
compiled program from JAX's persistent cache, :mod:`jaxscale.support.compilation_cache`, which this
script turns on unless ``--no-cache``; the header says how many entries it held) and "warm"
(the fastest of three more calls). Two scipy anchors: the exact analytic gradient, and Epoch's
own call with finite differences (``--fd-starts K`` of them, extrapolated). On a slow or shared
machine, ``--starts K`` and ``--resamples K`` run the analytic anchor on an evenly spread subset
and extrapolate its per-fit time to the full count; the output says what was extrapolated. scipy's
small-array numpy calls are far more sensitive to other load than the compiled jaxscale
program (on a shared 2-core machine the same scipy fits ran 2-8x slower from one minute to
the next): compare ratios from quiet runs only, and see the load average printed.

    python benchmarks/bench_fit.py [--starts 450] [--fd-starts 45] [--resamples 200] [--bootstrap 4000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from functools import partial
from pathlib import Path

import jax
import numpy as np
from scipy.optimize import minimize

from jaxscale.core import lbfgs
from jaxscale.fitting.approach3 import MULTISTART, fit_approach3
from jaxscale.fitting.bootstrap import WARM_START, bootstrap, resample_counts
from jaxscale.laws.chinchilla import LAW as CHINCHILLA
from jaxscale.tables.table import drop_highest_loss, read_runs_table
from jaxscale.support import compilation_cache

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


def cold_and_warm(fn, repeats: int = 3) -> tuple[dict, object]:
    """Wall and CPU seconds of the first call of ``fn`` and the fastest of ``repeats`` more."""
    cold_wall, cold_cpu, out = timed(fn)
    warm = [timed(fn)[:2] for _ in range(repeats)]
    return {"cold_seconds": cold_wall, "cold_cpu_seconds": cold_cpu,
            "warm_seconds": min(w for w, _ in warm), "warm_cpu_seconds": min(c for _, c in warm)}, out


def scipy_anchor(fits, total: int) -> dict:
    """Time ``fits`` (a list of thunks, a subset of ``total``) and extrapolate to ``total``."""
    measured, cpu, results = timed(lambda: [fit() for fit in fits])
    return {"measured_fits": len(fits), "measured_seconds": measured, "seconds": measured / len(fits) * total,
            "cpu_seconds": cpu / len(fits) * total, "extrapolated": len(fits) < total, "_results": results}


def best_success(results) -> float:
    ok = [r.fun for r in results if r.success]
    return min(ok) if ok else float("nan")


def bench_multistart(table, n_scipy: int, n_fd: int, tight: bool) -> dict:
    tight = MULTISTART if tight else None
    grid = CHINCHILLA.init_grid()
    times, fit = cold_and_warm(lambda: fit_approach3(table))
    full_wall, _, full = timed(lambda: fit_approach3(table, screen=None))

    args = (np.log(table.n), np.log(table.d), np.log(table.loss), np.ones(len(table)))
    analytic = scipy_anchor([partial(scipy_fit, grid[i], args, False, tight) for i in spread(n_scipy, len(grid))],
                            len(grid))
    fd = scipy_anchor([partial(scipy_fit, grid[i], args, True, tight) for i in spread(n_fd, len(grid))], len(grid))
    best = best_success(analytic.pop("_results"))
    return {
        "jaxscale": times, "scipy": analytic, "scipy_finite_diff": fd,
        "scipy_objective": best, "scipy_finite_diff_objective": best_success(fd.pop("_results")),
        "jaxscale_objective": fit.objective, "jaxscale_full_grid_objective": full.objective,
        "jaxscale_full_grid_seconds": full_wall,
        "jaxscale_minimised": f"{fit.n_minimised} of {fit.n_starts} (converged {fit.n_converged})",
        "objective_gap": fit.objective - best,
        "params": fit.summary(),
        "_fit": fit,
    }


def bench_bootstrap(fit, n_resamples: int, n_scipy: int, tight: bool, seed: int) -> dict:
    tight = WARM_START if tight else None
    counts = resample_counts(fit.n_points, n_resamples, seed)
    times, boot = cold_and_warm(lambda: bootstrap(fit, counts=counts))

    log_x = (np.log(fit.runs.n), np.log(fit.runs.d), np.log(fit.runs.loss))
    picked = spread(n_scipy, n_resamples)
    anchor = scipy_anchor([partial(scipy_fit, fit.vector, (*log_x, counts[i]), False, tight) for i in picked],
                          n_resamples)
    results = anchor.pop("_results")
    scipy_obj = np.array([r.fun for r in results])
    jax_obj = boot.objective[picked]
    return {
        "bootstrap_resamples": n_resamples,
        "bootstrap_jaxscale": times, "bootstrap_scipy": anchor,
        "bootstrap_ci95": boot.ci95(),
        "bootstrap_jaxscale_converged": int(boot.converged.sum()),
        "bootstrap_scipy_converged": int(sum(r.success for r in results)),
        # on the resamples both fitted: how often jaxscale is at least as low, and the worst gap
        "bootstrap_jaxscale_not_worse_fraction": float(np.mean(jax_obj <= scipy_obj + 1e-10)),
        "bootstrap_max_objective_excess": float(np.max(jax_obj - scipy_obj)),
        "bootstrap_scipy_objective_mean": float(np.mean(scipy_obj)),
        "bootstrap_jaxscale_objective_mean": float(np.mean(jax_obj)),
        "bootstrap_se": boot.se(),
    } | (scipy_intervals(boot, results) if not anchor["extrapolated"] else {})


def scipy_intervals(boot, results) -> dict:
    """scipy's percentile intervals over every resample, and their largest gap to jaxscale's."""
    ours = percentile_intervals(boot.vectors)
    theirs = percentile_intervals(np.array([r.x for r in results]))
    gap = max(abs(a - b) for k in ours for a, b in zip(ours[k], theirs[k]))
    return {"bootstrap_scipy_ci95": theirs, "bootstrap_ci95_max_difference": gap}


def percentile_intervals(vectors: np.ndarray) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of the law's parameters over fitted vectors (R, 5)."""
    params = CHINCHILLA.from_vector(vectors)
    return {k: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) for k, v in params._asdict().items()}


def print_row(label: str, seconds: float, note: str) -> None:
    print(f"  {label:<34}{seconds:9.3f} s  {note}")


def print_table(title: str, jax_times: dict, anchors: list[tuple[str, dict]]) -> None:
    print(f"\n{title}")
    print_row("jaxscale cold (first call)", jax_times["cold_seconds"], f"(CPU {jax_times['cold_cpu_seconds']:.2f} s)")
    print_row("jaxscale warm (best of 3)", jax_times["warm_seconds"], f"(CPU {jax_times['warm_cpu_seconds']:.3f} s)")
    for label, anchor in anchors:
        how = f"measured on {anchor['measured_fits']}, extrapolated" if anchor["extrapolated"] else "measured"
        print_row(label, anchor["seconds"], f"({how}; CPU {anchor['cpu_seconds']:.1f} s)")
        print(f"  {'':<34}ratio to jaxscale: {anchor['seconds'] / jax_times['warm_seconds']:8.1f}x warm, "
              f"{anchor['seconds'] / jax_times['cold_seconds']:6.1f}x cold")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=4500, help="scipy multistart subset (extrapolated)")
    parser.add_argument("--fd-starts", type=int, default=45,
                        help="finite-difference (Epoch's) scipy subset (extrapolated)")
    parser.add_argument("--bootstrap", type=int, default=4000, help="bootstrap resamples")
    parser.add_argument("--resamples", type=int, default=None, help="scipy bootstrap subset (extrapolated)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scipy-tight", action="store_true",
                        help="scipy with jaxscale's tolerances and iteration caps instead of its defaults (Epoch's)")
    parser.add_argument("--cache-dir", default=None, help="persistent compilation cache (default: jaxscale's)")
    parser.add_argument("--no-cache", action="store_true", help="compile everything in this process")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not DATA.is_file():
        raise SystemExit(f"{DATA} not found: the shared data folder sits beside the clone")
    cache = None if args.no_cache else compilation_cache.enable_compilation_cache(
        None if args.cache_dir is None else {"JAXSCALE_CACHE_DIR": str(args.cache_dir)})
    entries = len(list(Path(cache).glob("*"))) if cache and Path(cache).is_dir() else 0

    table = drop_highest_loss(read_runs_table(DATA), 5)
    multi = bench_multistart(table, args.starts, args.fd_starts, args.scipy_tight)
    boot = bench_bootstrap(multi.pop("_fit"), args.bootstrap, args.resamples or args.bootstrap,
                           args.scipy_tight, args.seed)
    result = {**multi, **boot, "scipy_tolerances": "matched to jaxscale" if args.scipy_tight else "scipy defaults (Epoch's)",
              "device": str(jax.devices()[0]), "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
              "compilation_cache": cache and str(cache), "cache_entries_before": entries}
    if args.json:
        print(json.dumps(result, indent=2, default=float))
        return
    print(f"Epoch's 240 runs, Huber delta={DELTA}; jaxscale on {result['device']}, {result['cpu_count']} CPUs, "
          f"load average {result['load_average'][0]:.1f} (1 min) {result['load_average'][1]:.1f} (5 min); "
          f"scipy tolerances: {result['scipy_tolerances']}; persistent compilation cache: {cache or 'off'}"
          + (f" ({entries} entries before this run)" if cache else ""))
    print_table(f"multistart, 4500 starts (jaxscale minimises the best {multi['jaxscale_minimised']})",
                multi["jaxscale"], [("scipy L-BFGS-B, analytic gradient", multi["scipy"]),
                                    ("scipy L-BFGS-B, finite diff (Epoch)", multi["scipy_finite_diff"])])
    print_table(f"bootstrap, {args.bootstrap} resamples", boot["bootstrap_jaxscale"],
                [("scipy L-BFGS-B, analytic gradient", boot["bootstrap_scipy"])])
    print(f"\n  best objective: scipy {multi['scipy_objective']:.13e}   jaxscale {multi['jaxscale_objective']:.13e}"
          f"   (jaxscale - scipy = {multi['objective_gap']:.2e})")
    print(f"  jaxscale, every start minimised: {multi['jaxscale_full_grid_objective']:.13e} "
          f"({multi['jaxscale_full_grid_seconds']:.2f} s, compilation included)")
    print(f"  bootstrap, on the resamples both fitted: jaxscale <= scipy + 1e-10 on "
          f"{100 * boot['bootstrap_jaxscale_not_worse_fraction']:.1f}%, worst excess "
          f"{boot['bootstrap_max_objective_excess']:.2e}")
    print("  bootstrap 95% intervals: " + ", ".join(f"{k} [{lo:.3f}, {hi:.3f}]" for k, (lo, hi) in
                                                     boot["bootstrap_ci95"].items()))
    if "bootstrap_scipy_ci95" in boot:
        print(f"  scipy's intervals over the same resamples differ by at most "
              f"{boot['bootstrap_ci95_max_difference']:.2e} (A, B, E, alpha, beta; with scipy's default "
              f"tolerance, relative to max(|f|, 1) = 1, refits stop near their start: see --scipy-tight)")
    p = multi["params"]
    print(f"  jaxscale fit: A={p['A']:.4g} B={p['B']:.4g} E={p['E']:.5g} alpha={p['alpha']:.4f} "
          f"beta={p['beta']:.4f} a={p['a']:.4f}")


if __name__ == "__main__":
    main()
