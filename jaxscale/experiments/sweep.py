"""Pearce & Song (2024), Section 3: train a family of transformers and fit the compute frontier.

:func:`run_sweep` trains every run of a :class:`~jaxscale.experiments.presets.SweepConfig` (each in
its own directory with checkpoints, so a killed sweep skips finished runs and resumes the
interrupted one), writes the runs table, and fits Chinchilla's Method 1 on each basis:

    N_opt ∝ C^a,   D_opt = C / (6 N_opt) ∝ C^b,   b = 1 - a      (Pearce & Song, Eqs. 3-4)

with C_T = 6 N_T D against N_T (Chinchilla's basis) and C_\\E = 6 N_\\E D against N_\\E (Kaplan's).
Intervals are percentile bootstraps over the frontier's budgets.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from jaxscale import runs_schema as rs
from jaxscale.experiments.presets import ModelSize, SweepConfig
from jaxscale.power_law import fit_power_law
from jaxscale.frontier import compute_frontier
from jaxscale.models.transformer import TransformerConfig
from jaxscale.numerics import float64
from jaxscale.text.tokens import TokenBatches, prepare_tokens
from jaxscale.train import lm, sharding

RUNS_TABLE = "runs.csv"
TABLE = "table.csv"
SUMMARY = "summary.json"
DIVERGED_FILE = "diverged.json"

#: Pearce & Song (2024), Table 1: (experiment, basis) -> (a, b).
PAPER_TABLE = {
    ("experiment 1", "total"): (0.49, 0.51),
    ("experiment 1", "nonembedding"): (0.74, 0.26),
    ("scheme 1", "total"): (0.58, 0.42),
    ("scheme 2", "total"): (0.49, 0.51),
    ("scheme 3", "total"): (0.46, 0.54),
    ("scheme 4", "total"): (0.49, 0.51),
}
BASES = {
    "total": (rs.N_TOTAL, rs.COMPUTE_TOTAL),
    "nonembedding": (rs.N_NONEMBEDDING, rs.COMPUTE_NONEMBEDDING),
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


def run_spec(
    cfg: SweepConfig, size: ModelSize, vocab_size: int, lr: float, kind: str, fraction: float = 1.0
) -> lm.RunSpec:
    """The run of ``size`` at peak ``lr`` with a ``kind`` schedule over ``fraction`` of its budget.

    Warmup is ``warmup_fraction`` of the size's full budget for every fraction, so runs of one
    size differ only after warmup.
    """
    steps = max(2, round(size.steps * fraction))
    warmup = cfg.warmup_steps if cfg.warmup_steps is not None else int(cfg.warmup_fraction * size.steps)
    warmup = min(warmup, steps - 1)
    return lm.RunSpec(
        run_id=f"{size.name}_{kind}_x{fraction:g}_lr{lr:g}",
        model=model_config(cfg, size, vocab_size),
        schedule=lm.Schedule(lr, steps, warmup, kind),  # type: ignore[arg-type]
        batch_size=cfg.batch_size,
        eval_every=cfg.eval_every,
        checkpoint_every=cfg.checkpoint_every,
        val_batches=cfg.val_batches,
        seed=cfg.seed,
    )


def constant_runs(cfg: SweepConfig, vocab_size: int) -> list[tuple[ModelSize, lm.RunSpec]]:
    """The learning-rate grid: every size at every rate, no anneal (schemes 1 and 2)."""
    return [(s, run_spec(cfg, s, vocab_size, lr, "constant")) for s in cfg.sizes for lr in cfg.learning_rates]


def cosine_runs(cfg: SweepConfig, size: ModelSize, vocab_size: int, lr: float) -> list[lm.RunSpec]:
    """Scheme 3's run at the budget, plus scheme 4's other budget fractions."""
    fractions = cfg.budget_fractions if 4 in cfg.schemes else (1.0,)
    return [run_spec(cfg, size, vocab_size, lr, "cosine", f) for f in fractions]


# ----------------------------------------------------------------------------------------------
# Running.


def _train_or_skip(spec: lm.RunSpec, data: TokenBatches, runs_dir: Path, **kwargs: Any) -> pd.DataFrame | None:
    """The run's curve, training (or resuming) it first; None if it diverged."""
    directory = runs_dir / spec.run_id
    if (directory / DIVERGED_FILE).is_file():
        return None
    try:
        rows = lm.train(spec, data, directory, **kwargs)
    except lm.TrainingDiverged as err:
        (directory / DIVERGED_FILE).write_text(json.dumps({"message": str(err)}))
        warnings.warn(str(err), stacklevel=2)
        return None
    return pd.DataFrame(rows)


def _final_loss(curve: pd.DataFrame | None) -> float:
    return float("inf") if curve is None or curve.empty else float(curve[rs.LOSS].astype(float).iloc[-1])


def best_learning_rates(cfg: SweepConfig, curves: dict[str, pd.DataFrame | None], vocab_size: int) -> dict[str, float]:
    """Per size, the grid learning rate with the lowest final validation loss (constant schedule)."""
    best = {}
    for size in cfg.sizes:
        losses = {lr: _final_loss(curves.get(run_spec(cfg, size, vocab_size, lr, "constant").run_id)) for lr in cfg.learning_rates}
        lr = min(losses, key=losses.get)
        if np.isfinite(losses[lr]):
            best[size.name] = lr
    return best


@dataclasses.dataclass
class SweepResult:
    """What :func:`run_sweep` returns (also written to ``summary.json``)."""

    table: pd.DataFrame
    runs: list[dict[str, Any]]
    runs_table: Path
    best_lr: dict[str, float]
    wall_time_s: float
    figures: list[Path]

    def exponent(self, experiment: str, basis: str) -> float:
        if self.table.empty:
            return float("nan")
        row = self.table[(self.table.experiment == experiment) & (self.table.basis == basis)]
        return float(row.a.iloc[0]) if len(row) else float("nan")

    def summary(self) -> dict[str, Any]:
        return {
            "exponent_total": self.exponent("experiment 1", "total"),
            "exponent_nonembedding": self.exponent("experiment 1", "nonembedding"),
            "table": self.table.to_dict(orient="records"),
            "runs": self.runs,
            "runs_table": str(self.runs_table),
            "best_lr": self.best_lr,
            "wall_time_s": self.wall_time_s,
            "figures": [str(p) for p in self.figures],
        }


def run_sweep(cfg: SweepConfig, out: str | Path, progress: bool = True) -> SweepResult:
    """Train (or resume) every run of ``cfg`` under ``out``, then fit and write the results."""
    start = time.perf_counter()
    out = Path(out)
    runs_dir = out / "runs"
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=1))
    sharding.initialize_distributed()
    tokenizer, ids = prepare_tokens(cfg.corpus, out / "data", cfg.vocab_size, cfg.corpus_chars, cfg.tokenizer_file)
    vocab = tokenizer.get_vocab_size()
    data = TokenBatches(ids, cfg.n_ctx, cfg.batch_size)
    train_kwargs = {
        "mesh": sharding.data_mesh(),
        "peak_flops": lm.matmul_peak_flops(1024) if progress else None,
        "progress": progress,
    }

    curves: dict[str, pd.DataFrame | None] = {}
    plan = constant_runs(cfg, vocab)
    for _, spec in tqdm(plan, desc=f"{cfg.name}: LR grid", disable=not progress):
        curves[spec.run_id] = _train_or_skip(spec, data, runs_dir, **train_kwargs)
    best = best_learning_rates(cfg, curves, vocab)
    if {3, 4} & set(cfg.schemes):
        annealed = [spec for s in cfg.sizes if s.name in best for spec in cosine_runs(cfg, s, vocab, best[s.name])]
        for spec in tqdm(annealed, desc=f"{cfg.name}: cosine", disable=not progress):
            curves[spec.run_id] = _train_or_skip(spec, data, runs_dir, **train_kwargs)

    frame = pd.concat([c for c in curves.values() if c is not None and not c.empty], ignore_index=True)
    runs_table = out / RUNS_TABLE
    frame.to_csv(runs_table, index=False)
    curves_frame = load_curves(runs_table)
    table = fit_table(cfg, curves_frame, best, vocab)
    table.to_csv(out / TABLE, index=False)
    (out / "table.md").write_text(format_table(table))
    sensitivity = [fit_table(cfg, curves_frame, best, vocab, rule) for rule in FRONTIER_RANGES]
    (out / "table_frontier_ranges.md").write_text(
        "".join(f"frontier range: {t.frontier_range.iloc[0]}\n\n{format_table(t)}\n" for t in sensitivity if not t.empty)
    )
    figures = _save_figures(cfg, curves_frame, best, vocab, out)
    result = SweepResult(table, model_sizes(cfg, vocab), runs_table, best, time.perf_counter() - start, figures)
    (out / SUMMARY).write_text(json.dumps(result.summary(), indent=1, default=float))
    return result


def model_sizes(cfg: SweepConfig, vocab_size: int) -> list[dict[str, Any]]:
    """Per model size: name, shape and the three parameter counts."""
    rows = []
    for size in cfg.sizes:
        counts = lm.run_param_counts(model_config(cfg, size, vocab_size))
        rows.append({
            "name": size.name, "n_layer": size.n_layer, "d_model": size.d_model, "steps": size.steps,
            "n_total": counts.total, "n_nonembedding": counts.nonembedding, "n_embedding": counts.embedding,
            "embedding_fraction": counts.embedding / counts.total,
        })  # fmt: skip
    return rows


# ----------------------------------------------------------------------------------------------
# Fitting.


def load_curves(path: str | Path) -> pd.DataFrame:
    """The runs table with numeric columns as floats."""
    frame = pd.read_csv(path)
    for column in (rs.STEP, rs.N_TOTAL, rs.N_NONEMBEDDING, rs.TOKENS, rs.COMPUTE_TOTAL, rs.COMPUTE_NONEMBEDDING, rs.LOSS):
        frame[column] = frame[column].astype(float)
    return frame


def select_runs(cfg: SweepConfig, frame: pd.DataFrame, best: dict[str, float], vocab: int, experiment: str) -> pd.DataFrame:
    """The rows Method 1 uses for ``experiment`` ("experiment 1", "scheme 1" ... "scheme 4")."""

    def ids(lr_of: dict[str, float], kind: str, fractions: tuple[float, ...]) -> set[str]:
        return {
            run_spec(cfg, s, vocab, lr_of[s.name], kind, f).run_id
            for s in cfg.sizes if s.name in lr_of for f in fractions
        }  # fmt: skip

    single = {s.name: cfg.single_lr for s in cfg.sizes}
    wanted = {
        "experiment 1": ids(best, "constant", (1.0,)),
        "scheme 1": ids(single, "constant", (1.0,)),
        "scheme 2": ids(best, "constant", (1.0,)),
        "scheme 3": ids(best, "cosine", (1.0,)),
        "scheme 4": ids(best, "cosine", cfg.budget_fractions),
    }[experiment]
    return frame[frame[rs.RUN_ID].isin(wanted)]


@dataclasses.dataclass(frozen=True)
class Method1Fit:
    """N_opt ∝ C^a and D_opt ∝ C^b from a Method-1 frontier, with bootstrap percentile intervals."""

    a: float
    a_low: float
    a_high: float
    b: float
    b_low: float
    b_high: float
    n_points: int
    frontier_models: int


def _padded(groups: list[np.ndarray]) -> np.ndarray:
    width = max(len(g) for g in groups)
    return np.stack([np.pad(g, (0, width - len(g)), constant_values=np.nan) for g in groups])


FRONTIER_RANGES = ("common", "largest_first", "all")


def budget_range(log_c: np.ndarray, n: np.ndarray, rule: str) -> tuple[float, float]:
    """Range of log budgets of the Method-1 grid, from curves ``log_c`` [M, P] of sizes ``n`` [M].

    ``"common"``: the range every model size covers (from the latest first point of any size to
    the earliest last point, the runs of one size pooled), so no size is excluded at a budget
    merely because its runs had not started or had already ended there. ``"largest_first"``: from
    the latest first point to the largest budget. ``"all"``: every budget any curve reaches.
    """
    first = pd.Series(log_c[:, 0]).groupby(n).min()
    last = pd.Series(np.nanmax(log_c, axis=1)).groupby(n).max()
    if rule not in FRONTIER_RANGES:
        raise ValueError(f"frontier range must be one of {FRONTIER_RANGES}; got {rule!r}")
    low, high = {
        "common": (first.max(), last.min()),
        "largest_first": (first.max(), last.max()),
        "all": (first.min(), last.max()),
    }[rule]
    if low >= high:
        raise ValueError("the model sizes' compute ranges do not overlap; train the small models longer")
    return float(low), float(high)


@float64
def method1_fit(
    curves: pd.DataFrame,
    n_column: str,
    c_column: str,
    points: int = 200,
    bootstrap: int = 1000,
    seed: int = 0,
    frontier_range: str = "common",
) -> Method1Fit:
    """Chinchilla's Method 1 on the training curves in ``curves`` (one per ``run_id``).

    The frontier is evaluated at ``points`` budgets spaced evenly in log C over
    :func:`budget_range`; at each budget the curve with the lowest (interpolated) loss is
    compute-optimal. N_opt(C) and D_opt(C) = C / (6 N_opt) are fitted as power laws by least
    squares in log space; the interval is the 2.5-97.5 percentile range over ``bootstrap``
    resamples of the frontier's budgets.
    """
    groups = [g.sort_values(c_column) for _, g in curves.groupby(rs.RUN_ID)]
    groups = [g[g[c_column] > 0] for g in groups]
    if len(groups) < 2:
        raise ValueError(f"Method 1 needs at least two training curves; got {len(groups)}")
    log_c = _padded([np.log(g[c_column].to_numpy()) for g in groups])
    loss = _padded([g[rs.LOSS].to_numpy() for g in groups])
    n = np.asarray([g[n_column].iloc[0] for g in groups], np.float64)
    grid = np.linspace(*budget_range(log_c, n, frontier_range), points)
    frontier = compute_frontier(log_c, loss, grid)
    valid = np.asarray(frontier.valid)
    budgets = np.exp(grid)
    n_opt = n[np.asarray(frontier.best)]
    d_opt = budgets / (6.0 * n_opt)

    def fit(weights: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        return fit_power_law(budgets, n_opt, weights).exponent, fit_power_law(budgets, d_opt, weights).exponent

    a, b = fit(jnp.asarray(valid, jnp.float64))
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(int(valid.sum()), valid / valid.sum(), size=bootstrap).astype(np.float64)
    a_boot, b_boot = jax.vmap(fit)(jnp.asarray(counts))
    a_lo, a_hi = np.nanpercentile(np.asarray(a_boot), [2.5, 97.5])
    b_lo, b_hi = np.nanpercentile(np.asarray(b_boot), [2.5, 97.5])
    used = len(set(n_opt[valid].tolist()))
    return Method1Fit(float(a), float(a_lo), float(a_hi), float(b), float(b_lo), float(b_hi), int(valid.sum()), used)


@float64
def learning_curve_exponent(curve: pd.DataFrame) -> float:
    """Slope of log loss on log tokens over the second half of one run's curve: L ∝ D^slope."""
    half = curve[curve[rs.STEP] >= curve[rs.STEP].max() / 2]
    return float(fit_power_law(half[rs.TOKENS].to_numpy(), half[rs.LOSS].to_numpy()).exponent)


def fit_table(
    cfg: SweepConfig, frame: pd.DataFrame, best: dict[str, float], vocab: int, frontier_range: str | None = None
) -> pd.DataFrame:
    """Table 1 of Pearce & Song: a and b per experiment and basis, beside the paper's values.

    ``frontier_range`` (default: the config's) chooses the budgets of the frontier grid."""
    frontier_range = frontier_range or cfg.frontier_range
    experiments = [("experiment 1", "total"), ("experiment 1", "nonembedding")]
    experiments += [(f"scheme {s}", "total") for s in sorted(cfg.schemes)]
    rows = []
    for experiment, basis in experiments:
        selected = select_runs(cfg, frame, best, vocab, experiment)
        if selected[rs.RUN_ID].nunique() < 2:
            continue
        try:
            fit = method1_fit(
                selected, *BASES[basis], cfg.frontier_points, cfg.bootstrap, cfg.seed, frontier_range
            )
        except ValueError as err:
            warnings.warn(f"{experiment}, {basis} basis: no fit: {err}", stacklevel=2)
            continue
        paper_a, paper_b = PAPER_TABLE[(experiment, basis)]
        rows.append({
            "experiment": experiment, "basis": basis, "frontier_range": frontier_range, **dataclasses.asdict(fit),
            "paper_a": paper_a, "paper_b": paper_b,
        })  # fmt: skip
    return pd.DataFrame(rows)


def format_table(table: pd.DataFrame) -> str:
    """Markdown version of :func:`fit_table`'s table."""
    lines = [
        "| experiment | basis | a (N_opt ∝ C^a) [95% CI] | b (D_opt ∝ C^b) [95% CI] | paper a | paper b | frontier models |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.experiment} | {r.basis} | {r.a:.2f} [{r.a_low:.2f}, {r.a_high:.2f}] | "
            f"{r.b:.2f} [{r.b_low:.2f}, {r.b_high:.2f}] | {r.paper_a:.2f} | {r.paper_b:.2f} | {r.frontier_models} |"
        )
    return "\n".join(lines) + "\n"


def _save_figures(cfg: SweepConfig, frame: pd.DataFrame, best: dict[str, float], vocab: int, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from jaxscale.plots.sweep import curves_figure

    paths = []
    for experiment in ("experiment 1", "scheme 1", "scheme 3", "scheme 4"):
        selected = select_runs(cfg, frame, best, vocab, experiment)
        if selected[rs.RUN_ID].nunique() < 2:
            continue
        fig = curves_figure(selected, BASES, title=f"{cfg.name}: {experiment}")
        path = out / f"curves_{experiment.replace(' ', '')}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths
