"""Data parallelism over every local device with ``jax.sharding`` (Mesh + NamedSharding).

One mesh axis, ``"data"``: the batch is split along it and parameters and optimiser state are
replicated, so XLA inserts the gradient all-reduce. The same code runs on one CPU, the 8 cores of a
Colab TPU, or several processes after :func:`jaxscale.lm.distributed.initialize` (each process
then supplies only its slice of every global batch).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"


def data_mesh(devices: list[Any] | None = None) -> Mesh:
    """A 1-D mesh named ``"data"`` over ``devices`` (default: all devices of all processes)."""
    return Mesh(np.asarray(devices if devices is not None else jax.devices()), (DATA_AXIS,))


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec())


def batch_sharded(mesh: Mesh, batch_axis: int = 0) -> NamedSharding:
    """Split axis ``batch_axis`` over the ``"data"`` mesh axis."""
    return NamedSharding(mesh, PartitionSpec(*([None] * batch_axis), DATA_AXIS))


def check_divisible(batch_size: int, mesh: Mesh, microbatches: int = 1) -> None:
    """Refuse a batch that does not split evenly over the mesh's devices and, on each, into
    ``microbatches`` parts."""
    n = mesh.devices.size
    if not isinstance(microbatches, int) or microbatches < 1:
        raise ValueError(f"microbatches must be a positive integer; got {microbatches!r}")
    if batch_size % (n * microbatches):
        parts = f" x microbatches ({microbatches})" if microbatches > 1 else ""
        raise ValueError(f"batch_size ({batch_size}) must be divisible by the number of devices ({n}){parts}")


def microbatches_for(batch_size: int, devices: int, max_rows: int) -> int:
    """The fewest microbatches (see :func:`jaxscale.lm.train.train`) that give each of
    ``devices`` at most ``max_rows`` sequences at a time, splitting its share of the batch
    evenly."""
    if max_rows < 1 or batch_size % devices:
        raise ValueError(f"cannot split batches of {batch_size} over {devices} devices into parts of <= {max_rows} rows")
    share = batch_size // devices
    return next(k for k in range(1, share + 1) if share % k == 0 and share // k <= max_rows)


def replicate(tree: Any, mesh: Mesh) -> Any:
    """Place every leaf of ``tree`` on all devices of ``mesh``."""
    return jax.device_put(tree, replicated(mesh))


def shard_global_batch(batch: np.ndarray, mesh: Mesh, batch_axis: int = 0) -> jax.Array:
    """A global batch array split along ``batch_axis``; each process contributes its own rows.

    Every process computes the same deterministic global batch and keeps the rows of its
    addressable devices, so a multi-host run sees exactly the single-host batches.
    """
    sharding = batch_sharded(mesh, batch_axis)
    n_proc, index = jax.process_count(), jax.process_index()
    local = np.array_split(batch, n_proc, axis=batch_axis)[index]
    return jax.make_array_from_process_local_data(sharding, local, batch.shape)
