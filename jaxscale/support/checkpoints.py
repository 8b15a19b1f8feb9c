"""Checkpoints of any pytree with its step and a JSON metadata dict (orbax).

A long job calls :meth:`Checkpoints.save` every so often and, on start, :meth:`Checkpoints.restore`
to continue from the latest saved step. Saves are synchronous and atomic (orbax writes to a
temporary directory and renames it), so a process killed with SIGKILL at any moment leaves either
the previous or the new checkpoint, never a half-written one.

    ckpt = Checkpoints("out/run-0")
    restored = ckpt.restore(like=state)          # None when nothing was saved yet
    if restored is not None:
        state, step, meta = restored.state, restored.step, restored.metadata
    ...
    ckpt.save(step, state, {"loss": 3.2})
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import jax
import orbax.checkpoint as ocp


class Restored(NamedTuple):
    """What :meth:`Checkpoints.restore` returns."""

    state: Any
    step: int
    metadata: dict[str, Any]


class Checkpoints:
    """The checkpoints of one job, in one directory, keeping the ``max_to_keep`` latest steps."""

    def __init__(self, directory: str | Path, max_to_keep: int = 2) -> None:
        if max_to_keep < 1:
            raise ValueError(f"max_to_keep must be >= 1; got {max_to_keep}")
        self.directory = Path(directory).absolute()
        options = ocp.CheckpointManagerOptions(
            max_to_keep=max_to_keep, create=True, enable_async_checkpointing=False
        )
        self._manager = ocp.CheckpointManager(
            self.directory, options=options, item_names=("state", "metadata")
        )

    def latest_step(self) -> int | None:
        """The latest saved step, or None when the directory holds no checkpoint."""
        return self._manager.latest_step()

    def save(self, step: int, state: Any, metadata: dict[str, Any] | None = None) -> None:
        """Save ``state`` (a pytree of arrays) at ``step`` with JSON-serialisable ``metadata``."""
        args = ocp.args.Composite(
            state=ocp.args.StandardSave(state),
            metadata=ocp.args.JsonSave(dict(metadata or {})),
        )
        self._manager.save(int(step), args=args, force=True)
        self._manager.wait_until_finished()

    def metadata(self, step: int | None = None) -> dict[str, Any] | None:
        """The metadata saved with the checkpoint at ``step`` (default: latest), read without its
        state (so a caller can refuse a checkpoint of other shapes before restoring it); None when
        nothing was saved."""
        step = self.latest_step() if step is None else step
        if step is None:
            return None
        out = self._manager.restore(int(step), args=ocp.args.Composite(metadata=ocp.args.JsonRestore()))
        return dict(out["metadata"] or {})

    def restore(self, like: Any, step: int | None = None) -> Restored | None:
        """Restore the checkpoint at ``step`` (default: latest) shaped and sharded like ``like``.

        ``like`` is a pytree with the same structure as the saved state (concrete arrays or
        ``jax.ShapeDtypeStruct``); returns None when there is nothing to restore.
        """
        step = self.latest_step() if step is None else step
        if step is None:
            return None
        abstract = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, like)
        args = ocp.args.Composite(
            state=ocp.args.StandardRestore(abstract), metadata=ocp.args.JsonRestore()
        )
        out = self._manager.restore(int(step), args=args)
        return Restored(out["state"], int(step), dict(out["metadata"] or {}))

    def close(self) -> None:
        self._manager.close()

    def __enter__(self) -> Checkpoints:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
