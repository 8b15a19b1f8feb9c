"""Approach 3 at any size: time and peak memory of loading a runs table from CSV and fitting it
with the 4500-start grid, against the number of rows, each size in a fresh process.

The tables are synthetic learning curves: R runs x K checkpoints (1000 checkpoints per run from
10,000 rows up: 1,000 runs x 1,000 checkpoints for 1M rows, 5,750 runs for the 5.75M-row table of
issue 29), model sizes log-uniform in [1e8, 1e10], each run trained to 5-100 tokens per parameter
(log-uniform) with checkpoints evenly spaced in tokens, losses from Epoch AI's Chinchilla fit
(Besiroglu et al. 2024: E = 1.8172, A = 482.01, B = 2085.43, alpha = 0.3478, beta = 0.3658) times
exp(0.01 z), z ~ N(0, 1). The CSV (run_id, step, N, D, loss) is written before the child starts.

Each size runs in a fresh child process (``--child``), which imports jaxscale, loads the CSV with
``read_runs_table`` and fits it with ``fit_approach3``, and reports its wall times and its peak resident
memory (``ru_maxrss``, the whole process: the interpreter, JAX and the table included). The anchor
is the unchunked path, i.e. jaxscale before issue 29: the whole grid screened in one evaluation over
every row, and the kept starts minimised on every row in single sums
(``objective.ROWS_PER_CHUNK``, ``approach3.SUBSAMPLE`` and ``approach3.SCREEN_TERMS`` set beyond
any table), run where its own memory estimate (1.5 arrays of 4500 x rows float64 in the screen)
stays under ``--anchor-gib``; its objective is printed beside the chunked one. The persistent
compilation cache is on, as for the command line (``JAXSCALE_CACHE_DIR``); the first size of a new
cache compiles.

    python benchmarks/bench_fit_scale.py [--rows 1e3 1e4 1e5 1e6 5.75e6] [--anchor-gib 6] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROWS = (1e3, 1e4, 1e5, 1e6, 5.75e6)
CHECKPOINTS = 1000
#: Epoch AI's fit of the Chinchilla law: E, A, B, alpha, beta.
TRUTH = (1.8172, 482.01, 2085.43, 0.3478, 0.3658)
NOISE = 0.01
#: The anchor's screen holds about this many (starts x rows) float64 arrays at once (issue 29
#: measured 4.3 GB for 100,000 rows: 1.2 of them; 1.5 leaves a margin).
ANCHOR_ARRAYS = 1.5


def write_table(path: Path, rows: int, seed: int = 0) -> tuple[int, int]:
    """Write the synthetic CSV of ``rows`` rows (module docstring); returns (runs, checkpoints)."""
    checkpoints = min(CHECKPOINTS, max(10, rows // 10))
    runs = rows // checkpoints
    rng = np.random.default_rng(seed)
    size = np.exp(rng.uniform(np.log(1e8), np.log(1e10), runs))
    final = size * np.exp(rng.uniform(np.log(5), np.log(100), runs))
    step = np.arange(1, checkpoints + 1)
    n = np.repeat(size, checkpoints)
    d = (final[:, None] * step[None, :] / checkpoints).ravel()
    e, a, b, alpha, beta = TRUTH
    loss = (e + a / n**alpha + b / d**beta) * np.exp(NOISE * rng.standard_normal(n.size))
    run_id = np.repeat(np.arange(runs), checkpoints)
    with path.open("w") as fh:
        fh.write("run_id,step,N,D,loss\n")
        np.savetxt(fh, np.column_stack([run_id, np.tile(step, runs), n, d, loss]),
                   fmt=["%d", "%d", "%.10g", "%.10g", "%.10g"], delimiter=",")
    return runs, checkpoints


def child(path: str, unchunked: bool) -> dict:
    """Load and fit ``path`` in this process; wall times, objective and peak memory."""
    t0 = time.perf_counter()
    from jaxscale.fitting import approach3, objective
    from jaxscale.tables.table import read_runs_table
    from jaxscale.support.compilation_cache import enable_compilation_cache

    enable_compilation_cache()
    if unchunked:
        objective.ROWS_PER_CHUNK = approach3.SUBSAMPLE = approach3.SCREEN_TERMS = 2**62
    t1 = time.perf_counter()
    runs = read_runs_table(path)
    t2 = time.perf_counter()
    fit = approach3.fit_approach3(runs)
    t3 = time.perf_counter()
    return {"rows": len(runs), "import_seconds": t1 - t0, "load_seconds": t2 - t1, "fit_seconds": t3 - t2,
            "load_and_fit_seconds": t3 - t1, "objective": fit.objective, "alpha": fit.params.alpha,
            "beta": fit.params.beta, "n_converged": fit.n_converged,
            "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def run_child(path: Path, unchunked: bool) -> dict:
    """:func:`child` in a fresh interpreter; its JSON, or the reason it gave none."""
    cmd = [sys.executable, __file__, "--child", str(path)] + (["--unchunked"] if unchunked else [])
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def anchor_gib(rows: int, starts: int = 4500) -> float:
    """Memory the unchunked screen needs: :data:`ANCHOR_ARRAYS` (starts x rows) float64 arrays."""
    return ANCHOR_ARRAYS * starts * rows * 8 / 2**30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=list(ROWS))
    parser.add_argument("--anchor-gib", type=float, default=6.0,
                        help="run the unchunked anchor where its screen needs less (default: %(default)s)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--unchunked", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.unchunked)))
        return
    print(f"# Approach 3, 4500 starts, load + fit per size in a fresh process; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.1f} at start", flush=True)
    print(f"# {'rows':>9} {'runs x ckpts':>13} {'path':>10} {'load s':>7} {'fit s':>7} {'total s':>8} "
          f"{'peak GiB':>8} {'objective':>22}", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (int(r) for r in args.rows):
            path = Path(tmp) / f"runs_{rows}.csv"
            runs, checkpoints = write_table(path, rows)
            paths = ["chunked"] + (["unchunked"] if anchor_gib(rows) <= args.anchor_gib else [])
            for name in paths:
                out = {"rows": runs * checkpoints, "runs": runs, "checkpoints": checkpoints, "path": name,
                       **run_child(path, name == "unchunked")}
                results.append(out)
                shape = f"{runs}x{checkpoints}"
                if "error" in out:
                    print(f"  {out['rows']:>9} {shape:>13} {name:>10}  failed: {out['error']}", flush=True)
                    continue
                print(f"  {out['rows']:>9} {shape:>13} {name:>10} {out['load_seconds']:7.2f} {out['fit_seconds']:7.2f} "
                      f"{out['load_and_fit_seconds']:8.2f} {out['peak_rss_gib']:8.2f} {out['objective']:22.15g}",
                      flush=True)
            if "unchunked" not in paths:
                print(f"  {runs * checkpoints:>9} {'':>13} {'unchunked':>10}  not run: its screen alone needs "
                      f"{anchor_gib(rows):.0f} GiB", flush=True)
    print(f"# load average {os.getloadavg()[0]:.1f} at end")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
