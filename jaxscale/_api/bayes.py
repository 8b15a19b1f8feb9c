"""``bayes``: the posterior of a law given runs (NUTS or Laplace); ``bayes_grouped``: of a law per
dataset with coordinates shared; ``loo``: models ranked by PSIS-LOO."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from jaxscale._api._results import Figures, Result, bounds, rows
from jaxscale._api.runs import Runs, as_runs
from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law
from jaxscale.tables.table import RunsTable

#: Budgets (FLOP) between which the N*(C) and loss bands are drawn.
BAND_BUDGETS = (1e18, 1e27)


def _names(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """Names given as a sequence or as comma-separated text."""
    if value is None:
        return None
    return tuple(v.strip() for v in (value.split(",") if isinstance(value, str) else value) if v.strip())


@dataclass(frozen=True, repr=False)
class Posterior(Result):
    """The posterior of one law given runs (:mod:`jaxscale.inference.refit`).

    Attributes:
        fit: the draws (NUTS with its InferenceData and diagnostics, or Laplace).
        runs: the runs sampled on (without any held out).
        reconciled: Pearce & Song's reconciled exponent of every draw (Chinchilla law; else None).
        holdout: errors and predictive coverage on held-out runs, or None.
        seed: the seed of the sampler and of the predictive draws.
        seconds: the verb's wall time.
        identifiability: what the runs determine, at the Approach-3 optimum the chains start
            from, with the posterior's correlations and intervals
            (:mod:`jaxscale.determinacy.identifiability`).
    """

    fit: Any  # jaxscale.inference.refit.BayesFit
    runs: RunsTable
    reconciled: Any  # jaxscale.inference.refit.Reconciled | None
    holdout: dict[str, Any] | None
    seed: int
    seconds: float
    identifiability: Any = None  # jaxscale.determinacy.identifiability.Identifiability

    @property
    def law(self) -> Law:
        return self.fit.law

    @property
    def draws(self) -> Draws:
        """The law's parameters of every draw."""
        return self.fit.parameter_draws

    @property
    def params(self) -> Any:
        """The posterior median of every parameter, the law's NamedTuple."""
        return self.draws.median()

    def _report(self) -> dict[str, Any]:
        from jaxscale.inference.refit import report

        numbers = {**report(self.fit, self.runs, self.reconciled), "drop_highest": self.runs.dropped_highest}
        if self.holdout is not None:
            numbers["holdout"] = self.holdout
        if self.identifiability is not None:
            numbers["identifiability"] = self.identifiability.to_dict()
        return {**numbers, "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """Each parameter and derived quantity (posterior mean, 95% HDI, SD, R-hat, bulk ESS), the
        noise scale sigma and the reconciled exponents (posterior median, 95% HDI)."""
        numbers = self._numbers
        entries = [{"quantity": name, "estimate": s["mean"], **bounds(s["hdi95"]), "sd": s["sd"], "r_hat": s["r_hat"],
                    "ess_bulk": s["ess_bulk"]} for name, s in numbers["posterior"].items()]
        for key in ("sigma", "reconciled_exponent", "total_exponent"):
            if numbers.get(key) is not None:
                entries.append({"quantity": key, "estimate": numbers[key]["median"], **bounds(numbers[key]["hdi95"])})
        return rows(entries)

    def plot(self) -> Figures:
        """``corner`` (the parameters' joint posterior), ``optimal_bands`` (N*(C), D*(C) and the
        loss there, for a law of (N, D)) and ``reconciled_exponent`` (where there is one)."""
        from jaxscale.optimum.allocation import optimal_allocation
        from jaxscale.plots import bayes as plots

        scales = [f for f, log in zip(self.law.param_names, self.law.log_scale) if log and f != "E"]
        figures = Figures(corner=plots.corner_figure(self.fit.draws, names=self.law.param_names, log_scale=scales,
                                                     law=self.law.name))
        if self.law.inputs == ("N", "D"):
            bands = optimal_allocation(self.law, self.fit.params, np.logspace(*np.log10(BAND_BUDGETS), 40))
            figures["optimal_bands"] = plots.optimal_bands_figure(bands)
        if self.reconciled is not None:
            figures["reconciled_exponent"] = plots.reconciled_exponent_figure(self.reconciled.exponents)
        return figures

    def _data_files(self, directory: Path) -> list[Path]:
        from jaxscale.inference.diagnostics import save_netcdf

        return [] if self.fit.idata is None else [Path(save_netcdf(self.fit.idata, directory / "posterior.nc"))]

    def _title(self) -> str:
        return f"Posterior ({self.fit.method}): {self.law.name} law on {len(self.runs)} runs"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        return _posterior_text(numbers)


def _predictive_figures(fits: Mapping[str, Any], runs: RunsTable, seed: int) -> Figures:
    """A posterior predictive figure per fit (90% intervals of every run's loss)."""
    from jaxscale.inference.diagnostics import posterior_predictive
    from jaxscale.plots.bayes import predictive_figure

    figures = Figures()
    for name, fit in fits.items():
        params, sigma = fit.row_params()
        replicas = np.exp(posterior_predictive(fit.law, params, sigma, fit.df, runs.law_inputs(fit.law.inputs), seed))
        lo, median, hi = np.quantile(replicas, [0.05, 0.5, 0.95], axis=0)
        figures[f"predictive_{_slug(name)}"] = predictive_figure(runs.loss, median, lo, hi, name)
    return figures


def _slug(name: str) -> str:
    return name.replace(" ", "_").replace(",", "-")


def _grouped_netcdf(fits: Mapping[str, Any], directory: Path) -> list[Path]:
    """The InferenceData (netCDF) of every grouped fit."""
    from jaxscale.inference.diagnostics import save_netcdf
    from jaxscale.inference.grouped import GroupedFit

    return [Path(save_netcdf(fit.idata, directory / f"posterior_{_slug(name)}.nc"))
            for name, fit in fits.items() if isinstance(fit, GroupedFit)]


@dataclass(frozen=True, repr=False)
class GroupedPosterior(Result):
    """One law fitted to several datasets at once, some coordinates shared
    (:mod:`jaxscale.inference.grouped`): the posterior and the differences between datasets.

    Attributes:
        fit: the grouped draws.
        runs: the runs, every dataset together.
        group_by: the column naming each run's dataset.
        seed: the seed of the predictive draws.
        seconds: the verb's wall time.
    """

    fit: Any  # jaxscale.inference.grouped.GroupedFit
    runs: RunsTable
    group_by: str
    seed: int
    seconds: float

    def _report(self) -> dict[str, Any]:
        from jaxscale.inference.grouped import report

        return {**report(self.fit), "group_by": self.group_by, "n_points": len(self.runs),
                "drop_highest": self.runs.dropped_highest, "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """Each coordinate and derived quantity (posterior mean, 95% HDI), then each difference
        between datasets (posterior median, 95% HDI, P(> 0))."""
        numbers = self._numbers
        entries = [{"quantity": name, "estimate": s["mean"], **bounds(s["hdi95"]), "sd": s["sd"], "r_hat": s["r_hat"]}
                   for name, s in numbers["posterior"].items()]
        entries += [{"quantity": f"{name}: {pair}", "estimate": d["median"], **bounds(d["hdi95"]),
                     "p_positive": d["p_positive"]}
                    for name, pairs in numbers["differences"].items() for pair, d in pairs.items()]
        return rows(entries)

    def _fits(self) -> dict[str, Any]:
        return {f"share {','.join(self.fit.shared) or 'none'}": self.fit}

    def plot(self) -> Figures:
        """The posterior predictive check, ``predictive_share_...``."""
        return _predictive_figures(self._fits(), self.runs, self.seed)

    def _data_files(self, directory: Path) -> list[Path]:
        return _grouped_netcdf(self._fits(), directory)

    def _title(self) -> str:
        return (f"GroupedPosterior: {self.fit.law.name} law by {self.group_by} ({', '.join(self.fit.labels)}), "
                f"shared: {', '.join(self.fit.shared) or 'nothing'}")

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        return _grouped_text(numbers)


@dataclass(frozen=True, repr=False)
class LooComparison(Result):
    """Models ranked by PSIS-LOO (:mod:`jaxscale.inference.law_ranking`): several laws on the same
    runs, or (``group_by`` given) a grouped law sharing coordinates against one sharing nothing.

    Attributes:
        comparison: every model's posterior and ArviZ's ranking.
        runs: the runs.
        group_by: the dataset column of a comparison of sharing, else None.
        seed: the seed of the predictive draws.
        seconds: the verb's wall time.
    """

    comparison: Any  # jaxscale.inference.law_ranking.Comparison
    runs: RunsTable
    group_by: str | None
    seed: int
    seconds: float

    def _report(self) -> dict[str, Any]:
        if self.group_by is None:
            from jaxscale.inference.law_ranking import report

            return {"n_points": len(self.runs), **report(self.comparison), "seconds": self.seconds}
        from jaxscale.inference.grouped import sharing_report

        return {**sharing_report(self.comparison), "group_by": self.group_by, "n_points": len(self.runs),
                "drop_highest": self.runs.dropped_highest, "seconds": self.seconds}

    def summary(self) -> pd.DataFrame:
        """One row per model, best first: elpd_loo with its standard error as the estimate and
        estimate -/+ 1.96 se as the bounds, the difference to the best and ArviZ's weight."""
        ranking = self._numbers["ranking"]
        return rows({"quantity": name, "estimate": r["elpd_loo"], "lower": r["elpd_loo"] - 1.96 * r["se"],
                     "upper": r["elpd_loo"] + 1.96 * r["se"], "elpd_diff": r["elpd_diff"], "weight": r["weight"],
                     "pareto_k_max": r["pareto_k_max"]} for name, r in ranking.items())

    def plot(self) -> Figures:
        """A posterior predictive check per model, ``predictive_NAME``."""
        return _predictive_figures(self.comparison.fits, self.runs, self.seed)

    def _data_files(self, directory: Path) -> list[Path]:
        return _grouped_netcdf(self.comparison.fits, directory)

    def _title(self) -> str:
        return f"LooComparison of {', '.join(self.comparison.fits)} on {len(self.runs)} runs"

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        return _comparison_text(numbers) if self.group_by is None else _sharing_text(numbers)


def _nuts(chains: int, warmup: int, samples: int, seed: int, target_accept: float, progress: bool) -> Any:
    """The NUTS settings of a verb's keywords."""
    from jaxscale.inference.sample import NutsConfig

    return NutsConfig(chains=chains, warmup=warmup, samples=samples, seed=seed, target_accept=target_accept,
                      progress_bar=progress)


def bayes(runs: Runs, law: str | Law = "chinchilla", *, chains: int = 4, warmup: int = 1000, samples: int = 1000,
          seed: int = 0, target_accept: float = 0.8, laplace: bool = False, progress: bool = False,
          gamma_uncertainty: bool = False, table_embedding: bool = False, holdout: float | None = None,
          holdout_by: str = "n") -> Posterior:
    """The posterior of a scaling law given runs: Student-t likelihood on log loss, the law's
    documented priors, NUTS from the Approach-3 optimum (or the Laplace approximation), with
    convergence diagnostics, posterior predictive checks and, for the Chinchilla law, Pearce &
    Song's reconciled (Kaplan-basis) exponent of every draw. One law for several datasets is
    :func:`bayes_grouped`; laws ranked by PSIS-LOO, :func:`loo`.

    Args:
        runs: a :class:`~jaxscale.tables.table.RunsTable` (:func:`jaxscale.load_runs`), a CSV path
            or a DataFrame.
        law: any name of :func:`jaxscale.laws.names` or a :class:`~jaxscale.laws.Law`.
        chains, warmup, samples: NUTS chains, warmup steps and draws per chain.
        seed: the sampler's seed (and the Laplace draws', the predictive draws').
        target_accept: NUTS' target acceptance rate.
        laplace: the Laplace approximation at the posterior mode instead of NUTS (fast).
        progress: show NumPyro's progress bars.
        gamma_uncertainty: draw Eq. 7's (gamma, delta) from a bootstrap of the Table A9 fit for
            the reconciled exponent, instead of the paper's gamma = 47491, delta = 1/3.
        table_embedding: the reconciled exponent from the runs' own gamma, delta and size range
            (both parameter bases needed).
        holdout: sample on the runs with N (or C, ``holdout_by="c"``) below this only, and report
            the errors and predictive coverage on the rest.
        holdout_by: ``"n"`` or ``"c"``.

    Returns:
        A :class:`Posterior`.
    """
    from jaxscale.laws.registry import law_by_name

    start = time.perf_counter()
    law = law_by_name(law)
    config = _nuts(chains, warmup, samples, seed, target_accept, progress)
    if gamma_uncertainty and table_embedding:
        raise ValueError("gamma_uncertainty (Table A9 bootstrap) and table_embedding exclude each other")
    if gamma_uncertainty or table_embedding:
        law.require_chinchilla("the reconciled exponent")
    return _posterior(as_runs(runs), law, config, laplace, gamma_uncertainty, table_embedding, holdout, holdout_by,
                      start)


def bayes_grouped(runs: Runs, group_by: str, law: str | Law = "chinchilla", *, share: str | Sequence[str] | None = None,
                  chains: int = 4, warmup: int = 1000, samples: int = 1000, seed: int = 0,
                  target_accept: float = 0.8, progress: bool = False) -> GroupedPosterior:
    """The posterior of one law fitted to several datasets at once by NUTS, the ``share``
    coordinates common to every dataset, the rest (and the noise) each dataset's own, and the
    posterior of the differences between datasets (:mod:`jaxscale.inference.grouped`).

    Args:
        runs: a :class:`~jaxscale.tables.table.RunsTable`, a CSV path or a DataFrame.
        group_by: the column naming each run's dataset.
        law: any name of :func:`jaxscale.laws.names` or a :class:`~jaxscale.laws.Law`.
        share: the shared coordinates of the law's vector, e.g. ``("alpha", "beta")`` or
            ``"alpha,beta"`` (default: the law's exponents).
        chains, warmup, samples, seed, target_accept, progress: as for :func:`bayes`.

    Returns:
        A :class:`GroupedPosterior`.
    """
    from jaxscale.inference import grouped
    from jaxscale.laws.registry import law_by_name

    start = time.perf_counter()
    law = law_by_name(law)
    config = _nuts(chains, warmup, samples, seed, target_accept, progress)
    table = as_runs(runs, grouped_by=group_by)
    shared = _shared(table, group_by, share, law)
    fit = grouped.sample_grouped(table, group_by, shared, law, config)
    return GroupedPosterior(fit, table, group_by, config.seed, time.perf_counter() - start)


def loo(runs: Runs, laws: str | Sequence[str] | None = None, *, group_by: str | None = None,
        share: str | Sequence[str] | None = None, law: str | Law = "chinchilla", chains: int = 4,
        warmup: int = 1000, samples: int = 1000, seed: int = 0, target_accept: float = 0.8,
        progress: bool = False) -> LooComparison:
    """Models sampled by NUTS on the same runs and ranked by PSIS-LOO (ArviZ's comparison, with
    Pareto-k diagnostics): several laws (``laws``), or, with ``group_by``, the grouped ``law``
    sharing the ``share`` coordinates against the same law sharing nothing.

    Args:
        runs: a :class:`~jaxscale.tables.table.RunsTable`, a CSV path or a DataFrame.
        laws: the laws to rank, e.g. ``("chinchilla", "kaplan")`` or ``"chinchilla,kaplan"``.
        group_by: instead of ``laws``, the column naming each run's dataset.
        share: with ``group_by``, the shared coordinates (default: the law's exponents).
        law: with ``group_by``, the law (any name of :func:`jaxscale.laws.names` or a
            :class:`~jaxscale.laws.Law`).
        chains, warmup, samples, seed, target_accept, progress: as for :func:`bayes`.

    Returns:
        A :class:`LooComparison`.
    """
    from jaxscale.laws.registry import law_by_name

    start = time.perf_counter()
    names = _names(laws)
    if (names is None) == (group_by is None):
        raise ValueError("loo ranks laws or, with group_by, sharing: give one of them")
    if share is not None and group_by is None:
        raise ValueError("share needs group_by")
    config = _nuts(chains, warmup, samples, seed, target_accept, progress)
    table = as_runs(runs, grouped_by=group_by)
    if names is not None:
        from jaxscale.inference.law_ranking import compare_laws

        comparison = compare_laws(table, [law_by_name(name) for name in names], config)
        return LooComparison(comparison, table, None, seed, time.perf_counter() - start)
    from jaxscale.inference import grouped

    chosen = law_by_name(law)
    comparison = grouped.compare_sharing(table, group_by, _shared(table, group_by, share, chosen), chosen, config)
    return LooComparison(comparison, table, group_by, seed, time.perf_counter() - start)


def _shared(table: RunsTable, group_by: str, share: str | Sequence[str] | None, law: Law) -> tuple[str, ...]:
    """The coordinates shared between the datasets of ``group_by`` (default: the law's exponents),
    checked with the column before any sampling."""
    from jaxscale.inference import grouped

    shared = law.exponent_names if share is None else _names(share)
    grouped.split(table, group_by, shared, law)  # a bad column or coordinate: an error before sampling
    return shared


def _posterior(table: RunsTable, law: Law, config: Any, laplace: bool, gamma_uncertainty: bool,
               table_embedding: bool, holdout: float | None, holdout_by: str, start: float) -> Posterior:
    from jaxscale.fitting.approach3 import fit_approach3
    from jaxscale.inference import refit

    heldout = None
    if holdout is not None:
        from jaxscale.fitting.holdout import split

        table, heldout = split(table, holdout, holdout_by)
    if table_embedding:
        from jaxscale.reconciliation.on_runs import model_sizes

        model_sizes(table)  # both bases and three sizes, or an error before sampling
    point = fit_approach3(table, law=law)  # the chains' start and the identifiability's optimum: fitted once
    begin = refit.start_at(point)
    if laplace:
        fit = refit.approximate_posterior(table, law, seed=config.seed, start=begin)
    else:
        fit = refit.sample_posterior(table, law, config, start=begin)
    reconciled = None
    if law.chinchilla_undefined is None:
        reconciled = refit.reconciled_exponent_draws(fit.parameter_draws, gamma_uncertainty, config.seed,
                                                     table=table if table_embedding else None)
    held = None
    if heldout is not None:
        held = {"by": holdout_by, "threshold": holdout,
                **refit.holdout_calibration(fit, table, heldout, holdout_by, config.seed)}
    from jaxscale._api.fit import identified

    ident = identified(point, fit.parameter_draws)
    return Posterior(fit, table, reconciled, held, config.seed, time.perf_counter() - start, ident)


def _number(x: float | None) -> str:
    return "—" if x is None else f"{x:.4g}"


def _posterior_table(posterior: dict[str, Any], width: int) -> list[str]:
    """Each coordinate's mean, SD, 95% HDI, R-hat and bulk ESS, names ``width`` wide."""
    lines = [f"{'':{width}} {'mean':>10} {'sd':>10} {'95% HDI':>23} {'R-hat':>7} {'ESS bulk':>9}"]
    for name, s in posterior.items():
        hdi = f"[{_number(s['hdi95'][0])}, {_number(s['hdi95'][1])}]"
        lines.append(f"{name:{width}} {_number(s['mean']):>10} {_number(s['sd']):>10} {hdi:>23} "
                     f"{_number(s['r_hat']):>7} {_number(s['ess_bulk']):>9}")
    return lines


def _differences_text(differences: dict[str, Any], title: str) -> list[str]:
    lines = ["", title, f"{'':8} {'groups':<38} {'median':>9} {'95% HDI':>21} {'P(>0)':>6}"]
    for name, pairs in differences.items():
        for pair, d in pairs.items():
            hdi = f"[{d['hdi95'][0]:+.4f}, {d['hdi95'][1]:+.4f}]"
            lines.append(f"{name:8} {pair:<38} {d['median']:>+9.4f} {hdi:>21} {d['p_positive']:>6.3f}")
    return lines


def _checks_text(problems: list[str]) -> str:
    """One line on the convergence checks: each failed one was warned on stderr as sampling
    ended (and is listed under "problems" in the JSON), not repeated here."""
    return "convergence checks: " + (f"{len(problems)} failed, each warned on stderr" if problems else "all passed")


def _files_and_total(numbers: dict[str, Any]) -> list[str]:
    return [*(f"wrote {f}" for f in numbers.get("files", [])), "", f"total {numbers['seconds']:.1f} s"]


def _ranking_text(numbers: dict[str, Any]) -> list[str]:
    lines = [f"{'model':<22} {'elpd_loo':>10} {'se':>7} {'elpd_diff':>10} {'dse':>7} {'p_loo':>7} {'weight':>7}"
             f" {'k max':>6} {'k>' + str(numbers['pareto_k_threshold']):>6} {'div.':>5} {'R-hat':>6}"]
    for name, r in numbers["ranking"].items():
        lines.append(f"{name:<22} {r['elpd_loo']:>10.1f} {r['se']:>7.1f} {r['elpd_diff']:>10.1f} {r['dse']:>7.1f} "
                     f"{r['p_loo']:>7.1f} {r['weight']:>7.2f} {r['pareto_k_max']:>6.2f} {r['pareto_k_above']:>6} "
                     f"{r['divergences']:>5} {_number(r['r_hat_max']):>6}")
    return lines


def _posterior_text(numbers: dict[str, Any]) -> list[str]:
    """The text of a posterior: the coordinates, the reconciled exponents, the held-out runs, the
    predictive check, the sampler's diagnostics and the identifiability."""
    from jaxscale.determinacy.identifiability import identifiability_text

    lines = [f"Bayesian refit ({numbers['method']}) of the {numbers['law']} law on "
             f"{numbers['n_points']} runs (dropped the {numbers['drop_highest']} highest-loss)", "",
             *_posterior_table(numbers["posterior"], 8)]
    if "reconciled_exponent_undefined" in numbers:
        lines += ["", f"reconciled exponent: {numbers['reconciled_exponent_undefined']}"]
    elif "reconciled_exponent" in numbers:
        lines.append("")
        for key, label in (("reconciled_exponent", "Kaplan-basis exponent N*_\\E ∝ C_\\E^g"),
                           ("total_exponent", "total-basis exponent N*_T ∝ C_T^a")):
            r = numbers[key]
            lines.append(f"{label}: median {r['median']:.4f}, 95% HDI [{r['hdi95'][0]:.4f}, {r['hdi95'][1]:.4f}]")
        lines.append(f"  (gamma: {numbers['embedding']}; Pearce & Song report 0.78 Epoch / 0.74 Chinchilla; Kaplan 0.73)")
    if "holdout" in numbers:
        h = numbers["holdout"]
        coverage = ", ".join(f"{level} interval covers {v:.1%} ({h['coverage_without_extrapolation_term'][level]:.1%} "
                             "without the extrapolation term)" for level, v in h["coverage"].items())
        lines += ["", f"held out {h['n_heldout']} runs with {h['by'].upper()} >= {h['threshold']:g}: MAE "
                  f"{h['mae_nats']:.4f} nats, mean signed error {h['mean_signed_error_nats']:+.4f}; {coverage}"]
    ppc = numbers["predictive_check"]
    lines += ["", f"posterior predictive: median |log residual| {ppc['residual_median_abs']:.4f}, "
              f"{ppc['level']:.0%} interval covers {ppc['coverage']:.1%} of runs"]
    if "divergences" in numbers:
        lines.append(f"divergences: {numbers['divergences']}, E-BFMI: " + ", ".join(f"{v:.2f}" for v in numbers["bfmi"]))
        lines.append(_checks_text(numbers["problems"]))
    if "identifiability" in numbers:
        lines += identifiability_text(numbers["identifiability"])
    lines += [f"wrote {f}" for f in numbers.get("files", [])]
    return [*lines, "", f"sampler {numbers['sampler_seconds']:.1f} s, total {numbers['seconds']:.1f} s"]


def _grouped_text(numbers: dict[str, Any]) -> list[str]:
    """The text of a grouped posterior: the coordinates, the differences between groups, the
    sampler's diagnostics."""
    return [f"Bayesian refit (NUTS) of the {numbers['law']} law on {numbers['n_points']} runs in "
            f"{len(numbers['groups'])} groups by {numbers['group_by']} "
            + ", ".join(f"{g} ({k})" for g, k in numbers["runs_per_group"].items())
            + f"; shared: {', '.join(numbers['shared']) or 'nothing'}", "",
            *_posterior_table(numbers["posterior"], 28),
            *_differences_text(numbers["differences"], "differences between groups (first minus second)"),
            "", f"divergences: {numbers['divergences']}, largest R-hat {_number(numbers['r_hat_max'])}, E-BFMI: "
            + ", ".join(f"{v:.2f}" for v in numbers["bfmi"]),
            _checks_text(numbers["problems"]), f"sampler {numbers['sampler_seconds']:.1f} s",
            *_files_and_total(numbers)]


def _sharing_text(numbers: dict[str, Any]) -> list[str]:
    """The text of a comparison of sharing: the two models ranked, and the differences between
    groups in the model that shares nothing."""
    return [f"Do the groups by {numbers['group_by']} ({', '.join(numbers['groups'])}) share "
            f"{', '.join(numbers['shared'])}? Models ranked by PSIS-LOO on {numbers['n_points']} runs", "",
            *_ranking_text(numbers),
            *_differences_text(numbers["differences_unshared"],
                               "in the model that shares nothing, differences between groups (first minus second)"),
            *_files_and_total(numbers)]


def _comparison_text(numbers: dict[str, Any]) -> list[str]:
    """The text of laws ranked by PSIS-LOO."""
    return [f"Laws ranked by PSIS-LOO on {numbers['n_points']} runs (higher elpd predicts left-out runs better)", "",
            *_ranking_text(numbers), *_files_and_total(numbers)]
