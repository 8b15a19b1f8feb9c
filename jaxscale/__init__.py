"""jaxscale: scaling laws in JAX. Fit them to your runs with intervals, sample their posterior,
ask what drives their conclusions, reconcile Kaplan with Chinchilla, plan a run.

    >>> import jaxscale as js
    >>> runs = js.load_runs("runs.csv", drop_highest=5)   # a CSV or DataFrame of (N, D, loss)
    >>> fitted = js.fit(runs, law="chinchilla", bootstrap=1000)
    >>> fitted.summary()                                   # a DataFrame: estimate, 95% interval
    >>> posterior = js.bayes(runs, chains=4)               # NUTS, or laplace=True
    >>> js.sensitivity(fitted).summary()                   # elasticities, delta method, influence
    >>> js.allocate(fitted, compute=1e24)                  # N*(C), D*(C) with bands
    >>> js.design(runs, target="N*:1e24", budget=1e22)     # which runs to train next
    >>> js.compare("baseline.csv", "new.csv", compute=1e22)  # compute multiplier, with intervals
    >>> js.published_hparams("deepseek", compute=1e24)    # eta*, B* of a planned run

Verbs: :func:`load_runs`, :func:`fit` (Approach 3), :func:`frontier` (Approaches 1 and 2),
:func:`bayes`, :func:`bayes_grouped` (one law for several datasets), :func:`loo` (models ranked
by PSIS-LOO), :func:`sensitivity`, :func:`reconcile`, :func:`allocate`,
:func:`allocate_data_constrained` (with limited unique tokens), :func:`design` (which runs next),
:func:`compare` (compute multipliers between recipes), :func:`hparams` (optimal learning rate and
batch size fitted to grids), :func:`published_hparams` (a published law's), :func:`schedule` (the
learning-rate schedule a multi-power law ends lowest with), :func:`model_params` (parameter counts
and FLOPs per token of a configuration); :mod:`laws` (``laws.names()``, ``laws.get(name)``). Each
verb returns one type of result, with ``.summary()`` (a DataFrame), ``.to_dict()`` (the JSON
``jaxscale COMMAND --json`` prints), ``.plot()`` (matplotlib Figures) and ``.save(directory)``.
Types: :data:`Runs` (what the verbs take as runs), :class:`RunsTable`, :class:`Law`, :class:`Draws`
(bootstrap refits and posterior draws alike), :class:`Fitted` (what a fitted law's result offers
:func:`allocate` and :func:`sensitivity`) and the results.

Laws, solvers, fits and inference run in float64 (:mod:`jaxscale.core.numerics`), training in
float32/bfloat16. Importing jaxscale loads nothing heavy: each name loads on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: Every public name and the module that defines it (loaded on first access, PEP 562).
_WHERE = {
    "load_runs": "jaxscale._api.runs", "fit": "jaxscale._api.fit", "frontier": "jaxscale._api.fit",
    "bayes": "jaxscale._api.bayes", "bayes_grouped": "jaxscale._api.bayes", "loo": "jaxscale._api.bayes",
    "sensitivity": "jaxscale._api.sensitivity", "reconcile": "jaxscale._api.reconcile",
    "allocate": "jaxscale._api.allocate", "allocate_data_constrained": "jaxscale._api.allocate",
    "design": "jaxscale._api.design", "compare": "jaxscale._api.compare",
    "hparams": "jaxscale._api.hparams", "published_hparams": "jaxscale._api.hparams",
    "schedule": "jaxscale._api.schedule", "model_params": "jaxscale._api.params",
    "laws": "jaxscale.laws",
    "Runs": "jaxscale._api.runs", "RunsTable": "jaxscale.runs.table", "Law": "jaxscale.laws.law", "Draws": "jaxscale.laws.draws",
    "Fitted": "jaxscale._api.fitted",
    "FitReport": "jaxscale._api.fit", "FrontierReport": "jaxscale._api.fit", "Posterior": "jaxscale._api.bayes",
    "GroupedPosterior": "jaxscale._api.bayes", "LooComparison": "jaxscale._api.bayes",
    "SensitivityReport": "jaxscale._api.sensitivity", "ReconcileReport": "jaxscale._api.reconcile",
    "Allocation": "jaxscale._api.allocate", "DataConstrainedAllocation": "jaxscale._api.allocate",
    "DesignReport": "jaxscale._api.design", "CompareReport": "jaxscale._api.compare",
    "HparamsReport": "jaxscale._api.hparams", "PublishedHparams": "jaxscale._api.hparams",
    "ScheduleReport": "jaxscale._api.schedule", "ModelParams": "jaxscale._api.params",
}

__all__ = ["__version__", *_WHERE]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'jaxscale' has no attribute {name!r}")
    module = importlib.import_module(_WHERE[name])
    value = module if name == "laws" else getattr(module, name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
