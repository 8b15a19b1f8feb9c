"""Whether a table of runs can determine a law's parameters: enough runs, and runs that tell the
law's two inputs apart.

A law of model size and data, such as Chinchilla's L = E + A N^(-alpha) + B D^(-beta)
(Hoffmann et al. 2022, Eq. 2), splits the loss between its two inputs with a free exponent for
each. Runs that all lie on one line in (log N, log D), D = c N^k (one tokens-per-parameter ratio
when k = 1), never show how the loss changes when D moves at fixed N, nor how it trades N for D
at a fixed budget: that split, and with it the exponents, the scales and any compute-optimal
allocation, would come from the law's form alone, not from the runs. For Chinchilla's law not
even the form decides it: along the line the law reads

    E + A N^(-alpha) + B c^(-beta) N^(-k beta),

the same curve after (A, alpha) and (B c^(-beta), k beta) trade places, with beta' = alpha / k
and B' = A c^(alpha / k), so a fit returns whichever of the two optima (or a point between, once
noise is added) its starts reach. :attr:`jaxscale.laws.law.Law.needs_independent_inputs` says
which laws are held to this (all of N and D; not the annealing law of one run's schedule).

The table's spread across its line is the RMS distance of its points from their principal
axis in (log10 x1, log10 x2), in decades (:func:`spread_across_line`). A table whose spread
is at most :data:`ROUNDING_SPREAD` is a one-line design: see there.
"""

from __future__ import annotations

import numpy as np
from jax.typing import ArrayLike

from jaxscale.laws.law import Law
from jaxscale.runs.table import RunsTable

#: Decades. A table of runs at one tokens-per-parameter ratio whose sizes or token counts are
#: written to two significant digits ("1.4B", "28B") lies off its line by rounding alone, by up to
#: log10(1.05) = 0.021 decades, so a spread up to this is read as one line. Declared before
#: looking at any fit; the real designs in ``../shared/data`` spread 0.23 decades (the
#: (Mis)Fitting table's last checkpoints) to 0.49 (an isoFLOP table), ten times more.
ROUNDING_SPREAD = 0.02


def spread_across_line(x1: ArrayLike, x2: ArrayLike) -> float:
    """RMS distance, in decades, of the points (log10 x1, log10 x2) from their principal axis:
    the smaller singular value of the centred points over sqrt(n). 0 for points on one line."""
    centred = _centred_logs(x1, x2)
    return float(np.linalg.svd(centred, compute_uv=False)[-1] / np.sqrt(len(centred)))


def check_runs(law: Law, runs: RunsTable) -> None:
    """Refuse a table with fewer runs than ``law`` has parameters, or whose first two inputs lie
    on one line (module docstring) when the law needs them to vary independently, naming the
    line and what would mend the table; refuse a law of an optimal hyperparameter (not a loss)."""
    if law.quantity != "loss":
        raise ValueError(f"the {law.name} law gives the optimal {law.quantity}, not a loss: fit it with `jaxscale hparams`")
    if len(runs) < law.n_params:
        raise ValueError(f"{len(runs)} runs but the {law.name} law has {law.n_params} parameters")
    if not law.needs_independent_inputs:
        return
    x1, x2 = runs.law_inputs(law.inputs)[:2]
    spread = spread_across_line(x1, x2)
    if spread > ROUNDING_SPREAD:
        return
    name1, name2 = law.inputs[:2]
    raise ValueError(
        f"the {len(x1)} runs lie on one line in (log {name1}, log {name2}): {_line(x1, x2, name1, name2)}, "
        f"{spread:.3f} decades off it (RMS; up to {ROUNDING_SPREAD} counts as one line). They never vary "
        f"{name2} at fixed {name1}, so the {law.name} law's split between the two, its exponents, its scales and "
        f"any compute-optimal allocation are undetermined by them; add runs at other {name2}/{name1} ratios "
        "(e.g. an isoFLOP sweep)"
    )


def _centred_logs(x1: ArrayLike, x2: ArrayLike) -> np.ndarray:
    points = np.column_stack([np.log10(np.asarray(x1, np.float64)), np.log10(np.asarray(x2, np.float64))])
    return points - points.mean(0)


def _line(x1: ArrayLike, x2: ArrayLike, name1: str, name2: str) -> str:
    """The principal axis in words: one value of an input, or x2 ∝ x1^k."""
    axis = np.linalg.svd(_centred_logs(x1, x2))[2][0]
    if abs(axis[0]) < ROUNDING_SPREAD * abs(axis[1]):
        return f"all at {name1} ≈ {np.median(x1):.3g}"
    if abs(axis[1]) < ROUNDING_SPREAD * abs(axis[0]):
        return f"all at {name2} ≈ {np.median(x2):.3g}"
    return f"{name2} ∝ {name1}^{axis[1] / axis[0]:.2f}"
