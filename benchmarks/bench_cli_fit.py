"""``jaxscale fit`` of a small table, end to end in fresh processes: the command against the cost
of importing JAX alone, and against a plain scipy variable-projection fit of the same rows.

The table: the 124 isoFLOP rows of ``source=ml_scalefit`` in ``isoflops_public.csv`` (one of
the two extractions of Hoffmann et al. 2022's Figure 3 curves that Open Athena normalised). Three
commands, each in a fresh interpreter, timed from the parent (spawn to exit):

1. ``jaxscale fit isoflops_public.csv --where source=ml_scalefit`` with no files written (the
   spelling this checkout has: ``--no-figures``, or no ``--out``), the persistent compilation
   cache filled by one untimed run first;
2. ``python -c "import jax"``: what any JAX program pays before its first line;
3. the anchor, this script's ``--anchor`` mode: the Chinchilla law L = E + A N^-alpha + B D^-beta
   by variable projection, as Open Athena's vpnls does it (described, not copied): for fixed
   (alpha, beta) the loss is linear in (E, A, B), solved by non-negative least squares
   (``scipy.optimize.nnls``); (alpha, beta) minimise the residual sum of squares of that solve,
   by L-BFGS-B (``scipy.optimize.minimize``, finite differences) from the best point of a 9 x 9
   grid on [0.1, 0.9]^2. Rows read with the ``csv`` module. A least-squares fit in loss space, not
   jaxscale's Huber loss on log loss: its parameters are printed beside jaxscale's, not expected
   to agree to many digits.

The three run in turn, ``--repeats`` times (alternating, so drifts in machine load hit all three
alike); the medians are printed with the load average. ``--json`` prints them as one object.
Every command runs in the checkout timed, with it on ``PYTHONPATH`` (``python -m`` imports the
package of its working directory first): ``--checkout DIR`` times another one. ``--baseline DIR``
adds a fourth command, the same fit in another checkout (e.g. the commit before a change), timed
in the same rounds, and prints the ratio to it and the largest relative difference between the
two fits' parameters (a change of speed must leave them as they were).

    python benchmarks/bench_cli_fit.py [--repeats 7] [--checkout DIR] [--baseline DIR] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "isoflops_public.csv"
SOURCE = "ml_scalefit"
#: The fitted numbers compared with the baseline's.
PARAMETERS = ("E", "A", "B", "alpha", "beta", "G", "a", "b", "objective")


def anchor(path: Path) -> dict:
    """The variable-projection fit of the module docstring, on the rows of :data:`SOURCE`."""
    from scipy.optimize import minimize, nnls

    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["source"] == SOURCE]
    n, d, loss = (np.array([float(r[k]) for r in rows]) for k in ("params", "tokens", "loss"))
    log_n, log_d = np.log(n), np.log(d)

    def solve(exponents: np.ndarray) -> tuple[np.ndarray, float]:
        alpha, beta = exponents
        design = np.column_stack([np.ones_like(loss), np.exp(-alpha * log_n), np.exp(-beta * log_d)])
        linear, residual_norm = nnls(design, loss)
        return linear, residual_norm**2

    grid = np.linspace(0.1, 0.9, 9)
    start = min(((a, b) for a in grid for b in grid), key=lambda ab: solve(np.array(ab))[1])
    best = minimize(lambda x: solve(x)[1], np.array(start), method="L-BFGS-B", bounds=[(0.01, 2.0)] * 2)
    (e, a, b), rss = solve(best.x)
    return {"rows": len(loss), "E": e, "A": a, "B": b, "alpha": best.x[0], "beta": best.x[1], "rss": rss}


def fit_command(checkout: Path) -> list[str]:
    """``jaxscale fit`` of the table writing no files, in the spelling of ``checkout``."""
    base = [sys.executable, "-m", "jaxscale", "fit", str(DATA), "--where", f"source={SOURCE}"]
    helptext = subprocess.run(base[:4] + ["--help"], capture_output=True, text=True, check=True, cwd=checkout,
                              env={**os.environ, "PYTHONPATH": str(checkout)}).stdout
    return base + (["--no-figures"] if "--no-figures" in helptext else []) + ["--json"]


def wall(cmd: list[str], checkout: Path) -> tuple[float, str]:
    """Seconds from spawning ``cmd`` in ``checkout`` (whose jaxscale ``python -m`` imports) to its
    exit, and its stdout."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=checkout,
                          env={**os.environ, "PYTHONPATH": str(checkout)})
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} in {checkout} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return time.perf_counter() - t0, done.stdout


def largest_difference(fit: dict, other: dict) -> float:
    """The largest relative difference between the :data:`PARAMETERS` of two fits' JSON."""
    return max(abs(fit[k] - other[k]) / max(abs(other[k]), 1e-300) for k in PARAMETERS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--checkout", type=Path, default=REPO,
                        help="the jaxscale checkout to time, e.g. another worktree for a before/after (default: this one)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout whose fit is timed in the same rounds, and compared")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--anchor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.anchor:
        print(json.dumps(anchor(DATA)))
        return
    checkout = args.checkout.resolve()
    commands = {"jaxscale fit": fit_command(checkout), "import jax": [sys.executable, "-c", "import jax"],
                "scipy varpro": [sys.executable, str(Path(__file__).resolve()), "--anchor"]}
    where = {name: checkout for name in commands}
    if args.baseline is not None:
        where["baseline fit"] = args.baseline.resolve()
        commands["baseline fit"] = fit_command(where["baseline fit"])
    load = os.getloadavg()[0]
    for name in ("jaxscale fit", "baseline fit"):  # fill the compilation caches; not timed
        if name in commands:
            wall(commands[name], where[name])
    times: dict[str, list[float]] = {name: [] for name in commands}
    outputs = {}
    for _ in range(args.repeats):
        for name, cmd in commands.items():
            seconds, outputs[name] = wall(cmd, where[name])
            times[name].append(seconds)
    fit, varpro = json.loads(outputs["jaxscale fit"]), json.loads(outputs["scipy varpro"])
    medians = {name: statistics.median(t) for name, t in times.items()}
    result = {"repeats": args.repeats, "load_average": [load, os.getloadavg()[0]], "median_seconds": medians,
              "seconds": times, "jaxscale": {k: fit[k] for k in ("E", "A", "B", "alpha", "beta", "n_points")},
              "varpro": varpro}
    if args.baseline is not None:
        difference = largest_difference(fit, json.loads(outputs["baseline fit"]))
        result["baseline"] = {"checkout": str(where["baseline fit"]), "largest_relative_difference": difference}
    if args.json:
        print(json.dumps(result))
        return
    print(f"# {fit['n_points']} rows ({SOURCE}), jaxscale of {checkout}, fresh processes, median of {args.repeats} "
          f"(alternating); load average {load:.1f} -> {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs")
    for name, cmd in commands.items():
        spread = f"[{min(times[name]):.2f}, {max(times[name]):.2f}]"
        print(f"  {name:<14} {medians[name]:6.2f} s  {spread:>14}   {' '.join(Path(c).name for c in cmd[1:])}")
    print(f"  jaxscale fit / import jax: {medians['jaxscale fit'] / medians['import jax']:.2f}; "
          f"jaxscale fit / scipy varpro: {medians['jaxscale fit'] / medians['scipy varpro']:.2f}")
    if args.baseline is not None:
        print(f"  jaxscale fit / baseline fit ({args.baseline.resolve()}): "
              f"{medians['jaxscale fit'] / medians['baseline fit']:.2f}; largest relative difference of "
              f"{', '.join(PARAMETERS)}: {result['baseline']['largest_relative_difference']:.1e}")
    for name, p in (("jaxscale (Huber, log loss)", fit), ("varpro (least squares, loss)", varpro)):
        print(f"  {name:<29} E {p['E']:.4g}  A {p['A']:.4g}  B {p['B']:.4g}  alpha {p['alpha']:.4f}  "
              f"beta {p['beta']:.4f}")


if __name__ == "__main__":
    main()
