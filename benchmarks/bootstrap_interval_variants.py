"""Which 95% interval from the bootstrap's draws covers at its nominal level? A pilot, then one judged run.

``benchmarks/bench_intervals.py`` found the bootstrap's percentile intervals of ``jaxscale fit
--bootstrap 200`` too wide on its 120 judged tables: alpha 96.7%, beta 98.3%, a and b 99.2% (goal
90-98%). A nearly least-absolute-deviations fit (Huber, delta 1e-3) refitted to resamples of 30 runs
is lumpier than the estimator's own sampling distribution: a few resamples land far away.

DECLARED (2026-11-29, written and committed before any of these intervals was computed on any
table):

- Candidates, each a function of one fit's estimate t and its converged resamples' values v of a
  quantity (alpha, beta, a, b), NaN values left out:

  - ``percentile``: [q_2.5(v), q_97.5(v)], today's interval;
  - ``basic``: [2 t - q_97.5(v), 2 t - q_2.5(v)];
  - ``normal``: t -/+ 1.96 sd(v);
  - ``robust_normal``: t -/+ 1.96 IQR(v) / 1.349, the normal interval with a scale that a few
    far resamples do not widen.

- Tables: those of ``bench_intervals.table`` (30 runs, 1% noise, Besiroglu et al.'s law as truth),
  each fitted as ``jaxscale fit --bootstrap 200`` fits it (seed 0 of the resampling).
- Pilot: seeds 1000-1119. The choice: among the candidates whose pilot coverage of every quantity
  lies within 90-98%, the one whose largest |coverage - 95%| is smallest (ties: the order above);
  if none, ``percentile`` stays and this is reported.
- Judged: seeds 0-119 (those of ``bench_intervals.py``), run once, after the choice is committed
  below; the goal is bench_intervals' (every quantity covered in 90-98% of the tables).

    python benchmarks/bootstrap_interval_variants.py --seeds 1000 1119   # the pilot
    python benchmarks/bootstrap_interval_variants.py --seeds 0 119       # judged, once

CHOICE (the pilot, seeds 1000-1119, 2026-11-29, 420 s at load average 2-4, coverage of alpha,
beta, a, b): percentile 97.5 / 98.3 / 98.3 / 98.3%; basic 90.8 / 90.0 / 89.2 / 89.2%; normal
100 / 98.3 / 99.2 / 99.2%; robust_normal 95.8 / 95.8 / 96.7 / 96.7%. Only ``robust_normal`` lies
within 90-98% for every quantity: it is chosen, and judged next on seeds 0-119.

JUDGED (seeds 0-119, once, 2026-11-29, 344 s at load average 3-4.5): robust_normal covered alpha,
beta, a, b in 95.8 / 95.8 / 95.0 / 95.0% of the tables (goal met); from the same refits,
percentile 96.7 / 98.3 / 99.2 / 99.2%, basic 87.5 / 91.7 / 88.3 / 88.3%, normal 99.2 / 98.3 /
99.2 / 99.2%. ``BootstrapResult.ci95`` computes it since (``jaxscale.core.intervals.robust_normal``).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from benchmarks.bench_intervals import GOAL, QUANTITIES, RESAMPLES, table, truth

CANDIDATES = ("percentile", "basic", "normal", "robust_normal")


def intervals(estimate: float, values: np.ndarray) -> dict[str, tuple[float, float]]:
    """Each candidate's 95% interval of a quantity from its estimate and its resamples' values
    (``percentile`` and ``robust_normal`` are the library's own, the interval of
    :mod:`jaxscale.core.intervals` and its :func:`~jaxscale.core.intervals.robust_normal`)."""
    from scipy.stats import norm

    from jaxscale.core.intervals import interval, robust_normal

    v = values[~np.isnan(values)]
    lo, hi = (float(b) for b in interval(v))
    half = norm.ppf(0.975) * np.std(v, ddof=1)
    return {"percentile": (lo, hi), "basic": (2 * estimate - hi, 2 * estimate - lo),
            "normal": (estimate - half, estimate + half), "robust_normal": robust_normal(estimate, v)}


def one_table(seed: int, resamples: int) -> dict[str, dict[str, bool]]:
    """Whether each candidate's interval of each quantity covers the truth on the table of ``seed``."""
    from jaxscale._api.fit import fit

    report = fit(table(seed), bootstrap=resamples)
    numbers, values, true = report.to_dict(), report.refits._ok(), truth()
    out: dict[str, dict[str, bool]] = {c: {} for c in CANDIDATES}
    for q in QUANTITIES:
        for name, (lo, hi) in intervals(float(numbers[q]), np.asarray(values[q], np.float64)).items():
            out[name][q] = bool(lo <= true[q] <= hi)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs=2, required=True, metavar=("FIRST", "LAST"))
    parser.add_argument("--resamples", type=int, default=RESAMPLES)
    args = parser.parse_args()
    start, load = time.perf_counter(), os.getloadavg()
    rows = [one_table(s, args.resamples) for s in range(args.seeds[0], args.seeds[1] + 1)]
    coverage = {c: {q: float(np.mean([r[c][q] for r in rows])) for q in QUANTITIES} for c in CANDIDATES}
    within = [c for c in CANDIDATES if all(GOAL[0] <= v <= GOAL[1] for v in coverage[c].values())]
    chosen = min(within, key=lambda c: max(abs(v - 0.95) for v in coverage[c].values()), default="percentile")
    print(json.dumps({"seeds": list(args.seeds), "tables": len(rows), "coverage": coverage, "within_goal": within,
                      "rule_picks": chosen, "seconds": time.perf_counter() - start,
                      "load_average": [load, os.getloadavg()]}, indent=2))


if __name__ == "__main__":
    main()
