"""Memory a piece of work will need, checked before the work starts.

Loading a runs table and fitting it take memory in proportion to its rows (the fits sum their
objectives in chunks: :mod:`jaxscale.fitting.objective`). Each step estimates what it will need
from the sizes it is given and calls :func:`check_memory`, which refuses the step, with the
estimate, when the system has less memory available: one line the command line reports with exit
status 2, instead of an out-of-memory kill or XLA's ``RESOURCE_EXHAUSTED`` part-way through.
"""

from __future__ import annotations

from pathlib import Path

MEMINFO = Path("/proc/meminfo")


def available_bytes() -> int | None:
    """The memory available to a new allocation without swapping (Linux's ``MemAvailable``),
    or None where the system does not say."""
    try:
        lines = MEMINFO.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None


def gib(n_bytes: float) -> str:
    """``n_bytes`` in GiB, e.g. "3.2 GiB"."""
    return f"{n_bytes / 2**30:.1f} GiB"


def check_memory(needed: float, what: str, available: int | None = None) -> None:
    """Raise ``ValueError`` when ``needed`` bytes exceed ``available`` (default:
    :func:`available_bytes`; nothing is checked where it is unknown), naming ``what`` needs them.

    Args:
        needed: estimated peak bytes of the work.
        what: the work, as the message should name it (e.g. "fitting 5,750,000 rows").
        available: bytes available, if known to the caller.
    """
    available = available_bytes() if available is None else available
    if available is not None and needed > available:
        raise ValueError(f"{what} needs about {gib(needed)} of memory and {gib(available)} is available: "
                         "refused before starting (free memory, or fit fewer rows)")
