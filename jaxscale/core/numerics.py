"""Float64 policy for the scientific paths.

Laws, the compute-optimal solver, fits and inference must hold to float64 accuracy, while
training runs in float32 or bfloat16. JAX has one switch for 64-bit types, ``jax_enable_x64``;
jaxscale never flips it globally on import. Instead:

- every high-level scientific entry point (solvers, fits, samplers, the reconciliation) is
  wrapped in :func:`float64`, which runs it under ``jax.enable_x64(True)``;
- the law functions themselves follow the dtype of their inputs, so inside your own code
  either enable x64 globally::

      import jax
      jax.config.update("jax_enable_x64", True)

  or run the block under ``with jax.enable_x64(True): ...``;
- training code (transformer, word2vec) sets float32/bfloat16 dtypes explicitly, so it is
  unaffected when x64 is on.

One exception: NUTS with progress bars runs under :func:`float64_on_every_thread`, which turns
the switch on process-wide for the sampling only and restores it, because NumPyro updates its
bars from callback threads that do not see the thread-local switch.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Callable, ParamSpec, TypeVar

import jax
import jax.numpy as jnp

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def float64(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` with JAX 64-bit types enabled (thread-local, restored afterwards)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper


def _process_x64() -> bool:
    """The process-wide x64 switch: what a thread without a local setting sees."""
    seen: list[bool] = []
    reader = threading.Thread(target=lambda: seen.append(bool(jax.config.jax_enable_x64)))
    reader.start()
    reader.join()
    return seen[0]


@contextlib.contextmanager
def float64_on_every_thread() -> Iterator[None]:
    """x64 for the whole process while the block runs, restored afterwards, for code whose host
    callbacks run on other threads, which do not see :func:`float64`'s thread-local switch
    (NumPyro's progress bars: their callback returns a Python int that must come back as the
    int64 the traced program expects). Waits for every pending callback before restoring."""
    previous = _process_x64()
    jax.config.update("jax_enable_x64", True)
    try:
        yield
        jax.effects_barrier()
    finally:
        jax.config.update("jax_enable_x64", previous)


def as_float64(tree: T) -> T:
    """The same pytree (a law's parameter NamedTuple, say) with every leaf a float64 JAX array
    (call under x64)."""
    return jax.tree.map(lambda leaf: jnp.asarray(leaf, jnp.float64), tree)
