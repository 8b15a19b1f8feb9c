"""A law fitted to evaluations by least squares weighted by their standard errors, and its
parametric bootstrap: the fits behind every downstream form.

An evaluation of a task with n questions is a binomial proportion: its standard error s_i =
sqrt(p (1 - p) / n) is the noise of the measurement (a 1,000-question task cannot resolve a
0.5-point step). The likelihood of a law f(x; theta) is Gaussian in that noise, so the fit
minimises

    chi^2(theta) = sum_i ((f(x_i; theta) - y_i) / s_i)^2,

over the law's vector (:meth:`jaxscale.laws.law.Law.to_vector`), from every start of the law's
grid at once (:func:`jaxscale.core.lbfgs.solver`), the lowest converged kept. Here f is either
the task's accuracy (the law's accuracy above chance put back over the chance floor,
:func:`jaxscale.laws.downstream_accuracy.accuracy`) or a log loss (stage 1: y = log L, s = the
loss's relative standard error).

The scatter beyond the measurements' noise is the reduced chi^2 = chi^2 / (n - p) (the Birge
ratio squared). The bootstrap redraws every measurement about the fit,

    y*_i = f(x_i; theta_hat) + s_i sqrt(max(1, chi^2 / (n - p))) z_i,   z_i ~ Normal(0, 1),

and refits, so an interval widens where the law misses its points by more than their noise and
never narrows below what the noise alone allows. Where the standard errors are unknown (a table
without them) every s_i is 1 and the scale is sqrt(chi^2 / (n - p)) itself: the residuals are the
noise.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxscale.core import lbfgs
from jaxscale.core.numerics import float64
from jaxscale.laws.downstream_accuracy import accuracy
from jaxscale.laws.law import Law

#: Resamples of the bootstrap unless asked otherwise.
RESAMPLES = 400
_OPTIONS = lbfgs.Options(max_iter=2000, gtol=1e-9, ftol=1e-14)


class WeightedFit(NamedTuple):
    """A fitted law: ``params`` (the law's NamedTuple), ``draws`` (the same, a leading axis of
    bootstrap refits; ``valid`` says which converged), ``chi2_reduced`` (chi^2 / (n - p), NaN
    where n <= p), ``noise_scale`` the factor the bootstrap multiplied each s_i by, ``chance`` the
    floor (None for a fit of a log loss), and ``n`` the number of points."""

    law: Law
    params: Any
    draws: Any
    valid: np.ndarray
    chi2_reduced: float
    noise_scale: float
    chance: float | None
    n: int

    def predict(self, *inputs: np.ndarray, draws: bool = False) -> np.ndarray:
        """The fitted quantity at ``inputs`` (in the order of the law's inputs): the accuracy
        for a fit of accuracy, the loss for a fit of a log loss; ``draws``: one row per bootstrap
        refit ([S, ...], NaN for a refit that did not converge)."""
        return predict(self.law, self.draws if draws else self.params, self.chance, *inputs,
                       valid=self.valid if draws else None)


@float64
def predict(law: Law, params: Any, chance: float | None, *inputs: Any, valid: np.ndarray | None = None) -> np.ndarray:
    """f of :func:`fit` at ``inputs``: the accuracy (``chance`` a float) or the loss (``chance``
    None) of ``params`` (one set, or draws with a leading axis, NaN where ``valid`` is False)."""
    log_x = [jnp.log(jnp.asarray(x, jnp.float64)) for x in inputs]
    batched = valid is not None
    if batched:
        log_y = jax.vmap(lambda p: law.log_loss(p, *log_x))(jax.tree.map(jnp.asarray, params))
    else:
        log_y = law.log_loss(params, *log_x)
    y = np.exp(np.asarray(log_y))
    y = accuracy(y, chance) if chance is not None else y
    return np.where(valid[:, None], y, np.nan) if batched else y


@functools.cache
def _objective(law: Law, on_accuracy: bool):
    """chi^2 of the module docstring for ``law`` (one objective per law and kind, so the batched
    solver's compiled program is reused)."""

    def chi2(theta: jnp.ndarray, data: dict[str, jnp.ndarray]) -> jnp.ndarray:
        log_y = law.log_loss(law.from_vector(theta), *data["log_x"])
        fitted = accuracy(jnp.exp(log_y), data["chance"]) if on_accuracy else log_y
        return jnp.sum(jnp.square((fitted - data["y"]) / data["s"]))

    return chi2


def _data(log_x: tuple[np.ndarray, ...], y: np.ndarray, s: np.ndarray, chance: float | None) -> dict[str, Any]:
    return {"log_x": tuple(jnp.asarray(v, jnp.float64) for v in log_x), "y": jnp.asarray(y, jnp.float64),
            "s": jnp.asarray(s, jnp.float64), "chance": jnp.asarray(0.0 if chance is None else chance, jnp.float64)}


def _tiled(log_x: tuple[np.ndarray, ...], redrawn: np.ndarray, s: np.ndarray, chance: float | None) -> dict[str, Any]:
    """The data of one refit per row of ``redrawn`` (the solver's ``batch="data"``)."""
    one = _data(log_x, redrawn[0], s, chance)
    rows = redrawn.shape[0]
    return {"log_x": tuple(jnp.broadcast_to(v, redrawn.shape) for v in one["log_x"]), "y": jnp.asarray(redrawn),
            "s": jnp.broadcast_to(one["s"], redrawn.shape), "chance": jnp.full(rows, one["chance"])}


@float64
def fit(law: Law, inputs: tuple[np.ndarray, ...], y: np.ndarray, stderr: np.ndarray | None, *,
        chance: float | None = None, resamples: int = RESAMPLES, seed: int = 0) -> WeightedFit:
    """Fit ``law`` to ``y`` at ``inputs`` weighted by ``stderr`` and bootstrap it (module docstring).

    Args:
        law: the law (its inputs in order, e.g. (N,) or (L,)).
        inputs: one array per input of the law, positive.
        y: accuracies (``chance`` a float) or log losses (``chance`` None).
        stderr: standard errors of ``y`` (of log L for a loss: stderr(L) / L), or None if unknown.
        chance: the task's chance level, for a fit of accuracy.
        resamples: bootstrap refits (0: none).
        seed: seed of the bootstrap's draws.

    Returns:
        The :class:`WeightedFit`.

    Raises:
        ValueError: with no more points than parameters.
    """
    y = np.asarray(y, np.float64)
    if y.size <= law.n_params:
        raise ValueError(f"{law.name} has {law.n_params} parameters and needs more points than that; got {y.size}")
    known = stderr is not None and np.all(np.isfinite(stderr))
    s = np.asarray(stderr, np.float64) if known else np.ones_like(y)
    log_x = tuple(np.log(np.asarray(x, np.float64)) for x in inputs)
    objective = _objective(law, chance is not None)
    starts = jnp.asarray(law.init_grid())
    sol = lbfgs.solver(objective, _OPTIONS, batch="starts")(starts, _data(log_x, y, s, chance))
    theta = np.asarray(sol.theta)[lbfgs.best_converged(sol)]
    params = law.from_vector(theta)
    dof = y.size - law.n_params
    chi2_reduced = float(np.asarray(sol.value)[lbfgs.best_converged(sol)]) / dof
    scale = float(np.sqrt(max(1.0, chi2_reduced) if known else chi2_reduced))
    fitted = predict(law, params, chance, *inputs) if chance is not None else np.asarray(law.log_loss(params, *log_x))
    rng = np.random.default_rng(seed)
    redrawn = fitted + s * scale * rng.standard_normal((max(resamples, 1), y.size))
    refits = lbfgs.solver(objective, _OPTIONS, batch="data")(jnp.asarray(theta), _tiled(log_x, redrawn, s, chance))
    valid = np.asarray(refits.converged) & np.isfinite(np.asarray(refits.value))
    draws = law.from_vector(np.asarray(refits.theta))
    if resamples == 0:
        valid = valid[:0]
        draws = jax.tree.map(lambda v: v[:0], draws)
    return WeightedFit(law, params, draws, valid, chi2_reduced, scale, chance, int(y.size))
