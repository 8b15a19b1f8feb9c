"""Variable projection on the isoFLOP tables: a scipy anchor, jaxscale's VPNLS and Approach 3.

The tables: the rows of each ``source`` of ``isoflops_public.csv`` (``epochai_chinchilla``,
``ml_scalefit``, ``misfitting``), N = ``params``, D = ``tokens``, nothing dropped. Three fits of
the Chinchilla law to each, in one process:

1. **anchor**: variable projection in scipy, written for this benchmark: the grid of
   :data:`jaxscale.fitting.vpnls.GRID`, at each point ``scipy.optimize.nnls`` of L on
   (N^-alpha, D^-beta, 1) with rows weighted by 1/L (a Python loop), the point of least weighted
   residual sum of squares refined in (alpha, beta) by L-BFGS-B (``scipy.optimize.minimize``,
   finite differences) on that projected sum. Its own objective is that sum; the Huber objective
   of jaxscale at its parameters is printed beside it.
2. **vpnls**: :func:`jaxscale.fitting.vpnls.fit_vpnls`.
3. **approach3**: :func:`jaxscale.fitting.approach3.fit_approach3` (Epoch's 4500-start grid).

**Cold** is each fit's first call in the process (compilation included for jaxscale; the anchor's
first call); **warm** the median of ``--repeats`` further calls, alternating the three so that load
drifts hit all alike. Printed: both times, the warm ratio anchor / vpnls (the goal: >= 5), each
fit's Huber objective and parameters, and the load average.

``--rules`` prints instead, on the two extractions of Chinchilla's curves, every rule's a with
its resampling and seed-noise intervals (200 resamples) beside Hoffmann et al.'s 0.49, and the
grid's warnings (:func:`jaxscale.isoflop`).

    python benchmarks/bench_isoflop.py [--repeats 5] [--sources ...] [--json]
    python benchmarks/bench_isoflop.py --rules
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = REPO.parent / "shared" / "data" / "isoflops_public.csv"
SOURCES = ("epochai_chinchilla", "ml_scalefit", "misfitting")
#: Hoffmann et al.'s (2022) Approach 2 exponent on these curves (N* ~ C^a).
HOFFMANN_A = 0.49


def anchor(n: np.ndarray, d: np.ndarray, loss: np.ndarray) -> dict:
    """The scipy variable projection of the module docstring."""
    from scipy.optimize import minimize, nnls

    from jaxscale.fitting.vpnls import GRID

    log_n, log_d, scale = np.log(n), np.log(d), 1.0 / loss

    def solve(exponents: np.ndarray) -> tuple[np.ndarray, float]:
        alpha, beta = exponents
        design = np.column_stack([np.exp(-alpha * log_n), np.exp(-beta * log_d), np.ones_like(loss)]) * scale[:, None]
        linear, norm = nnls(design, loss * scale)
        return linear, norm**2

    axis = np.linspace(*GRID)
    best = min(((a, b) for a in axis for b in axis), key=lambda ab: solve(np.array(ab))[1])
    refined = minimize(lambda x: solve(x)[1], np.array(best), method="L-BFGS-B", bounds=[(1e-3, 3.0)] * 2)
    (a_coef, b_coef, e), rss = solve(refined.x)
    return {"A": a_coef, "B": b_coef, "E": e, "alpha": refined.x[0], "beta": refined.x[1], "rss": rss}


def huber_at(runs, params: dict) -> float:
    """jaxscale's Huber objective (Approach 3's) of the Chinchilla law at ``params`` on ``runs``."""
    import jax

    from jaxscale.fitting.objective import fit_data, huber_objective
    from jaxscale.laws import chinchilla

    law = chinchilla.LAW
    with jax.enable_x64(True):
        theta = law.to_vector(chinchilla.ChinchillaParams(*(max(float(params[k]), 1e-300) for k in law.param_names)))
        return float(huber_objective(theta, fit_data((runs.n, runs.d), runs.loss), law))


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def compare(source: str, repeats: int) -> dict:
    """Cold and warm times and objectives of the three fits on one source's rows."""
    import jaxscale as js
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.fitting.vpnls import fit_vpnls

    runs = js.load_runs(str(DATA), where={"source": source})
    fits = {"anchor": lambda: anchor(runs.n, runs.d, runs.loss), "vpnls": lambda: fit_vpnls(runs),
            "approach3": lambda: fit_approach3(runs)}
    cold = {name: timed(fit)[0] for name, fit in fits.items()}
    warm: dict[str, list[float]] = {name: [] for name in fits}
    results = {}
    for _ in range(repeats):
        for name, fit in fits.items():
            seconds, results[name] = timed(fit)
            warm[name].append(seconds)
    params = {"anchor": results["anchor"], **{k: results[k].params._asdict() for k in ("vpnls", "approach3")}}
    return {"source": source, "rows": len(runs), "cold_s": cold,
            "warm_s": {k: statistics.median(v) for k, v in warm.items()},
            "warm_ratio_anchor_over_vpnls": statistics.median(warm["anchor"]) / statistics.median(warm["vpnls"]),
            "huber_objective": {k: huber_at(runs, p) for k, p in params.items()},
            "anchor_rss": results["anchor"]["rss"], "params": params}


def rules(source: str, resamples: int) -> dict:
    """Every rule's a with its resampling and seed-noise intervals, beside Hoffmann et al.'s 0.49."""
    import jaxscale as js

    runs = js.load_runs(str(DATA), where={"source": source})
    out = {"source": source, "hoffmann_a": HOFFMANN_A}
    for kind in ("resample", "seed-noise"):
        report = js.isoflop(runs, resamples=resamples, interval=kind)
        out[kind] = {rule: {"a": f.a, "interval": f.a_interval, "refused": [str(r) for r in f.refusals]}
                     for rule, f in report.fits.items()}
        out["reference_a"] = report.reference.summary()["a"]
        out["grid"] = report.diagnostics.to_dict()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=SOURCES)
    parser.add_argument("--rules", action="store_true",
                        help="instead: every rule's a with its intervals on the two Chinchilla extractions")
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.rules:
        out = [rules(s, args.resamples) for s in ("epochai_chinchilla", "ml_scalefit")]
    else:
        out = [compare(s, args.repeats) for s in args.sources]
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"results": out, "load": load}, default=float, indent=1))
        return
    for r in out:
        if args.rules:
            print(f"{r['source']}: Hoffmann et al. a = {r['hoffmann_a']}; VPNLS law on all points a = {r['reference_a']:.4f}")
            for rule in r["resample"]:
                cells = [f"{r[k][rule]['a']:.4f} [{r[k][rule]['interval'][0]:.4f}, {r[k][rule]['interval'][1]:.4f}]"
                         if r[k][rule]["a"] is not None and r[k][rule]["interval"] else "undefined"
                         for k in ("resample", "seed-noise")]
                print(f"  {rule:<9} resample {cells[0]}   seed-noise {cells[1]}")
            print("  warnings:", *r["grid"]["warnings"], sep="\n    ")
            continue
        print(f"{r['source']} ({r['rows']} rows)")
        for name in ("anchor", "vpnls", "approach3"):
            print(f"  {name:<10} cold {r['cold_s'][name]:8.3f} s   warm {r['warm_s'][name]:8.4f} s   "
                  f"Huber objective {r['huber_objective'][name]:.10g}")
        print(f"  warm anchor / vpnls = {r['warm_ratio_anchor_over_vpnls']:.1f}x")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
