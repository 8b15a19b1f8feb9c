"""Big runs from small ones on Epoch AI's runs: the nested rule's holdout, and why the small-run fit errs.

Data: ``../shared/data/chinchilla_svg_extracted_data.csv`` less its 5 highest-loss runs (Epoch's
rule): 240 runs, the 118 below 10^9 parameters fitted, the 122 at or above predicted.

1. **The holdout** of ``jaxscale fit ... --drop-highest 5 --holdout-threshold 1e9 --holdout-rule nested``
   (:func:`jaxscale.fitting.nested_extrapolation.nested_holdout`, whose docstring declares the rule):
   the candidate chosen, its MAE and mean signed error in nats, the coverage of its 50/80/90%
   predictive intervals, and Approach 3 as published beside it.
2. **Diagnostics** of the signed error (Lhat - L, nats; negative: the fit under-predicts):

   - by tokens per parameter D/N (bins :data:`RATIO_BINS`), for Approach 3 fitted below each
     nested threshold and judged up to 10^9 (the rule's own splits), for the fit below 10^9
     judged on the 122 runs above, and for the fit of all 240 runs on the same 122;
   - the law's three terms E, A/N^alpha, B/D^beta of the fit below 10^9 minus those of the fit
     of all runs, averaged over the fitted and over the predicted runs (the split of the loss
     among its terms that the small runs leave to trade-offs);
   - the embedding's share of the parameters, N_E / N_T, on the fitted and the predicted runs;
   - the floor: the MAE on the 122 runs of the law fitted to those 122 runs themselves (no
     extrapolation at all), by Chinchilla's form and by Kaplan's Eq. 1.5 with a floor
     (:mod:`jaxscale.laws.kaplan_irreducible`): what no rule of extrapolation from small runs can be
     expected to beat.

These diagnostics read the runs held out; they explain an error and choose nothing.

    python benchmarks/bench_extrapolation.py [--resamples 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from jaxscale.fitting.approach3 import FitResult, fit_approach3
from jaxscale.fitting.holdout import split
from jaxscale.fitting.nested_extrapolation import inner_thresholds, nested_holdout, with_nonembedding
from jaxscale import load_runs
from jaxscale.laws import kaplan_irreducible
from jaxscale.tables.table import RunsTable

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "chinchilla_svg_extracted_data.csv"
THRESHOLD = 1e9
RATIO_BINS = (0.0, 10.0, 30.0, 100.0, np.inf)
RATIO_BINS_TEXT = [f"D/N {lo:g}-{hi:g}" for lo, hi in zip(RATIO_BINS[:-1], RATIO_BINS[1:])]


def signed_by_ratio(fit: FitResult, runs: RunsTable) -> dict[str, Any]:
    """Mean signed and absolute error of ``fit`` on ``runs``, and the signed in each D/N bin (count, mean)."""
    error = fit.predict(runs.n, runs.d) - runs.loss
    ratio = runs.d / runs.n
    bins = {}
    for lo, hi in zip(RATIO_BINS[:-1], RATIO_BINS[1:]):
        inside = (ratio >= lo) & (ratio < hi)
        bins[f"{lo:g}-{hi:g}"] = [int(inside.sum()), float(error[inside].mean()) if inside.any() else None]
    return {"runs": len(runs), "signed": float(error.mean()), "mae": float(np.abs(error).mean()), "by_ratio": bins}


def term_shift(small: FitResult, every: FitResult, runs: RunsTable) -> dict[str, float]:
    """The mean over ``runs`` of each term of the Chinchilla law under ``small`` minus under ``every``."""
    def terms(fit: FitResult) -> np.ndarray:
        A, B, E, alpha, beta = (float(v) for v in fit.params)
        return np.stack([np.full(len(runs), E), A * runs.n**-alpha, B * runs.d**-beta])
    shift = (terms(small) - terms(every)).mean(axis=1)
    return {"E": float(shift[0]), "A/N^alpha": float(shift[1]), "B/D^beta": float(shift[2])}


def diagnostics(runs: RunsTable) -> dict[str, Any]:
    """Item 2 of the module docstring."""
    small, large = split(runs, THRESHOLD, "n")
    out: dict[str, Any] = {"nested": {}}
    for t in inner_thresholds(small, "n"):
        lower, upper = split(small, t, "n")
        out["nested"][f"{t:.3g}"] = signed_by_ratio(fit_approach3(lower), upper)
    fit_small, fit_all = fit_approach3(small), fit_approach3(runs)
    out["below_1e9_on_large"] = signed_by_ratio(fit_small, large)
    out["all_runs_on_large"] = signed_by_ratio(fit_all, large)
    out["large_on_large"] = signed_by_ratio(fit_approach3(large), large)
    out["large_on_large_kaplan_floor"] = signed_by_ratio(fit_approach3(large, law=kaplan_irreducible.LAW), large)
    out["fitted_by_ratio"] = {k: v[0] for k, v in signed_by_ratio(fit_small, small)["by_ratio"].items()}
    out["term_shift_fitted"] = term_shift(fit_small, fit_all, small)
    out["term_shift_large"] = term_shift(fit_small, fit_all, large)
    share = lambda t: 1.0 - t.n_nonembedding / t.n  # noqa: E731
    out["embedding_share"] = {"fitted": [float(share(small).min()), float(share(small).max())],
                              "large": [float(share(large).min()), float(share(large).max())]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"{DATA} not present (a clone without ../shared/data)", file=sys.stderr)
        return 2
    runs = with_nonembedding(load_runs(DATA, drop_highest=5))
    t0 = time.perf_counter()
    held = nested_holdout(runs, THRESHOLD, resamples=args.resamples).summary()
    out = {"load_average": os.getloadavg(), "holdout": held, "holdout_seconds": time.perf_counter() - t0,
           "diagnostics": diagnostics(runs)}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"load average {out['load_average'][0]:.1f}; holdout {out['holdout_seconds']:.0f} s")
    print(f"rule: {held['rule']}\n  MAE {held['mae_nats']:.4f} nats, signed {held['mean_signed_error_nats']:+.4f}, "
          f"coverage {held['coverage']}; Approach 3: MAE {held['approach3_mae_nats']:.4f}, "
          f"signed {held['approach3_mean_signed_error_nats']:+.4f}")
    for name, mae in held["nested_mae_nats"].items():
        print(f"  nested MAE {np.mean(mae):.4f} {[round(m, 4) for m in mae]}  {name}")
    d = out["diagnostics"]
    rows = [(f"below {k} -> up to 1e9", v) for k, v in d["nested"].items()]
    rows += [("below 1e9 -> the 122 above", d["below_1e9_on_large"]), ("all 240 -> the 122 above", d["all_runs_on_large"]),
             ("the 122 -> themselves", d["large_on_large"]),
             ("the 122 -> themselves, Kaplan+E", d["large_on_large_kaplan_floor"])]
    print("MAE, signed error, and signed error by D/N (runs: mean nats)  " + "  ".join(RATIO_BINS_TEXT))
    for name, r in rows:
        cells = "  ".join(f"{n:3d}: {'-' if m is None else f'{m:+.4f}'}" for n, m in r["by_ratio"].values())
        print(f"  {name:32s} {r['mae']:.4f} {r['signed']:+.4f}  {cells}")
    print(f"fitted runs by D/N: {d['fitted_by_ratio']}")
    print(f"terms, fit below 1e9 minus fit of all runs: on the fitted runs {d['term_shift_fitted']}, "
          f"on the large {d['term_shift_large']}")
    print(f"embedding share N_E/N_T: {d['embedding_share']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
