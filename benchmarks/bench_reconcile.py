"""``jaxscale reconcile`` as a user starts it: wall time of a fresh process, figures included.

Cold: every run gets an empty compilation-cache directory (``JAXSCALE_CACHE_DIR``), so it traces
and compiles everything. Warm: every run shares one directory, filled by an untimed first run, so
it loads the compiled programs. Python bytecode is compiled beforehand in both cases, and the
runs alternate cold, warm, cold, ... so that a change in the machine's load hits both alike.

The anchor (issue 16) is Pearce & Song's own numpy script with its figures, 3.5 s; that script
is not part of this repository, so the figure is the issue's, printed for comparison only.

    python benchmarks/bench_reconcile.py [--runs 5] [--published epoch] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Issue 16's anchor: Pearce & Song's numpy script, figures included, in a fresh process (s).
ANCHOR_SECONDS = 3.5


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(spec: str, cache: Path, out: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one ``python -m jaxscale reconcile`` in a fresh
    process. On a shared machine the CPU time is the steadier of the two."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAXSCALE_CACHE_DIR": str(cache)}
    env.pop("JAXSCALE_NO_CACHE", None)
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "jaxscale", "reconcile", "--published", spec, "--out", str(out)],
                          env=env, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"jaxscale reconcile failed:\n{proc.stderr}")
    return seconds, _children_cpu() - cpu


def measure(runs: int, spec: str) -> dict[str, dict[str, list[float]]]:
    """Wall and CPU seconds of ``runs`` cold and ``runs`` warm runs, alternating."""
    times: dict[str, dict[str, list[float]]] = {case: {"wall": [], "cpu": []} for case in ("cold", "warm")}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        warm_cache = tmp / "warm"
        run_once(spec, warm_cache, tmp / "figures")  # fills the warm cache; not timed
        for i in range(runs):
            for case, cache in (("cold", tmp / f"cold{i}"), ("warm", warm_cache)):
                wall, cpu = run_once(spec, cache, tmp / "figures")
                times[case]["wall"].append(wall)
                times[case]["cpu"].append(cpu)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (default: %(default)s)")
    parser.add_argument("--published", choices=("epoch", "chinchilla"), default="epoch")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")

    compileall.compile_dir(REPO / "jaxscale", quiet=1)
    load_before = os.getloadavg()
    times = measure(args.runs, args.published)
    result = {
        "published": args.published,
        "runs": args.runs,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "cpu_count": os.cpu_count(),
        "anchor_seconds": ANCHOR_SECONDS,
        **{case: {"seconds": t["wall"], "min": min(t["wall"]), "median": statistics.median(t["wall"]),
                  "cpu_seconds": t["cpu"], "cpu_min": min(t["cpu"]), "cpu_median": statistics.median(t["cpu"]),
                  "anchor_over_median": ANCHOR_SECONDS / statistics.median(t["wall"])}
           for case, t in times.items()},
    }
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    print(f"jaxscale reconcile --published {args.published}, fresh process, figures included, {args.runs} runs each "
          f"({result['cpu_count']} CPUs, load average {load_before[0]:.2f} before, "
          f"{result['load_average_after'][0]:.2f} after)")
    for case in ("cold", "warm"):
        r = result[case]
        runs = ", ".join(f"{s:.2f}" for s in r["seconds"])
        print(f"  {case} XLA cache: wall min {r['min']:.2f} s, median {r['median']:.2f} s  ({runs}); "
              f"CPU min {r['cpu_min']:.2f} s, median {r['cpu_median']:.2f} s; "
              f"anchor/median {r['anchor_over_median']:.2f}x")
    print(f"  anchor (issue 16, Pearce & Song's numpy script with figures; not run here): {ANCHOR_SECONDS:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
