"""Sweep configurations (Pearce & Song 2024, Section 3) and the named presets.

A sweep trains each model size at every learning rate of a grid with a constant schedule (after
warmup), then, with each size's best learning rate, one cosine run to the size's update budget
and cosine runs at the other budget fractions. From these come Experiment 1 (Method 1 fits on
N_T/C_T versus N_\\E/C_\\E, best LR, no anneal) and Experiment 2's four schemes:

1. one learning rate for all sizes, no anneal;
2. best learning rate per size, no anneal (= Experiment 1);
3. best learning rate, cosine annealed to the budget (Kaplan's scheme);
4. best learning rate, cosine annealed at 0.25, 0.5, 0.75, 1, 1.5, 2 x the budget (Chinchilla's).

Presets: ``smoke`` (the whole pipeline in well under 3 minutes on 2 cores), ``cpu`` (both
experiments in under an hour on 2 cores: five sizes, N_T 14.6k-82k with vocabulary 1024, so
embeddings are 87% of the smallest and 52% of the largest, every size's budget ending at the
same compute C_T and its constant runs going on to the same C_\\E; docs/sweep_protocol.md),
``paper`` (Pearce & Song's settings for accelerators: N_T 0.8M-4.6M with the GPT-2-sized
vocabulary, context 16, 65,536 tokens per update, 4000/8000 updates, learning rates 0.001-0.05).

The corpus: a config's ``corpus`` (``jaxscale sweep --corpus PATH``), or, when it names none,
:func:`default_corpus`: the file named by the environment variable ``JAXSCALE_CORPUS``, else
``../shared/data/enwiki_30k_articles.txt.gz`` beside the clone jaxscale is installed from;
never a path relative to the current directory.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from jaxscale.hyperparameters.per_group import CENTRES

#: The environment variable naming the corpus of a sweep whose config names none.
CORPUS_VARIABLE = "JAXSCALE_CORPUS"
#: The presets' corpus (English Wikipedia, 30k articles) in the shared data folder beside a clone.
SHARED_CORPUS = Path("shared") / "data" / "enwiki_30k_articles.txt.gz"
SCHEMES = (1, 2, 3, 4)


@dataclasses.dataclass(frozen=True)
class ModelSize:
    """One model shape and its update budget (the "1.0 x D" of scheme 4); ``steps`` None takes
    the budget from the sweep's ``compute_budget``."""

    name: str
    n_layer: int
    d_model: int
    n_head: int
    steps: int | None = None

    def __post_init__(self) -> None:
        for field in ("n_layer", "d_model", "n_head", "steps"):
            value = getattr(self, field)
            if (field != "steps" or value is not None) and (not isinstance(value, int) or value < 1):
                raise ValueError(f"model size {self.name!r}: {field} must be a positive integer")


@dataclasses.dataclass(frozen=True)
class SweepConfig:
    """Everything a sweep trains and fits. Tokens per update = ``batch_size * n_ctx``."""

    name: str
    sizes: tuple[ModelSize, ...]
    learning_rates: tuple[float, ...]
    single_lr: float
    vocab_size: int
    n_ctx: int
    batch_size: int
    corpus: str | None = None  # None: default_corpus()
    corpus_chars: int | None = None
    tokenizer_file: str | None = None
    positions: str = "learned"
    tied: bool = True
    compute_dtype: str = "float32"
    warmup_fraction: float = 0.05
    warmup_steps: int | None = None  # overrides warmup_fraction when given
    schemes: tuple[int, ...] = SCHEMES
    budget_fractions: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
    compute_budget: float | None = None  # C_T = 6 N_T D of every size's 1.0 x run (sizes without steps)
    # constant runs go on to this C_\E = 6 N_\E D (never ending before the size's budget)
    constant_compute_nonembedding: float | None = None
    eval_every: int = 10
    eval_points: int | None = None  # log-spaced evaluations per run instead of every eval_every steps
    checkpoint_every: int = 50
    val_batches: int = 4
    seed: int = 0
    frontier_points: int = 200
    frontier_range: str = "common"  # budgets of the Method-1 grid: "common", "largest_first" or "all"
    interior_only: bool = True  # fit only budgets whose frontier size is neither the smallest nor the largest
    bootstrap: int = 1000
    lr_extensions: int = 0  # rates tried beyond a grid edge that holds a size's best rate
    # centre each size's grid on a published eta*(N, D) (jaxscale.hyperparameters.per_group.centred_rates):
    # its learning_rates scaled so that single_lr lands on eta* of the size's N_T and budget tokens
    lr_centre: str | None = None

    def __post_init__(self) -> None:
        if not self.sizes:
            raise ValueError(f"sweep {self.name!r} lists no model sizes")
        if len({s.name for s in self.sizes}) != len(self.sizes):
            raise ValueError(f"sweep {self.name!r}: model size names must be unique")
        if not self.learning_rates or any(not lr > 0 for lr in self.learning_rates):
            raise ValueError(f"sweep {self.name!r}: learning_rates must be a non-empty list of positive numbers")
        if self.single_lr not in self.learning_rates:
            raise ValueError(
                f"sweep {self.name!r}: single_lr {self.single_lr} must be one of learning_rates "
                f"{list(self.learning_rates)} (scheme 1 reuses those runs)"
            )
        if any(s not in SCHEMES for s in self.schemes):
            raise ValueError(f"sweep {self.name!r}: schemes must be among {SCHEMES}; got {self.schemes}")
        if 4 in self.schemes and 1.0 not in self.budget_fractions:
            raise ValueError(f"sweep {self.name!r}: budget_fractions must include 1.0")
        if self.frontier_range not in ("common", "largest_first", "all"):
            raise ValueError(f"sweep {self.name!r}: frontier_range must be 'common', 'largest_first' or 'all'")
        if any(s.steps is None for s in self.sizes) and not (self.compute_budget or 0) > 0:
            unset = ", ".join(s.name for s in self.sizes if s.steps is None)
            raise ValueError(f"sweep {self.name!r}: sizes {unset} have no steps; give them steps or set compute_budget")
        if self.constant_compute_nonembedding is not None and not self.constant_compute_nonembedding > 0:
            raise ValueError(f"sweep {self.name!r}: constant_compute_nonembedding must be positive")
        for name in ("lr_extensions", "bootstrap"):
            if getattr(self, name) < 0:
                raise ValueError(f"sweep {self.name!r}: {name} must be >= 0; got {getattr(self, name)}")
        if self.lr_centre is not None and self.lr_centre not in CENTRES:
            raise ValueError(f"sweep {self.name!r}: lr_centre must be one of {sorted(CENTRES)}; got {self.lr_centre!r}")
        if self.lr_centre is not None and 1 in self.schemes:
            raise ValueError(f"sweep {self.name!r}: lr_centre moves each size's grid, so no rate is common to every "
                             "size: drop scheme 1 (one rate for all sizes) or lr_centre")
        if not 0 <= self.warmup_fraction < 0.5:
            raise ValueError(f"sweep {self.name!r}: warmup_fraction must be in [0, 0.5)")

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.n_ctx

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def default_corpus() -> Path:
    """The corpus of a sweep whose config names none: ``$JAXSCALE_CORPUS`` if set, else
    :data:`SHARED_CORPUS` beside a clone of jaxscale: the clone this module was loaded from (an
    editable install or the checkout itself), else the clone the working directory is in (the
    README's ``pip install .`` copies the package into site-packages, so only the working
    directory still knows the clone).

    Raises:
        ValueError: none of them is there (one line naming ``--corpus`` and the places looked in).
    """
    if os.environ.get(CORPUS_VARIABLE):
        return Path(os.environ[CORPUS_VARIABLE]).expanduser()
    clones = [Path(__file__).resolve().parents[2], *_enclosing_clone(Path.cwd())]
    for clone in clones:
        if _is_clone(clone) and (clone.parent / SHARED_CORPUS).is_file():
            return clone.parent / SHARED_CORPUS
    looked = ", ".join(str(c.parent / SHARED_CORPUS) for c in clones if _is_clone(c)) or "no clone of jaxscale found"
    raise ValueError(f"no corpus: give one with --corpus PATH (a .txt or .txt.gz file) or the environment variable "
                     f"{CORPUS_VARIABLE} (looked beside the clone: {looked})")


def _is_clone(directory: Path) -> bool:
    """Whether ``directory`` is the root of a jaxscale checkout (its pyproject names the project)."""
    try:
        return 'name = "jaxscale"' in (directory / "pyproject.toml").read_text()
    except OSError:
        return False


def _enclosing_clone(directory: Path) -> list[Path]:
    """The jaxscale checkout that holds ``directory`` (itself or a parent), as a list of 0 or 1."""
    return [d for d in (directory.resolve(), *directory.resolve().parents) if _is_clone(d)][:1]


def with_corpus(cfg: SweepConfig, corpus: str | Path | None = None) -> SweepConfig:
    """``cfg`` training on ``corpus`` if given, else on its own corpus, else on
    :func:`default_corpus`; the path is made absolute, so the config (and the ``config.json``
    a sweep writes) means the same file from any directory."""
    path = Path(corpus if corpus is not None else cfg.corpus or default_corpus()).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"corpus not found: {path}")
    return dataclasses.replace(cfg, corpus=str(path.absolute()))


def first_sizes(cfg: SweepConfig, k: int) -> SweepConfig:
    """``cfg`` training only its first ``k`` model sizes (e.g. the ``paper`` preset's first model
    on a free Colab runtime). With one size only its learning-rate grid is trained (schemes 1
    and 2): the annealed runs of schemes 3 and 4 serve fits across sizes."""
    if not 1 <= k <= len(cfg.sizes):
        raise ValueError(f"sweep {cfg.name!r} has {len(cfg.sizes)} model sizes; cannot train the first {k}")
    schemes = cfg.schemes if k > 1 else tuple(s for s in cfg.schemes if s in (1, 2)) or (2,)
    return dataclasses.replace(cfg, sizes=cfg.sizes[:k], schemes=schemes)


def _model_size(index: int, entry: Any) -> ModelSize:
    fields = ", ".join(f.name for f in dataclasses.fields(ModelSize))
    try:
        return ModelSize(**entry)
    except TypeError:
        raise ValueError(f"sizes[{index}]: expected a table of {fields}; got {entry!r}") from None


def config_from_dict(raw: dict[str, Any]) -> SweepConfig:
    """A :class:`SweepConfig` from plain data (a parsed JSON/TOML file); unknown keys are errors."""
    if not isinstance(raw, dict):
        raise ValueError("a sweep config is a table of keys (name, sizes, learning_rates, ...); "
                         f"got a {type(raw).__name__}")
    known = {f.name for f in dataclasses.fields(SweepConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"unknown sweep config key(s): {', '.join(unknown)}")
    required = [f.name for f in dataclasses.fields(SweepConfig)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [key for key in required if key not in raw]
    if missing:
        raise ValueError(f"the sweep config lacks the required key(s) {', '.join(missing)}")
    raw = dict(raw)
    raw["sizes"] = tuple(_model_size(i, s) for i, s in enumerate(raw.get("sizes", ())))
    for key in ("learning_rates", "schemes", "budget_fractions"):
        if key in raw:
            raw[key] = tuple(raw[key])
    try:
        return SweepConfig(**raw)
    except TypeError as err:
        raise ValueError(f"bad sweep config: {err}") from None


def load_config(path: str | Path) -> SweepConfig:
    """Read a sweep config from a ``.json`` or ``.toml`` file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"sweep config not found: {path}")
    text = path.read_text()
    try:
        raw = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: cannot parse sweep config: {err}") from None
    try:
        return config_from_dict(raw)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


SMOKE = SweepConfig(
    name="smoke",
    sizes=(
        ModelSize("xs", 1, 16, 1, 100),
        ModelSize("s", 1, 32, 2, 80),
        ModelSize("m", 2, 48, 2, 60),
    ),
    learning_rates=(0.003, 0.01),
    single_lr=0.003,
    vocab_size=512,
    n_ctx=16,
    batch_size=16,
    corpus_chars=2_000_000,
    warmup_steps=3,
    eval_every=4,
    checkpoint_every=20,
    val_batches=2,
    bootstrap=200,
    interior_only=False,  # three sizes: the interior rule would leave one, and the smoke run checks the fits run
)

CPU = SweepConfig(
    name="cpu",
    sizes=(
        ModelSize("A", 1, 12, 1),
        ModelSize("B", 1, 16, 1),
        ModelSize("C", 1, 24, 2),
        ModelSize("D", 1, 32, 2),
        ModelSize("E", 2, 40, 2),
    ),
    learning_rates=(0.003, 0.006, 0.012),
    lr_extensions=1,
    single_lr=0.003,
    vocab_size=1024,
    n_ctx=32,
    batch_size=64,
    compute_budget=8e11,
    constant_compute_nonembedding=4e11,
    corpus_chars=60_000_000,
    warmup_steps=30,
    eval_every=10,
    eval_points=48,
    checkpoint_every=1000,  # an orbax save costs ~0.3 s on 2 cores, 1,000 updates 7-20 s: a kill loses at most those
    val_batches=16,
    seed=2,
)

PAPER = SweepConfig(
    name="paper",
    sizes=(
        ModelSize("0.8M", 2, 16, 1, 4000),
        ModelSize("1.6M", 2, 32, 2, 4000),
        ModelSize("2.1M", 3, 40, 2, 4000),
        ModelSize("3.3M", 4, 62, 2, 8000),
        ModelSize("4.6M", 4, 84, 4, 8000),
    ),
    learning_rates=(0.001, 0.005, 0.01, 0.05),
    single_lr=0.001,
    vocab_size=50257,
    n_ctx=16,
    batch_size=4096,
    corpus_chars=None,
    compute_dtype="bfloat16",
    eval_every=100,
    checkpoint_every=500,
    val_batches=8,
)

PRESETS: dict[str, SweepConfig] = {c.name: c for c in (SMOKE, CPU, PAPER)}


def preset(name: str) -> SweepConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}")
    return PRESETS[name]
