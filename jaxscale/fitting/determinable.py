"""What a table of runs can determine of a law's parameters, decided before the fit: the design
rule, and the warnings for tables that are valid but implausible.

**The design rule** (:func:`check_runs`, at the start of every Approach-3 fit, and so of the
bootstrap, the sensitivity study and the Bayesian fit, which start from one; declared before
any result was looked at). A law such as Chinchilla's L = E + A N^(-alpha) + B D^(-beta)
(Hoffmann et al. 2022, Eq. 2) has, along each input that carries a scale and an exponent
(:attr:`jaxscale.laws.law.Law.exponent_inputs`: N and D here), a term A x^(-alpha) that must be
told apart from the rest of the loss (the constant E, the other terms). A fit is refused, with
one line saying what is missing and what would mend it, when

1. the runs are not more than the law's parameters (:attr:`~jaxscale.laws.law.Law.n_params`):
   with as many runs as parameters (5 for Chinchilla) a law of this flexibility passes through
   every run, there are zero degrees of freedom, and nothing measures the error of the fit or of
   any interval;
2. an input that carries an exponent takes fewer than :data:`MIN_DISTINCT` distinct values (3):
   along that input the law has three unknowns of its own (the scale, the exponent and the level
   the other terms set), and two values give two equations, so any exponent fits them; with a
   noisy table the fit still lands somewhere (alpha = 2.4 on two model sizes generated from
   alpha = 0.34), which is worse than none. Values closer than :data:`ROUNDING_SPREAD` decades
   count as one (the rounding of a published "1.4B");
3. such an input spans less than the law's :attr:`~jaxscale.laws.law.Law.min_decades` between
   its smallest and largest value (:data:`jaxscale.laws.law.MIN_DECADES`, half a decade, unless
   the law says otherwise: see there);
4. the law needs its first two inputs to vary independently and the runs lie on one line in
   (log x1, log x2) (below).

Beyond the design, a fit whose optimum leaves a parameter undetermined (an exponent <= 0, a
scale run off to infinity, a singular curvature) reports that parameter and everything derived
from it as undefined (:mod:`jaxscale.determinacy.identifiability`).

**Runs on one line.** Runs that all lie on one line in (log N, log D), D = c N^k (one
tokens-per-parameter ratio when k = 1), never show how the loss changes when D moves at fixed N,
nor how it trades N for D at a fixed budget: that split, and with it the exponents, the scales
and any compute-optimal allocation, would come from the law's form alone, not from the runs.
For Chinchilla's law not even the form decides it: along the line the law reads

    E + A N^(-alpha) + B c^(-beta) N^(-k beta),

the same curve after (A, alpha) and (B c^(-beta), k beta) trade places, with beta' = alpha / k
and B' = A c^(alpha / k), so a fit returns whichever of the two optima (or a point between, once
noise is added) its starts reach. :attr:`jaxscale.laws.law.Law.needs_independent_inputs` says
which laws are held to this (all of N and D; not the annealing law of one run's schedule).
The table's spread across its line is the RMS distance of its points from their principal
axis in (log10 x1, log10 x2), in decades (:func:`spread_across_line`). A table whose spread
is at most :data:`ROUNDING_SPREAD` is a one-line design: see there.

**Stray runs** are refused too: a run whose input lies more than :data:`STRAY_DECADES` decades
from every other run's (:func:`stray_rows`; N = 1e-300 among sizes of 1e8-1e10, a typo or
another unit) is a data error, and one such run decides the fit alone (it pulled a = 0.999 out
of a table generated with a = 0.45).

**Plausibility warnings** (:func:`warn_implausible`, :class:`~jaxscale.core.validation.PlausibilityWarning`;
the fit goes on): D < N on more than half of the runs of a law of N and D (swapped columns?
Scaling studies train on 1-1000 tokens per parameter; fewer than one on most runs is no
design we know: 4% of Epoch AI's Chinchilla runs, 6% of the isoFLOP table's, 2% of the
(Mis)Fitting table's); a loss more than :data:`LOSS_STRAY_DECADES` decade from the others (a
run in another unit); losses above 20 nats per token are flagged when the table is read
(:data:`jaxscale.tables.table.MAX_PLAUSIBLE_LOSS`); more than :data:`MAX_TOKENS_PER_PARAMETER`
tokens per parameter on most runs (N in millions or billions: D in billions trips the swapped
columns' warning, N in billions this one).

**A loss that rises with scale** is refused (:func:`check_falls_with_scale`): a least-squares
plane through log loss over (log N, log D) whose slopes are both >= 0 describes no scaling law
(a table of accuracies, or the loss column mislabelled), and a fit of it returns negative
exponents (alpha = -5.4, beta = -0.017 on such a table) and an allocation that means nothing.
Runs on one line have no such plane (its slopes along the line's normal are not determined):
they are left to rule 4.
"""

from __future__ import annotations

import warnings

import numpy as np
from jax.typing import ArrayLike

from jaxscale.support.plausibility import PlausibilityWarning
from jaxscale.laws.downstream_accuracy import QUANTITY as ACCURACY
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Decades. A table of runs at one tokens-per-parameter ratio whose sizes or token counts are
#: written to two significant digits ("1.4B", "28B") lies off its line by rounding alone, by up to
#: log10(1.05) = 0.021 decades, so a spread up to this is read as one line. Declared before
#: looking at any fit; the real designs in ``../shared/data`` spread 0.23 decades (the
#: (Mis)Fitting table's last checkpoints) to 0.49 (an isoFLOP table), ten times more.
ROUNDING_SPREAD = 0.02
#: Distinct values each input that carries an exponent needs (module docstring, rule 2).
MIN_DISTINCT = 3
#: Decades beyond which a run's input is a stray (module docstring): a gap of a thousandfold
#: between one run and all others. The widest gap between neighbouring sizes or token counts in
#: the tables of ``../shared/data`` is far below a decade.
STRAY_DECADES = 3.0
#: A loss this many decades (tenfold) from every other run's is flagged (module docstring).
LOSS_STRAY_DECADES = 1.0
#: Runs with D < N, as a fraction of all, above which the columns look swapped (module docstring).
SWAPPED_FRACTION = 0.5
#: Tokens per parameter above which, on most runs, N looks given in another unit (module
#: docstring). The tables of ``../shared/data`` reach 4.3e3 (Pythia 70M on 300B tokens); Llama 3
#: 8B trained on 1.9e3; declared at 230 times the highest seen.
MAX_TOKENS_PER_PARAMETER = 1e6


def spread_across_line(x1: ArrayLike, x2: ArrayLike) -> float:
    """RMS distance, in decades, of the points (log10 x1, log10 x2) from their principal axis:
    the smaller singular value of the centred points over sqrt(n). 0 for points on one line."""
    centred = _centred_logs(x1, x2)
    return float(np.linalg.svd(centred, compute_uv=False)[-1] / np.sqrt(len(centred)))


def distinct_values(x: ArrayLike, limit: int | None = None) -> np.ndarray:
    """The distinct values of ``x``, smallest first: a value within :data:`ROUNDING_SPREAD`
    decades above the last one kept counts as that one. At most ``limit`` are found (all by default)."""
    logs = np.sort(np.log10(np.asarray(x, np.float64)))
    kept: list[float] = []
    i = 0
    while i < len(logs) and (limit is None or len(kept) < limit):
        kept.append(logs[i])
        i = int(np.searchsorted(logs, logs[i] + ROUNDING_SPREAD, side="right"))
    return 10.0 ** np.asarray(kept)


def stray_rows(x: ArrayLike, decades: float = STRAY_DECADES) -> np.ndarray:
    """Rows of ``x`` cut off from the others by a gap of more than ``decades`` in log10 x: of the
    two sides of every such gap in the sorted values, the rows of the side with fewer rows."""
    logs = np.log10(np.asarray(x, np.float64))
    order = np.argsort(logs, kind="stable")
    stray = np.zeros(len(logs), bool)
    for gap in np.flatnonzero(np.diff(logs[order]) > decades):
        below = gap + 1
        stray[order[:below] if below <= len(logs) - below else order[below:]] = True
    return np.flatnonzero(stray)


def check_runs(law: Law, runs: RunsTable) -> None:
    """Refuse (ValueError, one line saying what is missing) a table of runs from which ``law``'s
    parameters cannot be determined, by the design rule of the module docstring; refuse a law of
    an optimal hyperparameter or of accuracy (not a loss); warn on an implausible table (:func:`warn_implausible`)."""
    if law.quantity == ACCURACY:
        raise ValueError(f"the {law.name} law gives a task's {law.quantity}, not a loss: fit it with `jaxscale downstream`")
    if law.quantity != "loss":
        raise ValueError(f"the {law.name} law gives the optimal {law.quantity}, not a loss: fit it with `jaxscale hparams`")
    if len(runs) <= law.n_params:
        raise ValueError(
            f"{len(runs)} runs for the {law.name} law's {law.n_params} parameters: "
            f"{'no degrees of freedom' if len(runs) == law.n_params else 'fewer runs than parameters'}: the law can "
            f"pass through every run and nothing measures its error; add runs (at least {law.n_params + 1})")
    inputs = runs.law_inputs(law.inputs)
    for name in law.exponent_inputs:
        _check_input(law, name, inputs[law.inputs.index(name)], runs)
    check_falls_with_scale(law, runs)
    warn_implausible(law, runs)
    if not law.needs_independent_inputs:
        return
    x1, x2 = inputs[:2]
    spread = spread_across_line(x1, x2)
    if spread > ROUNDING_SPREAD:
        return
    name1, name2 = law.inputs[:2]
    raise ValueError(
        f"the {len(x1)} runs lie on one line in (log {name1}, log {name2}): {_line(x1, x2, name1, name2)}, "
        f"{spread:.3f} decades off it (RMS; up to {ROUNDING_SPREAD} counts as one line). They never vary "
        f"{name2} at fixed {name1}, so the {law.name} law's split between the two, its exponents, its scales and "
        f"any compute-optimal allocation are undetermined by them; "
        + (f"add runs at other compute budgets (these share one: 6 {name1} {name2} ≈ {6 * np.median(x1 * x2):.3g})"
           if np.std(np.log10(x1 * x2)) <= ROUNDING_SPREAD else
           f"add runs at other {name2}/{name1} ratios (e.g. an isoFLOP sweep)")
    )


def _terms_of(law: Law, index: int) -> str:
    """The parameters of the term of the law's input ``index``, in words (its centred scale and
    exponent where the law names them, else its exponents)."""
    names = [f"{slope} and {intercept.removeprefix('log_')}" for intercept, slope, k in law.centred if k == index]
    exponents = law.exponent_names
    return names[0] if names else f"exponent{'s' if len(exponents) > 1 else ''} {', '.join(exponents)}"


def _check_input(law: Law, name: str, values: np.ndarray, runs: RunsTable) -> None:
    """Rule 2, 3 and the stray runs of the module docstring for one input of the law."""
    stray = stray_rows(values)
    if len(stray):
        i = int(stray[0])
        others = np.delete(values, stray)
        raise ValueError(
            f"row {i + 1}: {name} = {values[i]:.3g} lies more than {STRAY_DECADES:g} decades from every other run's "
            f"({others.min():.3g} .. {others.max():.3g}){_also(stray)}: a typo or another unit? Fix or drop the row")
    distinct = distinct_values(values, MIN_DISTINCT)
    terms = _terms_of(law, law.inputs.index(name))
    if len(distinct) < MIN_DISTINCT:
        listed = ", ".join(f"{v:.3g}" for v in distinct)
        raise ValueError(
            f"{len(distinct)} distinct value{'s' if len(distinct) > 1 else ''} of {name} ({listed}) in {len(runs)} "
            f"runs: the {law.name} law's {terms} cannot be separated from its other terms (two values fit any "
            f"exponent); add runs so that {name} takes at least {MIN_DISTINCT} distinct values over at least "
            f"{law.min_decades:g} decades")
    span = float(np.log10(values.max() / values.min()))
    if span < law.min_decades:
        raise ValueError(
            f"{name} spans {span:.2f} decades ({values.min():.3g} .. {values.max():.3g}): over less than "
            f"{law.min_decades:g} the {law.name} law's {terms} cannot be told apart from its other terms; add runs "
            f"that widen the range of {name}")


def check_falls_with_scale(law: Law, runs: RunsTable) -> None:
    """Refuse a table whose loss rises (or stays flat) along both N and D (module docstring): the
    slopes of the least-squares plane log L = c + s_N log N + s_D log D, both >= 0. Laws of other
    inputs are not judged, nor runs on one line in (log N, log D) (one isoFLOP budget, one
    tokens-per-parameter ratio): no plane through them has determined slopes (rule 4 judges them)."""
    if law.inputs[:2] not in (("N", "D"), ("N_nonembedding", "D")):
        return
    n, d = runs.law_inputs(law.inputs)[:2]
    if spread_across_line(n, d) <= ROUNDING_SPREAD:
        return
    design = np.column_stack([np.ones(len(n)), np.log(n), np.log(d)])
    slopes = np.linalg.lstsq(design, np.log(runs.loss), rcond=None)[0][1:]
    if np.all(slopes >= 0):
        raise ValueError(
            f"the loss rises with scale: log loss grows by {slopes[0]:.3g} per e-fold of {law.inputs[0]} and "
            f"{slopes[1]:.3g} per e-fold of D (least squares over the {len(n)} runs), where a scaling law falls "
            "along both; is the loss column an accuracy, or are columns mislabelled?")


def _also(stray: np.ndarray) -> str:
    return "" if len(stray) == 1 else f" (and {len(stray) - 1} more such rows)"


def warn_implausible(law: Law, runs: RunsTable) -> None:
    """The plausibility warnings of the module docstring (:class:`PlausibilityWarning`)."""
    if law.inputs[:2] in (("N", "D"), ("N_nonembedding", "D")):
        below = runs.d < runs.n
        if below.mean() > SWAPPED_FRACTION:
            warnings.warn(
                f"D < N on {int(below.sum())} of {len(runs)} runs (median {np.median(runs.d / runs.n):.3g} tokens "
                "per parameter): are the columns of N and D swapped?", PlausibilityWarning, stacklevel=3)
        ratio = float(np.median(runs.d / runs.n))
        if ratio > MAX_TOKENS_PER_PARAMETER:
            warnings.warn(
                f"{ratio:.3g} tokens per parameter on the median run (N {runs.n.min():.3g} .. {runs.n.max():.3g}): "
                "is N given in millions or billions? Give it as a count of parameters", PlausibilityWarning,
                stacklevel=3)
    stray = stray_rows(runs.loss, LOSS_STRAY_DECADES)
    if len(stray):
        i = int(stray[0])
        warnings.warn(
            f"row {i + 1}: loss {runs.loss[i]:.4g} is more than tenfold from every other run's "
            f"({np.median(np.delete(runs.loss, stray)):.4g} median){_also(stray)}: another unit?",
            PlausibilityWarning, stacklevel=3)


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
