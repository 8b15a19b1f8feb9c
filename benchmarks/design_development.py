"""The development score of a design, on simulated development tables only: how a design's rule
is chosen before it runs on the tables that judge it (``benchmarks/bench_design.py``).

Each design is replayed under the replay's rules (``bench_design``'s start set, refits and 90%
bootstrap interval of N*(1e24)) on the benchmark's simulated table of each development seed, up to
:data:`CAP` FLOP in all (the start set's included); the score is the mean over log compute in
[:data:`LOW`, :data:`CAP`] of the interval's width (a step function of the cumulative compute)
over the whole-table width W, and beside it the compute to reach 1.25 W and stay below within
the cap. Seeds below :data:`FIRST_DEVELOPMENT_SEED` are refused: seeds 0-2 judge the designs.
The scores of :mod:`jaxscale.planning.ensemble_belief` and :mod:`jaxscale.planning.pacing` came
from this procedure (there computed only from the last step below 1e21 FLOP on, which the score
covers; the picks do not depend on the intervals).

    nice -n 19 env PYTHONPATH=. python benchmarks/design_development.py \\
        --designs ensemble_design paced_design --seeds 100 101 102 103 104 105
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchmarks.bench_design import (
    BUDGET,
    DESIGNS,
    LEVEL,
    RESAMPLES,
    SIM_NOISE,
    WIDTH_MULTIPLE,
    epoch_runs,
    start_set,
    whole_table_width,
)
from jaxscale.laws import chinchilla
from jaxscale.planning.refits import pool_of
from jaxscale.planning.replay import Trace, compute_to_reach, replay, strategy
from jaxscale.planning.simulated_runs import simulated_runs
from jaxscale.planning.targets import n_star

CAP = 2e22
LOW = 3e21
FIRST_DEVELOPMENT_SEED = 100
GRID = 400


def mean_width(trace: Trace, width: float, low: float = LOW, cap: float = CAP) -> float:
    """The mean over :data:`GRID` points uniform in log compute on [low, cap] of the interval's
    width over ``width``, the width at a compute being the last step's at or below it."""
    grid = np.exp(np.linspace(np.log(low), np.log(cap), GRID))
    steps = np.searchsorted(trace.compute, grid, side="right") - 1
    return float(np.mean(trace.widths[steps])) / width


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=["ensemble_design", "paced_design"])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(100, 106)))
    args = parser.parse_args()
    if min(args.seeds) < FIRST_DEVELOPMENT_SEED:
        parser.error(f"development seeds are >= {FIRST_DEVELOPMENT_SEED}; seeds 0-2 judge the designs")
    real = epoch_runs()
    for seed in args.seeds:
        runs = simulated_runs(chinchilla.LAW, chinchilla.EPOCH, real.n, real.d, SIM_NOISE, seed)
        width = whole_table_width(runs)
        pool, start = pool_of(runs), start_set(runs)
        target = n_star(pool.law, BUDGET)
        for name in args.designs:
            t0, load = time.perf_counter(), os.getloadavg()[0]
            trace = replay(pool, start, strategy(name, pool, target), target, name=name, resamples=RESAMPLES,
                           seed=0, level=LEVEL, budget=CAP - float(runs.c[start].sum()))
            reach = compute_to_reach(trace, WIDTH_MULTIPLE * width)
            print(f"seed {seed} {name}: score {mean_width(trace, width):.3f}, 1.25 W reached "
                  f"{'never' if reach is None else f'at {reach:.2g}'} ({time.perf_counter() - t0:.0f} s, "
                  f"load {load:.1f})", flush=True)


if __name__ == "__main__":
    main()
