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

Verbs: :func:`load_runs`, :func:`fit` (Approach 3), :func:`frontier` (Approaches 1 and 2), :func:`isoflop` (per-budget optima by declared rules),
:func:`bayes`, :func:`bayes_grouped` (one law for several datasets), :func:`loo` (models ranked
by PSIS-LOO), :func:`sensitivity`, :func:`reconcile`, :func:`allocate`,
:func:`allocate_data_constrained` (with limited unique tokens), :func:`design` (which runs next),
:func:`compare` (compute multipliers between recipes), :func:`hparams` (optimal learning rate and
batch size fitted to grids), :func:`published_hparams` (a published law's), :func:`schedule` (the
learning-rate schedule a multi-power law ends lowest with), :func:`model_params` (parameter counts
and FLOPs per token of a configuration), :func:`curve` (laws of whole learning curves, predicting
other schedules), :func:`runs` (what a source of runs holds, and its tidy table: ``jaxscale runs``),
:func:`downstream` (a benchmark's accuracy at a larger model, from a ladder's evaluations);
the training wings' :func:`sweep` (train a family of transformers and fit their exponents; ``[lm]``)
and :func:`sweep_status`, :func:`train_word2vec`, :func:`score_vectors`, :func:`query_vectors` and
:func:`word2vec_scaling` (``[word2vec]``);
:mod:`laws` (``laws.names()``, ``laws.get(name)``). Each verb returns one type of result, with
``.summary()`` (a DataFrame), ``.to_dict()`` (the JSON ``jaxscale COMMAND --json`` prints),
``.plot()`` (matplotlib Figures) and ``.save(directory)``. Types: :data:`Runs` (what the verbs take
as runs), :class:`RunsTable`, :class:`Law`, :class:`Draws` (bootstrap refits and posterior draws
alike), :class:`Fitted` (what a fitted law's result offers :func:`allocate` and
:func:`sensitivity`) and the results.

Laws, solvers, fits and inference run in float64 (:mod:`jaxscale.core.numerics`), training in
float32/bfloat16. Importing jaxscale loads nothing heavy: each name loads on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "curve": "jaxscale._api.curve", "runs": "jaxscale._api.runs_report", "isoflop": "jaxscale._api.isoflop",
    "downstream": "jaxscale._api.downstream",
    "sweep": "jaxscale._api.sweep", "sweep_status": "jaxscale._api.sweep",
    "train_word2vec": "jaxscale._api.word2vec", "score_vectors": "jaxscale._api.word2vec",
    "query_vectors": "jaxscale._api.word2vec", "word2vec_scaling": "jaxscale._api.word2vec",
    "laws": "jaxscale.laws",
    "Runs": "jaxscale._api.runs", "RunsTable": "jaxscale.tables.table", "Law": "jaxscale.laws.law", "Draws": "jaxscale.laws.draws",
    "Fitted": "jaxscale._api.fitted",
    "FitReport": "jaxscale._api.fit", "FrontierReport": "jaxscale._api.fit", "Posterior": "jaxscale._api.bayes",
    "GroupedPosterior": "jaxscale._api.bayes", "LooComparison": "jaxscale._api.bayes",
    "SensitivityReport": "jaxscale._api.sensitivity", "ReconcileReport": "jaxscale._api.reconcile",
    "Allocation": "jaxscale._api.allocate", "DataConstrainedAllocation": "jaxscale._api.allocate",
    "DesignReport": "jaxscale._api.design", "CompareReport": "jaxscale._api.compare",
    "HparamsReport": "jaxscale._api.hparams", "PublishedHparams": "jaxscale._api.hparams",
    "ScheduleReport": "jaxscale._api.schedule", "ModelParams": "jaxscale._api.params",
    "CurveReport": "jaxscale._api.curve", "RunsReport": "jaxscale._api.runs_report",
    "IsoflopReport": "jaxscale._api.isoflop",
    "DownstreamReport": "jaxscale._api.downstream",
    "SweepReport": "jaxscale._api.sweep", "SweepProgress": "jaxscale._api.sweep",
    "Word2VecTraining": "jaxscale._api.word2vec", "VectorScores": "jaxscale._api.word2vec",
    "Neighbours": "jaxscale._api.word2vec", "Word2VecScaling": "jaxscale._api.word2vec",
    "Word2VecDiverged": "jaxscale.word2vec.train",
}

__all__ = ["__version__", *_WHERE]

if TYPE_CHECKING:
    # What type checkers and IDEs see: the same names from the same modules as _WHERE (a test holds
    # the two equal), each re-exported explicitly (``X as X``). Nothing here runs at import time.
    import jaxscale.laws as laws
    from jaxscale._api.allocate import Allocation as Allocation
    from jaxscale._api.allocate import DataConstrainedAllocation as DataConstrainedAllocation
    from jaxscale._api.allocate import allocate as allocate
    from jaxscale._api.allocate import allocate_data_constrained as allocate_data_constrained
    from jaxscale._api.bayes import GroupedPosterior as GroupedPosterior
    from jaxscale._api.bayes import LooComparison as LooComparison
    from jaxscale._api.bayes import Posterior as Posterior
    from jaxscale._api.bayes import bayes as bayes
    from jaxscale._api.bayes import bayes_grouped as bayes_grouped
    from jaxscale._api.bayes import loo as loo
    from jaxscale._api.compare import CompareReport as CompareReport
    from jaxscale._api.compare import compare as compare
    from jaxscale._api.curve import CurveReport as CurveReport
    from jaxscale._api.curve import curve as curve
    from jaxscale._api.design import DesignReport as DesignReport
    from jaxscale._api.downstream import DownstreamReport as DownstreamReport
    from jaxscale._api.downstream import downstream as downstream
    from jaxscale._api.design import design as design
    from jaxscale._api.fit import FitReport as FitReport
    from jaxscale._api.fit import FrontierReport as FrontierReport
    from jaxscale._api.fit import fit as fit
    from jaxscale._api.fit import frontier as frontier
    from jaxscale._api.fitted import Fitted as Fitted
    from jaxscale._api.isoflop import IsoflopReport as IsoflopReport
    from jaxscale._api.isoflop import isoflop as isoflop
    from jaxscale._api.hparams import HparamsReport as HparamsReport
    from jaxscale._api.hparams import PublishedHparams as PublishedHparams
    from jaxscale._api.hparams import hparams as hparams
    from jaxscale._api.hparams import published_hparams as published_hparams
    from jaxscale._api.params import ModelParams as ModelParams
    from jaxscale._api.params import model_params as model_params
    from jaxscale._api.reconcile import ReconcileReport as ReconcileReport
    from jaxscale._api.reconcile import reconcile as reconcile
    from jaxscale._api.runs import Runs as Runs
    from jaxscale._api.runs import load_runs as load_runs
    from jaxscale._api.runs_report import RunsReport as RunsReport
    from jaxscale._api.runs_report import runs as runs
    from jaxscale._api.schedule import ScheduleReport as ScheduleReport
    from jaxscale._api.schedule import schedule as schedule
    from jaxscale._api.sensitivity import SensitivityReport as SensitivityReport
    from jaxscale._api.sensitivity import sensitivity as sensitivity
    from jaxscale._api.sweep import SweepProgress as SweepProgress
    from jaxscale._api.sweep import SweepReport as SweepReport
    from jaxscale._api.sweep import sweep as sweep
    from jaxscale._api.sweep import sweep_status as sweep_status
    from jaxscale._api.word2vec import Neighbours as Neighbours
    from jaxscale._api.word2vec import VectorScores as VectorScores
    from jaxscale._api.word2vec import Word2VecScaling as Word2VecScaling
    from jaxscale._api.word2vec import Word2VecTraining as Word2VecTraining
    from jaxscale._api.word2vec import query_vectors as query_vectors
    from jaxscale._api.word2vec import score_vectors as score_vectors
    from jaxscale._api.word2vec import train_word2vec as train_word2vec
    from jaxscale._api.word2vec import word2vec_scaling as word2vec_scaling
    from jaxscale.laws.draws import Draws as Draws
    from jaxscale.laws.law import Law as Law
    from jaxscale.tables.table import RunsTable as RunsTable
    from jaxscale.word2vec.train import Word2VecDiverged as Word2VecDiverged
else:
    # Hidden from type checkers: a module-level __getattr__ would make every unknown name Any to them.
    def __getattr__(name: str) -> Any:
        if name not in _WHERE:
            raise AttributeError(f"module 'jaxscale' has no attribute {name!r}")
        module = importlib.import_module(_WHERE[name])
        value = module if name == "laws" else getattr(module, name)
        globals()[name] = value  # later lookups skip this function
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
