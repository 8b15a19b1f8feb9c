"""Several JAX processes training one model: start-up, the main process, and losing a process.

A multi-process run is one process per host (a TPU pod slice) or per GPU, each seeing its local
devices; :func:`initialize` joins them through ``jax.distributed.initialize`` before any JAX
computation. On Cloud TPU, SLURM and Open MPI, JAX detects the processes itself; elsewhere every
process is given the coordinator's address (process 0's host and a free port), the number of
processes and its own index. Process 0 writes the shared files (:func:`is_main_process`); the
checkpoint directory must be on storage all processes see.

When one process dies, the others cannot finish a step, and they stop in one of two ways. A JAX
operation that fails in Python (a gloo collective that sees the connection close, or a barrier
failed by the coordination service) becomes :class:`ProcessLost` in :func:`lost_process_guard`,
whose message says where the last checkpoint is, and :func:`exit_now` ends the process without
JAX's exit handler (its shutdown barrier would wait for the dead process). A survivor blocked
inside a collective that never fails, or one whose coordinator died, is ended by JAX's
coordination service once the dead process has missed its heartbeats for
``heartbeat_timeout_s``, with JAX's fatal line ("... This most likely indicates that another task
died ..."); JAX offers no public hook to change that. Either way no process hangs, and relaunching
every process with the same command resumes from the last checkpoint.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import NoReturn

import jax

#: JAX's default: seconds without a heartbeat after which a process counts as dead.
HEARTBEAT_TIMEOUT_S = 100


class ProcessLost(RuntimeError):
    """A collective of a multi-process run failed: another process has most likely died."""


def initialize(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    heartbeat_timeout_s: int | None = None,
) -> None:
    """Join a multi-process run: ``jax.distributed.initialize`` with these arguments; those left
    out are detected by JAX on Cloud TPU, SLURM and Open MPI (the coordinator also from
    ``JAX_COORDINATOR_ADDRESS``).

    ``heartbeat_timeout_s`` (default :data:`HEARTBEAT_TIMEOUT_S`) is how long the others wait for
    a silent process before they stop. Must run before any JAX computation; a second call does
    nothing. Raises ValueError for arguments that name no process or address (JAX would fail
    on them with an IndexError or an unrelated message).
    """
    check_process_arguments(coordinator, num_processes, process_id, heartbeat_timeout_s)
    if not jax.distributed.is_initialized():
        jax.distributed.initialize(
            coordinator, num_processes, process_id,
            heartbeat_timeout_seconds=heartbeat_timeout_s or HEARTBEAT_TIMEOUT_S,
        )  # fmt: skip


def check_process_arguments(coordinator: str | None, num_processes: int | None, process_id: int | None,
                            heartbeat_timeout_s: int | None) -> None:
    """``HOST:PORT`` with a port number, at least one process, an id below their number, a
    positive timeout (each where given)."""
    host, _, port = (coordinator or "").rpartition(":")
    if coordinator is not None and not (host and port.isdigit()):
        raise ValueError(f"--coordinator must be HOST:PORT (e.g. 10.0.0.1:1234); got {coordinator!r}")
    if num_processes is not None and num_processes < 1:
        raise ValueError(f"--num-processes must be >= 1; got {num_processes}")
    if process_id is not None and not 0 <= process_id < (num_processes or process_id + 1):
        raise ValueError(f"--process-id must be in [0, --num-processes); got {process_id} of {num_processes}")
    if heartbeat_timeout_s is not None and heartbeat_timeout_s < 1:
        raise ValueError(f"--heartbeat-timeout must be >= 1 second; got {heartbeat_timeout_s}")


def is_main_process() -> bool:
    """True in process 0, which writes the files of a multi-process run (and in a lone process)."""
    return jax.process_index() == 0


def sync(name: str) -> None:
    """Wait until every process reaches the point called ``name`` (nothing in a lone process)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


@contextlib.contextmanager
def lost_process_guard(advice: str) -> Iterator[None]:
    """In a multi-process run, re-raise a failed JAX operation as :class:`ProcessLost` with
    ``advice`` (what was kept, how to resume); in a lone process, change nothing."""
    try:
        yield
    except jax.errors.JaxRuntimeError as err:
        if jax.process_count() == 1:
            raise
        cause = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ProcessLost(
            f"process {jax.process_index()} of {jax.process_count()} stopped: a collective failed "
            f"({cause}), so another process has most likely died; {advice}"
        ) from err


def exit_now(message: str, status: int = 1) -> NoReturn:
    """Print ``message`` on stderr and end the process at once, skipping JAX's exit handler,
    whose shutdown barrier would wait for a dead process and then abort."""
    sys.stdout.flush()
    print(message, file=sys.stderr, flush=True)
    os._exit(status)
