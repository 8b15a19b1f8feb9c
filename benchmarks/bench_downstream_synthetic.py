"""Synthetic ladders from known laws of accuracy: are the parameters recovered, and do the 90%
intervals of held-out rungs cover as often as they say?

DECLARED RULES. Written and committed before the first run (the commit order in the repository
is the proof); a result that misses the goal is reported as it is.

- Ladders: :func:`jaxscale.accuracy.synthetic_ladder.draw_ladder`, seeds :data:`SEEDS` = 0-49
  for each truth, chance 0.25, 2,000 questions per evaluation, the ladder 70M-1B fitted, 1.4B
  and 2.8B held out (each model's 15 checkpoints, the intermediate loss with a 1% error).
- Truths and forms: the two-step truth fitted by the two-step form; the direct truth fitted by
  the direct form (:mod:`jaxscale.accuracy.forecast`), each with :data:`RESAMPLES` = 200
  bootstrap resamples, seed = the ladder's seed.
- Coverage: the 90% predictive interval (the law's draws plus the evaluation's binomial noise)
  of each held-out rung's *measured* final accuracy (a new evaluation, as on real data): 100
  intervals per truth. Goal (issue 38): 85-95% for each truth.
- Recovery: each parameter's median over the seeds against its true value (relative error), and
  the share of seeds whose 95% bootstrap interval of the parameter holds the truth. The direct
  truth's parameters are recovered from the finished runs only (four points, two parameters).

    PYTHONPATH=. python benchmarks/bench_downstream_synthetic.py [--seeds 50] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

from jaxscale.accuracy import synthetic_ladder as sl
from jaxscale.accuracy.forecast import forecast
from jaxscale.accuracy.two_step import TwoStepFit
from jaxscale.core.intervals import interval

SEEDS = 50
RESAMPLES = 200


def _truths(form: str) -> dict[str, float]:
    t = sl.TWO_STEP_TRUTH
    if form == "two-step":
        return {"stage1.A": t["A"], "stage1.alpha": t["alpha"], "stage2.k": t["k"], "stage2.B": t["B"]}
    return {"A": sl.DIRECT_TRUTH["A"], "alpha": sl.DIRECT_TRUTH["alpha"]}


def _estimates(fit, draws: bool) -> dict[str, np.ndarray]:
    if isinstance(fit, TwoStepFit):
        parts = {"stage1": fit.stage1, "stage2": fit.stage2}
        return {f"{name}.{field}": np.asarray(getattr(w.draws if draws else w.params, field))
                for name, w in parts.items() for field in (w.draws if draws else w.params)._fields}
    params = fit.draws if draws else fit.params
    return {field: np.asarray(getattr(params, field)) for field in params._fields}


def run(seeds: int) -> dict:
    out = {}
    for form in ("two-step", "direct"):
        covered, total, estimates, inside = 0, 0, {k: [] for k in _truths(form)}, {k: 0 for k in _truths(form)}
        for seed in range(seeds):
            ladder = sl.draw_ladder(seed, form=form)
            frame = ladder.frame
            finals = frame[(frame["task"] == sl.TASK) & (frame["step"] == frame.groupby("model")["step"].transform("max"))]
            fitted = frame[frame["n_params"] <= max(sl.LADDER)]
            for n in sl.HELD_OUT:
                f = forecast(fitted, sl.TASK, (n, sl.TOKENS), form=form, chance=ladder.chance,
                             intermediate=sl.INTERMEDIATE, resamples=RESAMPLES, seed=seed)
                measured = float(finals[finals["n_params"] == n]["value"].iloc[0])
                covered += int(f.predictive[0] <= measured <= f.predictive[1])
                total += 1
            point, draws = _estimates(f.fit, False), _estimates(f.fit, True)
            for name, true in _truths(form).items():
                estimates[name].append(float(point[name]))
                lo, hi = interval(draws[name], 0.95)
                inside[name] += int(lo <= true <= hi)
        out[form] = {
            "coverage": covered / total, "intervals": total, "goal": [0.85, 0.95],
            "met": bool(0.85 <= covered / total <= 0.95),
            "recovery": {name: {"true": true, "median": float(np.median(estimates[name])),
                                "relative_error": float(np.median(estimates[name]) / true - 1),
                                "covered95": inside[name] / seeds} for name, true in _truths(form).items()}}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = run(args.seeds)
    result["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for form in ("two-step", "direct"):
        r = result[form]
        print(f"{form}: 90% predictive coverage {r['coverage']:.0%} of {r['intervals']} held-out rungs "
              f"(goal 85-95%: {'met' if r['met'] else 'NOT met'})")
        for name, rec in r["recovery"].items():
            print(f"  {name:14s} true {rec['true']:.4g}, median {rec['median']:.4g} ({rec['relative_error']:+.1%}), "
                  f"95% interval holds it in {rec['covered95']:.0%} of seeds")
    print(f"{result['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
