"""Import modules on a background thread while the main thread compiles."""

from __future__ import annotations

import importlib
import threading


def import_in_background(*modules: str) -> threading.Thread:
    """Start importing ``modules`` on a daemon thread and return it.

    XLA compilation releases the GIL, so an import started just before it (matplotlib for the
    figures, ~0.4 s) runs on the otherwise idle core instead of after it. Only modules the main
    thread does not import meanwhile belong here; a later ``import`` of one of them simply waits
    for the thread to finish it (Python's per-module import locks), and a failure there is
    raised again by that later import, where it is reported as usual.
    """

    def load() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the main thread's own import reports it
                return

    thread = threading.Thread(target=load, name="jaxscale-preload", daemon=True)
    thread.start()
    return thread
