"""One scaling law, written once: the :class:`Law` every fit, posterior and optimum takes.

A law is its parameters (a NamedTuple in the paper's names, so a JAX pytree) and one function,

    log_loss(params, log_x1, log_x2) = log L(x1, x2; params),

elementwise and overflow-safe (log-sum-exp forms, :func:`lse`), from which the natural-space
loss is derived, L = exp(log_loss). Everything else is generic over that:

- fitting (:mod:`jaxscale.fitting`) works on an unconstrained vector, the parameters with every
  scale replaced by its logarithm (A -> log A; exponents stay as they are, as in Hoffmann et al.
  2022, Appendix D.2, and Besiroglu et al. 2024): :meth:`Law.to_vector`, :meth:`Law.from_vector`,
  :attr:`Law.vector_names` and the law's default multistart grid :attr:`Law.init_grid`;
- the Bayesian model (:mod:`jaxscale.inference.law_model`) draws the same vector coordinates from
  the law's documented priors (:attr:`Law.priors`; scales as Normal logs, exponents as positive
  truncated Normals; :attr:`Law.centred` names intercepts that are sampled centred on the data);
- a law of (N, D) is a callable ``law(n, d, params)``, which is what the compute-optimal solver
  of :mod:`jaxscale.optimum.solver` takes;
- :attr:`Law.closed_forms` gives the law's closed-form derived quantities (e.g. Chinchilla's
  a, b, G of Eq. 4) for fits and posterior draws alike;
- a law of more inputs than two (the data-constrained law of N, D and the unique tokens U_D)
  takes them as further arguments, ``log_loss(params, log_x1, log_x2, log_x3, ...)``: fits and
  posteriors read them per run from the runs table (:meth:`jaxscale.tables.table.RunsTable.law_inputs`),
  and :meth:`Law.given` holds them fixed for the solvers: ``law.given(U_D=1e11)`` is a law of
  (x1, x2) like any other.

Adding a law is one module in :mod:`jaxscale.laws` that defines a module-level :class:`Law`:
:mod:`jaxscale.laws.registry` finds it by name, and ``jaxscale fit/bayes --law NAME`` take it.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Generic, Mapping, NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from jaxscale.core.validation import check_positive

P = TypeVar("P", bound=NamedTuple)
#: Decades each input that carries an exponent must span by default (:attr:`Law.min_decades`,
#: the design rule of :mod:`jaxscale.fitting.determinable`): half a decade is a factor 3.2, over which a
#: term x^(-0.3) changes by 30%; below it the term is nearly linear in log x, and its curvature,
#: which separates the exponent from the scale and the constant, is under 1% of the loss. The
#: narrowest table in ``../shared/data`` spans 0.7 decades of N (Step Law's five sizes), Epoch
#: AI's Chinchilla runs 2.45.
MIN_DECADES = 0.5
LogLossFn = Callable[..., jnp.ndarray]  # (params, log_x1, log_x2, *log_fixed) -> log L
Normal = tuple[float, float]  # (loc, scale) of a prior


def lse(*terms: ArrayLike) -> jnp.ndarray:
    """log(sum_k exp(t_k)), elementwise over the broadcast terms, shifted pointwise by the
    largest term so that no exponential overflows, whatever the spread of the terms (the
    solvers evaluate laws at sizes from 1e-100 to 1e300). The shift carries no gradient (its
    derivative cancels exactly). Measured as fast as a single scalar shift on the 4500-start
    Approach-3 fit (CPU), and 4.9x faster than nested ``jnp.logaddexp``."""
    terms = jnp.broadcast_arrays(*terms)
    top = jax.lax.stop_gradient(jnp.max(jnp.stack(terms), axis=0))
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    return top + jnp.log(sum(jnp.exp(t - top) for t in terms))


def array_module(*values: Any) -> ModuleType:
    """NumPy for host values (floats, NumPy arrays), jax.numpy for JAX arrays and tracers."""
    return jnp if any(isinstance(v, jax.Array) for v in values) else np


def grid(**axes: ArrayLike) -> Callable[[], np.ndarray]:
    """A multistart grid: the Cartesian product of ``axes`` (in keyword order, the last varying
    fastest), as a function returning a ``(k, p)`` float64 array of vector coordinates."""

    def make() -> np.ndarray:
        return np.array(list(itertools.product(*axes.values())), dtype=np.float64)

    return make


def steps(lo: float, hi: float, step: float) -> np.ndarray:
    """lo, lo + step, ..., hi (inclusive)."""
    return np.arange(lo, hi + step / 2, step)


@dataclass(frozen=True)
class NoisePriors:
    """The likelihood's part of every law's priors: ``sigma`` ~ HalfNormal(``sigma``), the
    residual scale of log loss (0.1 = 10% loss error), and ``df``, the Student-t degrees of
    freedom (fixed; see :mod:`jaxscale.inference.law_model`)."""

    sigma: float = 0.1
    df: float = 4.0


class LinearPart:
    """The coordinates in which a law's loss is linear (for variable projection,
    :mod:`jaxscale.fitting.vpnls`): L = sum_j c_j phi_j(x; theta_nl), c_j >= 0.

    ``coefficients`` names the fields c_j (scales of the law, in natural units), ``basis(nonlinear,
    *log_x)`` returns the columns phi_j, shape (..., rows, k) in the order of ``coefficients``, at
    the law's other fields ``nonlinear`` (a tuple in the order of the law's fields).
    """

    def __init__(self, coefficients: tuple[str, ...], basis: Callable[..., Any]) -> None:
        self.coefficients = coefficients
        self.basis = basis


@dataclass(frozen=True, eq=False)
class Law(Generic[P]):
    """A scaling law L(x1, x2; params), written once.

    ``log_loss(params, log_x1, log_x2)`` is the law (elementwise, overflow-safe);
    ``params_type`` its NamedTuple; ``log_scale[i]`` says whether field i is a scale, fitted and
    sampled as its log (else an exponent, fitted as itself and positive a priori);
    ``init_grid()`` the default multistart grid, ``(k, p)`` in vector coordinates; ``priors`` a
    :class:`NoisePriors` subclass with one (loc, scale) per vector coordinate; ``centred``
    (intercept, slope, input index) triples for the Bayesian model (the intercept is sampled
    centred on the mean log input, see :mod:`jaxscale.inference.law_model`); ``closed_forms``
    maps params to named closed-form derived quantities; ``inputs`` names x1, x2 and any
    further inputs, which are held fixed (:meth:`given`) rather than read from runs;
    ``positive`` says whether the loss is positive at every positive input (False for a law
    with a subtracted term, whose ``log_loss`` is NaN where its loss would be <= 0);
    ``needs_independent_inputs`` whether fits need runs whose x1 and x2 do not lie on one line
    in log space (:mod:`jaxscale.fitting.determinable`): True for a law of model size and data, whose split
    between the two such runs cannot determine; False for a law that one line of runs determines.
    ``scaled_inputs`` names the inputs that carry a scale and an exponent (default: the first two),
    each of which a fit needs at enough distinct values over ``min_decades`` decades at least
    (:data:`MIN_DECADES` unless the law says otherwise; the design rule of
    :mod:`jaxscale.fitting.determinable`; the annealing law's S2 enters linearly and is not one).
    ``published`` holds parameter sets that papers report, by name (:meth:`published_params`);
    ``chinchilla_form`` says that the law is E + A x1^-alpha + B x2^-beta with parameters
    (A, B, E, alpha, beta) in that order, the form of Hoffmann et al.'s Eq. 2 (what needs that
    form asks :attr:`chinchilla_undefined`); ``quantity`` what the law predicts: ``"loss"`` for
    every law of the loss, else the optimal hyperparameter it gives (``"learning rate"``,
    ``"batch size"``: the laws of :mod:`jaxscale.laws.steplaw` and
    :mod:`jaxscale.laws.deepseek_hparams`), which loss fits refuse.
    """

    name: str
    params_type: type[P]
    log_loss: LogLossFn
    log_scale: tuple[bool, ...]
    init_grid: Callable[[], np.ndarray]
    priors: NoisePriors
    formula: str
    citation: str
    inputs: tuple[str, ...] = ("N", "D")
    centred: tuple[tuple[str, str, int], ...] = ()
    closed_forms: Callable[[P], Mapping[str, Any]] | None = None
    positive: bool = True
    needs_independent_inputs: bool = True
    published: Mapping[str, P] = dataclasses.field(default_factory=dict)
    chinchilla_form: bool = False
    quantity: str = "loss"
    scaled_inputs: tuple[str, ...] | None = None
    min_decades: float = MIN_DECADES
    linear: LinearPart | None = None

    def __post_init__(self) -> None:
        if len(self.log_scale) != len(self.params_type._fields):
            raise ValueError(f"law {self.name!r}: log_scale needs one flag per field of "
                             f"{self.params_type.__name__}{self.params_type._fields}")

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.params_type._fields

    @property
    def vector_names(self) -> tuple[str, ...]:
        """Names of the unconstrained coordinates: ``log_A`` for a scale A, ``alpha`` for an exponent."""
        return tuple(f"log_{f}" if log else f for f, log in zip(self.param_names, self.log_scale))

    @property
    def nonlinear_names(self) -> tuple[str, ...]:
        """The fields outside :attr:`linear`'s coefficients (all of them for a law with none)."""
        linear = () if self.linear is None else self.linear.coefficients
        return tuple(f for f in self.param_names if f not in linear)

    def joined(self, nonlinear: tuple[ArrayLike, ...], coefficients: tuple[ArrayLike, ...]) -> P:
        """The parameters of values of :attr:`nonlinear_names` and of :attr:`linear`'s coefficients."""
        values = {**dict(zip(self.nonlinear_names, nonlinear)), **dict(zip(self.linear.coefficients, coefficients))}
        return self.params_type(*(values[f] for f in self.param_names))

    @property
    def exponent_names(self) -> tuple[str, ...]:
        """The fields that are exponents: those not fitted as log scales."""
        return tuple(f for f, log in zip(self.param_names, self.log_scale) if not log)

    @property
    def exponent_inputs(self) -> tuple[str, ...]:
        """The inputs that carry a scale and an exponent (:attr:`scaled_inputs`, by default the
        first two): what the design rule of :mod:`jaxscale.fitting.determinable` checks."""
        return self.inputs[:2] if self.scaled_inputs is None else self.scaled_inputs

    @property
    def n_params(self) -> int:
        return len(self.log_scale)

    @property
    def chinchilla_undefined(self) -> str | None:
        """Why what needs Chinchilla's law of model size N and tokens D, E + A/N^alpha + B/D^beta
        with free exponents, is undefined for this law (None where it is defined): Pearce & Song's
        reconciled exponent (their Eq. 15 rewrites that law in non-embedding terms), its
        sensitivities, and the likelihood-ratio test at Hoffmann et al.'s published values."""
        if self.chinchilla_form and self.inputs == ("N", "D"):
            return None
        return (f"it needs Chinchilla's law E + A/N^alpha + B/D^beta of model size N and tokens D with "
                f"parameters (A, B, E, alpha, beta); {self.name} is {self.formula} with parameters "
                f"{self.param_names}")

    def require_chinchilla(self, use: str) -> None:
        """Raise ValueError, saying why, where ``use`` is undefined for this law
        (:attr:`chinchilla_undefined`)."""
        reason = self.chinchilla_undefined
        if reason is not None:
            raise ValueError(f"{use} is undefined for the {self.name} law: {reason}")

    def published_params(self, name: str) -> P:
        """The parameter set called ``name`` in :attr:`published` (e.g. ``"epoch"`` for
        Besiroglu et al.'s Chinchilla-law fit)."""
        if name not in self.published:
            choices = f"choose one of {sorted(self.published)}" if self.published else "it has none"
            raise ValueError(f"no published parameter set {name!r} for the {self.name} law; {choices}")
        return self.published[name]

    def evaluate(self, params: P, *inputs: ArrayLike) -> jnp.ndarray:
        """L at every input of the law, in the order of :attr:`inputs` (e.g. N, D, U_D):
        exp(log_loss(params, log x1, log x2, ...)), elementwise."""
        return jnp.exp(self.log_loss(params, *(jnp.log(x) for x in inputs)))

    def loss(self, x1: ArrayLike, x2: ArrayLike, params: P) -> jnp.ndarray:
        """L(x1, x2) = exp(log_loss(params, log x1, log x2)), elementwise."""
        return self.evaluate(params, x1, x2)

    def __call__(self, x1: ArrayLike, x2: ArrayLike, params: P) -> jnp.ndarray:
        """The law as ``law(n, d, params)``, the form :mod:`jaxscale.optimum.solver` takes."""
        return self.loss(x1, x2, params)

    def to_vector(self, params: P) -> jnp.ndarray:
        """The unconstrained vector, shape ``(..., p)``: logs of scales, exponents as they are
        (NumPy in, NumPy out: no compilation for host-side conversions)."""
        xp = array_module(*params)
        return xp.stack([xp.log(v) if log else xp.asarray(v) for v, log in zip(params, self.log_scale)], -1)

    def from_vector(self, vector: ArrayLike) -> P:
        """The parameters of vector(s) ``(..., p)`` (inverse of :meth:`to_vector`)."""
        xp = array_module(vector)
        v = xp.asarray(vector)
        with np.errstate(over="ignore"):  # a scale beyond float64 (a refit's log B > 709) is inf
            return self.params_type(*(xp.exp(v[..., i]) if log else v[..., i] for i, log in enumerate(self.log_scale)))

    def exponents_positive(self, params: P) -> jnp.ndarray:
        """Whether every exponent of ``params`` (the fields that are not log scales) is > 0, as the
        law defines them; a fit can land outside, where the loss does not fall along an input and
        no optimum or closed form holds. Elementwise over draws ([S] fields give [S])."""
        exponents = [jnp.asarray(getattr(params, name)) > 0 for name in self.exponent_names]
        return jnp.all(jnp.stack(exponents), axis=0) if exponents else jnp.asarray(True)

    def derived(self, params: P) -> dict[str, Any]:
        """The law's closed-form derived quantities at ``params`` (empty if it has none); NaN
        where an exponent is <= 0 (:meth:`exponents_positive`) or a parameter is not finite (a
        fit whose scale ran off to infinity settled nowhere), e.g. Chinchilla's a, b and G."""
        if self.closed_forms is None:
            return {}
        defined = self.exponents_positive(params) & jnp.all(jnp.isfinite(jnp.stack(jnp.broadcast_arrays(*params))), 0)
        inside = jax.tree.map(lambda v: jnp.where(defined, v, 1.0), params)
        return {k: jnp.where(defined, v, jnp.nan) for k, v in self.closed_forms(inside).items()}

    def __program_key__(self) -> str | None:
        """The law's name where it is a law of :mod:`jaxscale.laws` (a module-level ``Law`` of one
        of its modules: a registered law, whose source names its compiled programs), else None
        (a law built elsewhere, or by :meth:`given`, names no program kept on disk:
        :mod:`jaxscale.support.compiled_programs`)."""
        package = __name__.rpartition(".")[0] + "."
        modules = [m for name, m in list(sys.modules.items()) if name.startswith(package)]
        return self.name if any(v is self for m in modules for v in vars(m).values()) else None

    def given(self, **fixed: ArrayLike) -> "Law":
        """This law with its inputs beyond (x1, x2) held fixed, by name (e.g. ``U_D=1e11``): a
        law of (x1, x2) that fits, the compute-optimal solver and the allocation take as any
        other. The values are kept as given and enter as logs at each evaluation, so they may
        be JAX tracers: derivatives with respect to them flow through the solver."""
        held = self.inputs[2:]
        if sorted(fixed) != sorted(held):
            raise ValueError(f"law {self.name!r} holds {list(held)} fixed; got {sorted(fixed)}")
        for name, value in fixed.items():
            check_positive(name, value)
        log_loss = self.log_loss

        def log_loss_given(params: Any, log_x1: jnp.ndarray, log_x2: jnp.ndarray) -> jnp.ndarray:
            return log_loss(params, log_x1, log_x2, *(jnp.log(fixed[name]) for name in held))

        return dataclasses.replace(self, name=f"{self.name} at fixed {', '.join(held)}",
                                   log_loss=log_loss_given, inputs=self.inputs[:2])

    def renamed(self, name: str, params_type: type, **changes: Any) -> "Law":
        """The same formula under other parameter names (a NamedTuple of the same length and
        meaning, field by field) and other settings, e.g. inputs, grid, priors. The law's
        functions unpack parameters by position, so they serve both. Published parameter sets
        are not carried over (they estimate the original's quantities) unless given, nor is the
        linear part (:attr:`linear` names fields)."""
        if len(params_type._fields) != self.n_params:
            raise ValueError(f"{params_type.__name__} has {len(params_type._fields)} fields; "
                             f"{self.name} has {self.n_params} parameters")
        changes = {"published": {}, "linear": None, **changes}
        return dataclasses.replace(self, name=name, params_type=params_type, **changes)
