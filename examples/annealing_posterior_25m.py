"""Why the posterior-predictive mean of Tissue et al.'s law predicts a held-out 25M schedule worse
than the law's optimum at the same decay factor (diagnostics of a candidate of
:mod:`jaxscale.curves.held_out_schedules`; :mod:`jaxscale.inference.annealing_posterior`).

For each source of rates and each of the three fitted runs of ``examples/multipower_25m.py`` held
out, the law at lambda 0.999 given the other two: its optimum (the rule's candidate 0.999) and its
posterior (the candidate ``posterior mean (lambda 0.999)``, the same sampler and seed as in the
rule, so the same draws). Printed: each one's mean |relative error| on the two runs it was given
and on the run held out, the posterior's own 90% intervals' coverage of the held-out run, the
posterior medians of the residuals' sigma and lag-1 correlation rho, and each chain's mean of
alpha and rho (where R-hat is large, whether the chains sit in different modes).

Run: python examples/annealing_posterior_25m.py   (six posteriors: about two minutes on two
shared cores; ../shared/data beside the clone)
"""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pandas as pd

from jaxscale.curves import lr_annealing_fit
from jaxscale.inference import annealing_posterior, curve_posterior

EXAMPLE = runpy.run_path(str(Path(__file__).resolve().parent / "multipower_25m.py"))


def mean_error(frame: pd.DataFrame) -> float:
    """Mean |Lhat / L - 1| over the rows."""
    return float((frame["predicted"] / frame["loss"] - 1).abs().mean())


def held_out(table, rates: dict, held: str) -> str:
    """One line: the optimum against the posterior given the fitted runs but ``held``."""
    others = [r for r in EXAMPLE["FITTED"] if r != held]
    optimum = lr_annealing_fit.fit_group(table, rates, others, [*others, held], decay=annealing_posterior.DECAY,
                                         skip_warmups=0).predictions
    posterior, _ = annealing_posterior.sample_posterior(table, rates, others)
    given = annealing_posterior.predictive(posterior, table, rates, others)
    judged = annealing_posterior.predictive(posterior, table, rates, [held])
    chains = curve_posterior.CONFIG.chains
    alpha = posterior.theta[:, annealing_posterior.LAW.vector_names.index("alpha")].reshape(chains, -1).mean(axis=1)
    rho = posterior.rho.reshape(chains, -1).mean(axis=1)
    return (f"  {held} held out: optimum {mean_error(optimum[optimum['run_id'] != held]):.3%} on the runs given, "
            f"{mean_error(optimum[optimum['run_id'] == held]):.3%} held out; posterior mean "
            f"{mean_error(given):.3%} given, {mean_error(judged):.3%} held out, its 90% intervals cover "
            f"{curve_posterior.posterior_coverage(judged):.1%}; sigma {np.median(posterior.sigma):.2e}, "
            f"rho {np.median(posterior.rho):.3f}; largest R-hat {posterior.summary()['max_r_hat']:.3f}; by chain, "
            f"alpha {', '.join(f'{a:.3f}' for a in alpha)} and rho {', '.join(f'{r:.3f}' for r in rho)}")


def main() -> None:
    table, lrs = EXAMPLE["curves"]()
    for source, rates in (("schedule", lrs), ("recorded", EXAMPLE["recorded"](table))):
        print(f"rates from the {source}:")
        for held in EXAMPLE["FITTED"]:
            print(held_out(table, rates, held))


if __name__ == "__main__":
    main()
