"""Pearce & Song (2024), Section 3: train a family of transformers and fit the compute frontier.

:func:`run_sweep` trains every run of a :class:`~jaxscale.lm.presets.SweepConfig` (each in
its own directory with checkpoints, so a killed sweep skips finished runs and resumes the
interrupted one), writes the runs table, reads it back through :func:`jaxscale.tables.table.read_runs_table`
and fits Chinchilla's Method 1 (:func:`jaxscale.fitting.approach1.fit_approach1`) on each basis:

    N_opt ∝ C^a,   D_opt = C / (6 N_opt) ∝ C^b,   b = 1 - a      (Pearce & Song, Eqs. 3-4)

with C_T = 6 N_T D against N_T (Chinchilla's basis) and C_\\E = 6 N_\\E D against N_\\E (Kaplan's).
The frontier covers the config's budget range, and only its budgets held by an interior size
(neither the smallest nor the largest trained) are fitted unless the config turns the interior
rule off (docs/sweep_protocol.md); intervals are percentile bootstraps over the fitted budgets.
A frontier with fewer than three sizes gives no exponent. Figures are the caller's:
:mod:`jaxscale.plots.sweep` draws them from :attr:`SweepResult.curves`.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pandas as pd

from jaxscale.core.numerics import float64
from jaxscale.core.power_law import fit_power_law
from jaxscale.fitting.approach1 import (
    FRONTIER_RANGES,
    fit_approach1,
    undefined_exponent,
)
from jaxscale.fitting.frontier_laws import FrontierLaws
from jaxscale.hyperparameters.per_group import centred_rates
from jaxscale.lm import distributed, sharding, tensorboard_logs
from jaxscale.lm import sweep_diagnostics as diagnostics
from jaxscale.lm import train as lm
from jaxscale.lm.presets import ModelSize, SweepConfig, with_corpus
from jaxscale.lm.tokens import TokenBatches, prepare_tokens
from jaxscale.networks.transformer import TransformerConfig
from jaxscale.tables import schema as rs
from jaxscale.tables.table import RunsTable, read_runs_table
from jaxscale.support.atomic import atomic_path, write_manifest, write_text_atomic
from jaxscale.support.progress import progress_bar

CONFIG = "config.json"
RUNS_TABLE = "runs.csv"
TABLE = "table.csv"
SUMMARY = "summary.json"
DIAGNOSTICS = "diagnostics.md"
DIVERGED_FILE = "diverged.json"
TENSORBOARD_DIR = "tensorboard"  # beside the runs table: one directory per run (jaxscale.lm.tensorboard_logs)

#: Pearce & Song (2024), Table 1: (experiment, basis) -> (a, b).
PAPER_TABLE = {
    ("experiment 1", "total"): (0.49, 0.51),
    ("experiment 1", "nonembedding"): (0.74, 0.26),
    ("scheme 1", "total"): (0.58, 0.42),
    ("scheme 2", "total"): (0.49, 0.51),
    ("scheme 3", "total"): (0.46, 0.54),
    ("scheme 4", "total"): (0.49, 0.51),
}


# ----------------------------------------------------------------------------------------------
# Planning runs.


def model_config(cfg: SweepConfig, size: ModelSize, vocab_size: int) -> TransformerConfig:
    return TransformerConfig(
        vocab_size=vocab_size,
        n_ctx=cfg.n_ctx,
        n_layer=size.n_layer,
        d_model=size.d_model,
        n_head=size.n_head,
        positions=cfg.positions,  # type: ignore[arg-type]
        tied=cfg.tied,
        compute_dtype=cfg.compute_dtype,  # type: ignore[arg-type]
    )


def run_id(size: ModelSize, lr: float, kind: str, fraction: float = 1.0) -> str:
    """The name of the run of ``size`` at peak ``lr`` with a ``kind`` schedule over ``fraction`` of its budget."""
    return f"{size.name}_{kind}_x{fraction:g}_lr{lr:g}"


def budget_steps(cfg: SweepConfig, size: ModelSize, vocab_size: int) -> int:
    """The size's update budget (its "1.0 x D"): its own ``steps``, or the steps at which its
    compute C_T = 6 N_T D reaches the sweep's ``compute_budget`` (Pearce & Song Eq. 1), so that
    every size's curve ends at the same C_T and the budgets every size covers reach from the
    largest model's first evaluation to that common end."""
    if size.steps is not None:
        return size.steps
    n_total = lm.run_param_counts(model_config(cfg, size, vocab_size)).total
    return max(2, round(cfg.compute_budget / (6.0 * n_total * cfg.tokens_per_step)))


def constant_steps(cfg: SweepConfig, size: ModelSize, vocab_size: int) -> int:
    """The steps at which the size's C_\\E = 6 N_\\E D reaches ``constant_compute_nonembedding``
    (0 when unset). With equal final C_T, the smallest size (the largest embedding share) ends
    first on the C_\\E axis, and the budgets every size covers on Kaplan's basis end there;
    running the constant (learning-rate grid) runs on to a common C_\\E lets that range reach
    the budgets where the larger sizes take over (docs/sweep_protocol.md, Section 8)."""
    if cfg.constant_compute_nonembedding is None:
        return 0
    n_nonembedding = lm.run_param_counts(model_config(cfg, size, vocab_size)).nonembedding
    return round(cfg.constant_compute_nonembedding / (6.0 * n_nonembedding * cfg.tokens_per_step))


def run_spec(
    cfg: SweepConfig, size: ModelSize, vocab_size: int, lr: float, kind: str, fraction: float = 1.0
) -> lm.RunSpec:
    """The run of ``size`` at peak ``lr`` with a ``kind`` schedule over ``fraction`` of its budget.

    Warmup is ``warmup_fraction`` of the size's full budget for every fraction, so runs of one
    size differ only after warmup. Constant runs last at least :func:`constant_steps`.
    """
    budget = budget_steps(cfg, size, vocab_size)
    steps = max(2, round(budget * fraction))
    if kind == "constant":
        steps = max(steps, constant_steps(cfg, size, vocab_size))
    warmup = cfg.warmup_steps if cfg.warmup_steps is not None else int(cfg.warmup_fraction * budget)
    warmup = min(warmup, steps - 1)
    return lm.RunSpec(
        run_id=run_id(size, lr, kind, fraction),
        model=model_config(cfg, size, vocab_size),
        schedule=lm.Schedule(lr, steps, warmup, kind),  # type: ignore[arg-type]
        batch_size=cfg.batch_size,
        eval_every=cfg.eval_every,
        checkpoint_every=cfg.checkpoint_every,
        val_batches=cfg.val_batches,
        seed=cfg.seed,
        eval_points=cfg.eval_points,
    )


def grid_rates(cfg: SweepConfig, vocab_size: int) -> dict[str, list[float]]:
    """Each size's learning-rate grid: the config's ``learning_rates``, or with ``lr_centre`` those
    scaled so that ``single_lr`` lands on the law's eta*(N_T, D) of the size's 1.0 x budget
    (:func:`jaxscale.hyperparameters.per_group.centred_rates`)."""
    if cfg.lr_centre is None:
        return {s.name: list(cfg.learning_rates) for s in cfg.sizes}
    return {s.name: list(centred_rates(cfg.learning_rates, cfg.single_lr, cfg.lr_centre,
                                       lm.run_param_counts(model_config(cfg, s, vocab_size)).total,
                                       budget_steps(cfg, s, vocab_size) * cfg.tokens_per_step))
            for s in cfg.sizes}


def constant_runs(cfg: SweepConfig, vocab_size: int, rates: dict[str, list[float]]) -> list[lm.RunSpec]:
    """The learning-rate grid: every size at each of its ``rates``, no anneal (schemes 1 and 2)."""
    return [run_spec(cfg, s, vocab_size, lr, "constant") for s in cfg.sizes for lr in rates[s.name]]


def rate_beyond_edge(losses: dict[float, float]) -> float | None:
    """The next rate past the grid edge that holds the lowest final loss of ``losses`` (rate ->
    loss), one grid step (the ratio of the two rates at that edge) further; None when the best
    rate is inside the grid or no run finished."""
    rates = sorted(losses)
    best = min(rates, key=losses.get)
    if len(rates) < 2 or not np.isfinite(losses[best]) or rates[0] < best < rates[-1]:
        return None
    return best * rates[-1] / rates[-2] if best == rates[-1] else best * rates[0] / rates[1]


def cosine_runs(cfg: SweepConfig, size: ModelSize, vocab_size: int, lr: float) -> list[lm.RunSpec]:
    """Scheme 3's run at the budget, plus scheme 4's other budget fractions."""
    fractions = cfg.budget_fractions if 4 in cfg.schemes else (1.0,)
    return [run_spec(cfg, size, vocab_size, lr, "cosine", f) for f in fractions]


# ----------------------------------------------------------------------------------------------
# Running.


def _by_model(specs: list[lm.RunSpec]) -> list[list[lm.RunSpec]]:
    """``specs`` in groups of one model shape each, in order of first appearance."""
    groups: dict[TransformerConfig, list[lm.RunSpec]] = {}
    for spec in specs:
        groups.setdefault(spec.model, []).append(spec)
    return list(groups.values())


def side_by_side(platform: str) -> tuple[bool, int | None]:
    """How a sweep trains on ``platform``: whether the runs of a size go side by side in one
    compiled step, and the vocabulary block of the loss (None: the whole logits).

    On accelerators: side by side, blocked loss (issue 41: a 0.8M-parameter model cannot fill a
    GPU, and the whole logits cost tens of milliseconds per update there). On a CPU: one run at
    a time with the whole logits, because there ``benchmarks/bench_train.py`` measured
    (2026-11-28, docs/benchmarks.md) the three runs of each ``cpu``-preset model side by side at
    0.95-1.11x the tokens/s of the one-update step, below one run in compiled calls (1.10-1.37x).
    Either way the runs are the same to rounding (tests/lm/test_train_together.py).
    """
    if platform == "cpu":
        return False, None
    return True, lm.VOCAB_BLOCK


def _train_groups(specs: list[lm.RunSpec], data: TokenBatches, runs_dir: Path, desc: str, progress: bool,
                  together: bool = True, **kwargs: Any) -> dict[str, pd.DataFrame | None]:
    """Each run's curve, training (or resuming) the runs of each model shape side by side first
    (:func:`jaxscale.lm.train.train_together`; one at a time unless ``together``); None for a
    run that diverged, now or before."""
    curves: dict[str, pd.DataFrame | None] = {}
    groups = _by_model(specs) if together else [[spec] for spec in specs]
    for group in progress_bar(groups, desc=desc, disable=not progress):
        going = [spec for spec in group if not (runs_dir / spec.run_id / DIVERGED_FILE).is_file()]
        curves.update({spec.run_id: None for spec in group})
        if not going:
            continue
        outcomes = lm.train_together(going, data, [runs_dir / spec.run_id for spec in going], progress=progress,
                                     **kwargs)
        for spec, outcome in zip(going, outcomes):
            curves[spec.run_id] = _recorded(spec, outcome, runs_dir)
    return curves


def _recorded(spec: lm.RunSpec, outcome: list[dict[str, str]] | lm.TrainingDiverged, runs_dir: Path
              ) -> pd.DataFrame | None:
    """A run's curve with its TensorBoard log written, or None (its divergence recorded) if it diverged."""
    directory = runs_dir / spec.run_id
    if isinstance(outcome, lm.TrainingDiverged):
        if distributed.is_main_process():
            write_text_atomic(directory / DIVERGED_FILE, json.dumps({"message": str(outcome)}))
        warnings.warn(str(outcome), stacklevel=3)
        return None
    curve = pd.DataFrame(outcome)
    if distributed.is_main_process() and not curve.empty:
        tensorboard_logs.write_run(curve, runs_dir.parent / TENSORBOARD_DIR / spec.run_id)
    return curve


def _final_loss(curve: pd.DataFrame | None) -> float:
    return float("inf") if curve is None or curve.empty else float(curve[rs.LOSS].astype(float).iloc[-1])


def final_losses(cfg: SweepConfig, curves: dict[str, pd.DataFrame | None], rates: dict[str, list[float]]
                 ) -> dict[str, dict[float, float]]:
    """Per size, the final validation loss of its constant run at each of its ``rates`` (inf if diverged)."""
    return {s.name: {lr: _final_loss(curves.get(run_id(s, lr, "constant"))) for lr in rates[s.name]}
            for s in cfg.sizes}


def best_learning_rates(losses: dict[str, dict[float, float]]) -> dict[str, float]:
    """Per size, the rate with the lowest final validation loss (constant schedule); sizes whose
    runs all diverged have none."""
    best = {}
    for size, by_rate in losses.items():
        lr = min(by_rate, key=by_rate.get)
        if np.isfinite(by_rate[lr]):
            best[size] = lr
    return best


@dataclasses.dataclass
class SweepResult:
    """What :func:`run_sweep` returns (``jaxscale sweep`` writes its summary to ``summary.json``)."""

    table: pd.DataFrame
    runs: list[dict[str, Any]]
    runs_table: Path
    curves: RunsTable  # the runs table, as loaded for the fits
    best_lr: dict[str, float]
    wall_time_s: float
    diagnostics: dict[str, Any] = dataclasses.field(default_factory=dict)

    def exponent(self, experiment: str, basis: str) -> float | None:
        """a of ``experiment`` on ``basis``; None if it was not fitted or is undefined."""
        if self.table.empty:
            return None
        row = self.table[(self.table.experiment == experiment) & (self.table.basis == basis)]
        return None if row.empty or pd.isna(row.a.iloc[0]) else float(row.a.iloc[0])

    def summary(self) -> dict[str, Any]:
        return {
            "exponent_total": self.exponent("experiment 1", "total"),
            "exponent_nonembedding": self.exponent("experiment 1", "nonembedding"),
            "table": self.table.to_dict(orient="records"),
            "runs": self.runs,
            "runs_table": str(self.runs_table),
            "best_lr": self.best_lr,
            "diagnostics": self.diagnostics,
            "wall_time_s": self.wall_time_s,
        }


def run_sweep(cfg: SweepConfig, out: str | Path, progress: bool = True, microbatches: int = 1,
              together: bool | None = None) -> SweepResult | None:
    """Train (or resume) every run of ``cfg`` under ``out``, then fit and write the runs table
    and the tables of exponents. Each batch is split over all devices and, on each, computed in
    ``microbatches`` parts one after another (:func:`jaxscale.lm.train.train`: the same runs in
    less memory). The runs of a size train side by side, with the blocked loss, if
    ``together``; by default as :func:`side_by_side` says for the device.

    In a multi-process run (:func:`jaxscale.lm.distributed.initialize` first) every process
    trains, process 0 alone writes files and shows progress, and the others return None after
    training; ``out`` must be a directory all of them see. A config that names no corpus trains
    on :func:`~jaxscale.lm.presets.default_corpus`.
    """
    start = time.perf_counter()
    cfg = with_corpus(cfg)
    mesh = sharding.data_mesh()
    sharding.check_divisible(cfg.batch_size, mesh, microbatches)
    out = Path(out)
    runs_dir = out / "runs"
    main = distributed.is_main_process()
    progress = progress and main
    _check_same_corpus(cfg, out)
    out.mkdir(parents=True, exist_ok=True)
    if main:
        write_text_atomic(out / CONFIG, json.dumps(cfg.to_dict(), indent=1))
    if not main:  # process 0 tokenises (or reads its cache) first, the others then read the cache
        distributed.sync("tokens")
    tokenizer, ids = prepare_tokens(cfg.corpus, out / "data", cfg.vocab_size, cfg.corpus_chars, cfg.tokenizer_file)
    if main:
        distributed.sync("tokens")
    vocab = tokenizer.get_vocab_size()
    data = TokenBatches(ids, cfg.n_ctx, cfg.batch_size)
    default_together, vocab_block = side_by_side(jax.devices()[0].platform)
    together = default_together if together is None else together
    train_kwargs = {
        "together": together,
        "vocab_block": lm.VOCAB_BLOCK if together else vocab_block,
        "mesh": mesh,
        "microbatches": microbatches,
        "peak_flops": lm.matmul_peak_flops(dtype=cfg.compute_dtype) if progress else None,
        "progress": progress,
    }

    curves: dict[str, pd.DataFrame | None] = {}
    rates = grid_rates(cfg, vocab)
    plan = constant_runs(cfg, vocab, rates)
    for extension in range(cfg.lr_extensions + 1):
        desc = f"{cfg.name}: LR grid" + (f" +{extension}" if extension else "")
        curves.update(_train_groups(plan, data, runs_dir, desc, **train_kwargs))
        beyond = {name: rate_beyond_edge(by_rate) for name, by_rate in final_losses(cfg, curves, rates).items()}
        beyond = {name: lr for name, lr in beyond.items() if lr is not None}
        if extension == cfg.lr_extensions or not beyond:
            break
        for name, lr in beyond.items():
            rates[name].append(lr)
        plan = [run_spec(cfg, s, vocab, beyond[s.name], "constant") for s in cfg.sizes if s.name in beyond]
    losses = final_losses(cfg, curves, rates)
    best = best_learning_rates(losses)
    if {3, 4} & set(cfg.schemes):
        annealed = [spec for s in cfg.sizes if s.name in best for spec in cosine_runs(cfg, s, vocab, best[s.name])]
        curves.update(_train_groups(annealed, data, runs_dir, f"{cfg.name}: cosine", **train_kwargs))
    if not main:
        return None

    frame = pd.concat([c for c in curves.values() if c is not None and not c.empty], ignore_index=True)
    runs_table = out / RUNS_TABLE
    with atomic_path(runs_table) as tmp:
        frame.to_csv(tmp, index=False)
    loaded = read_runs_table(runs_table, sizes_vary=False)  # fewer than 3 sizes: each fit says it has no exponent
    fits = {rule: fit_experiments(cfg, loaded, best, rule) for rule in FRONTIER_RANGES}  # each range fitted once
    table = table_of(fits[cfg.frontier_range], cfg.frontier_range)
    with atomic_path(out / TABLE) as tmp:
        table.to_csv(tmp, index=False)
    write_text_atomic(out / "table.md", format_table(table))
    sensitivity = [table_of(fits[rule], rule) for rule in FRONTIER_RANGES]
    write_text_atomic(
        out / "table_frontier_ranges.md", "".join(f"frontier range: {t.frontier_range.iloc[0]}\n\n{format_table(t)}\n" for t in sensitivity if not t.empty)
    )
    sizes = model_sizes(cfg, vocab)
    run_of = {s.name: run_id(s, best[s.name], "constant") for s in cfg.sizes if s.name in best}
    fitted = {basis: fit for (experiment, basis), fit in fits[cfg.frontier_range].items() if experiment == "experiment 1"}
    frontiers = {basis: (whole_frontier(cfg, loaded, best, basis), fit) for basis, fit in fitted.items()}
    report = diagnostics.sweep_diagnostics(loaded, sizes, losses, best, run_of, frontiers)
    write_text_atomic(out / DIAGNOSTICS, diagnostics.format_diagnostics(report))
    write_manifest(out, [runs_table, out / TABLE, out / "table.md", out / "table_frontier_ranges.md", out / DIAGNOSTICS])
    return SweepResult(table, sizes, runs_table, loaded, best, time.perf_counter() - start, report)


def _check_same_corpus(cfg: SweepConfig, out: Path) -> None:
    """Refuse to resume a sweep in ``out`` on another corpus: its tokens (``out/data``) and
    finished runs come from the corpus it started on."""
    path = out / CONFIG
    before = json.loads(path.read_text()).get("corpus") if path.is_file() else None
    if before is not None and Path(before).resolve() != Path(cfg.corpus).resolve():
        raise ValueError(f"{out} holds a sweep on the corpus {before}, not {cfg.corpus}; use another --out")


def model_sizes(cfg: SweepConfig, vocab_size: int) -> list[dict[str, Any]]:
    """Per model size: name, shape and the three parameter counts."""
    rows = []
    for size in cfg.sizes:
        counts = lm.run_param_counts(model_config(cfg, size, vocab_size))
        rows.append({
            "name": size.name, "n_layer": size.n_layer, "d_model": size.d_model,
            "steps": budget_steps(cfg, size, vocab_size),
            "n_total": counts.total, "n_nonembedding": counts.nonembedding, "n_embedding": counts.embedding,
            "embedding_fraction": counts.embedding / counts.total,
        })  # fmt: skip
    return rows


# ----------------------------------------------------------------------------------------------
# Fitting.


def select_runs(cfg: SweepConfig, table: RunsTable, best: dict[str, float], experiment: str) -> RunsTable:
    """The rows Method 1 uses for ``experiment`` ("experiment 1", "scheme 1" ... "scheme 4")."""

    def ids(lr_of: dict[str, float], kind: str, fractions: tuple[float, ...]) -> set[str]:
        return {run_id(s, lr_of[s.name], kind, f) for s in cfg.sizes if s.name in lr_of for f in fractions}

    single = {s.name: cfg.single_lr for s in cfg.sizes}
    wanted = {
        "experiment 1": ids(best, "constant", (1.0,)),
        "scheme 1": ids(single, "constant", (1.0,)),
        "scheme 2": ids(best, "constant", (1.0,)),
        "scheme 3": ids(best, "cosine", (1.0,)),
        "scheme 4": ids(best, "cosine", cfg.budget_fractions),
    }[experiment]
    return table.select(np.isin(table.run_id, sorted(wanted)))


@float64
def learning_curve_exponent(curve: pd.DataFrame) -> float:
    """Slope of log loss on log tokens over the second half of one run's curve: L ∝ D^slope."""
    half = curve[curve[rs.STEP] >= curve[rs.STEP].max() / 2]
    return float(fit_power_law(half[rs.TOKENS].to_numpy(), half[rs.LOSS].to_numpy()).exponent)


def _table_row(fit: FrontierLaws) -> dict[str, Any]:
    """a, b with their interval ends, the number of budgets and of sizes on the frontier."""
    a_low, a_high = fit.a_interval or (None, None)
    b_low, b_high = fit.b_interval or (None, None)
    return {"a": fit.a, "a_low": a_low, "a_high": a_high, "b": fit.b, "b_low": b_low, "b_high": b_high,
            "n_points": len(fit.c), "frontier_models": len(fit.sizes)}


def fit_experiment(cfg: SweepConfig, table: RunsTable, best: dict[str, float], experiment: str, basis: str,
                   frontier_range: str | None = None) -> FrontierLaws | None:
    """Method 1 on ``experiment``'s runs on ``basis``, by the declared protocol (docs/sweep_protocol.md):
    the budgets of the frontier range (only those held by an interior size if the config's
    ``interior_only``), intervals over the fitted budgets; None (with a warning) when fewer than
    two runs were selected or the sizes' compute ranges do not overlap."""
    selected = select_runs(cfg, table, best, experiment)
    if len(set(selected.run_id)) < 2:
        return None
    try:
        return fit_approach1(selected, basis=basis, frontier_range=frontier_range or cfg.frontier_range,
                             interior_only=cfg.interior_only, n_budgets=cfg.frontier_points, bootstrap=cfg.bootstrap,
                             resample="budgets", seed=cfg.seed)
    except ValueError as err:
        warnings.warn(f"{experiment}, {basis} basis: no fit: {err}", stacklevel=2)
        return None


def whole_frontier(cfg: SweepConfig, table: RunsTable, best: dict[str, float], basis: str) -> FrontierLaws:
    """Experiment 1's frontier on ``basis`` over the config's budget range, edge sizes included
    and nothing fitted beyond it: what the diagnostics show beside the fitted budgets."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fit of record warns already
        return fit_approach1(select_runs(cfg, table, best, "experiment 1"), basis=basis,
                             frontier_range=cfg.frontier_range, interior_only=False,
                             n_budgets=cfg.frontier_points, bootstrap=0)


def fit_experiments(cfg: SweepConfig, table: RunsTable, best: dict[str, float], frontier_range: str | None = None
                    ) -> dict[tuple[str, str], FrontierLaws]:
    """Method 1 on every (experiment, basis) of Table 1 that has a fit, on ``frontier_range``
    (default: the config's)."""
    experiments = [("experiment 1", "total"), ("experiment 1", "nonembedding")]
    experiments += [(f"scheme {s}", "total") for s in sorted(cfg.schemes)]
    fits = {key: fit_experiment(cfg, table, best, *key, frontier_range) for key in experiments}
    return {key: fit for key, fit in fits.items() if fit is not None}


def table_of(fits: dict[tuple[str, str], FrontierLaws], frontier_range: str) -> pd.DataFrame:
    """Table 1 of Pearce & Song from :func:`fit_experiments`: a and b per experiment and basis,
    beside the paper's values."""
    rows = []
    for (experiment, basis), fit in fits.items():
        paper_a, paper_b = PAPER_TABLE[(experiment, basis)]
        rows.append({
            "experiment": experiment, "basis": basis, "frontier_range": frontier_range, **_table_row(fit),
            "paper_a": paper_a, "paper_b": paper_b,
        })  # fmt: skip
    return pd.DataFrame(rows)


def fit_table(cfg: SweepConfig, table: RunsTable, best: dict[str, float], frontier_range: str | None = None) -> pd.DataFrame:
    """Table 1 of Pearce & Song on ``frontier_range`` (default: the config's)."""
    frontier_range = frontier_range or cfg.frontier_range
    return table_of(fit_experiments(cfg, table, best, frontier_range), frontier_range)


def _estimate(value: float | None, low: float | None, high: float | None, n_sizes: int) -> str:
    if pd.isna(value):
        return undefined_exponent(n_sizes)
    return f"{value:.2f}" + ("" if pd.isna(low) else f" [{low:.2f}, {high:.2f}]")


def format_table(table: pd.DataFrame) -> str:
    """Markdown version of :func:`fit_table`'s table."""
    lines = [
        "| experiment | basis | a (N_opt ∝ C^a) [95% CI] | b (D_opt ∝ C^b) [95% CI] | paper a | paper b | frontier models |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.experiment} | {r.basis} | {_estimate(r.a, r.a_low, r.a_high, r.frontier_models)} | "
            f"{_estimate(r.b, r.b_low, r.b_high, r.frontier_models)} | {r.paper_a:.2f} | {r.paper_b:.2f} | {r.frontier_models} |"
        )
    return "\n".join(lines) + "\n"
