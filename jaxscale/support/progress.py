"""Progress bars that suit where stderr goes: tqdm's bar on a terminal, plain lines in a log.

tqdm redraws its bar with carriage returns and moves the cursor with ANSI escapes for nested
bars, so in a file or a CI log (``2> log``) every redraw becomes a line of control characters.
:func:`progress_bar` returns tqdm's bar when stderr is a terminal or a notebook is running, and
otherwise a :class:`LineProgress`, which writes one plain line when it starts, one each time the
count passes another tenth of the total and one when it closes: at most 12 lines per bar.
Every progress bar of the package comes from here.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

from tqdm.auto import tqdm as auto_tqdm
from tqdm.autonotebook import (
    tqdm as notebook_or_std_tqdm,  # imported by tqdm.auto: no warning
)
from tqdm.std import tqdm as std_tqdm

#: A line of a :class:`LineProgress`: ``desc:  40% 40/100 [00:12<00:18, 3.25it/s, loss=6.2]``.
LINE_FORMAT = "{desc}: {percentage:3.0f}% {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


def interactive() -> bool:
    """Whether bars can redraw in place: stderr is a terminal, or tqdm found a notebook."""
    return notebook_or_std_tqdm is not std_tqdm or bool(getattr(sys.stderr, "isatty", lambda: False)())


class LineProgress:
    """The part of tqdm's interface the package uses, written as plain lines to stderr.

    A line is written at the start, whenever ``n`` enters a new tenth of ``total``, and at
    :meth:`close` (if the count moved since the last line); iterating closes at the end, as
    tqdm does.
    """

    def __init__(
        self,
        iterable: Iterable[Any] | None = None,
        *,
        total: float | None = None,
        initial: float = 0,
        desc: str = "",
        unit: str = "it",
        unit_scale: bool = False,
    ) -> None:
        if total is None:
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable, self.total, self.n, self.initial = iterable, total, initial, initial
        self.desc, self.unit, self.unit_scale = desc, unit, unit_scale
        self.postfix = ""
        self._closed = False
        self._start = time.perf_counter()
        self._written_n = self._written_tenth = None
        self._write()

    def _tenth(self) -> int:
        return int(10 * self.n / self.total) if self.total else 10

    def _write(self) -> None:
        line = std_tqdm.format_meter(
            self.n, self.total, time.perf_counter() - self._start, prefix=self.desc, unit=self.unit,
            unit_scale=self.unit_scale, postfix=self.postfix or None, bar_format=LINE_FORMAT,
            initial=self.initial,
        )  # fmt: skip
        print(line, file=sys.stderr, flush=True)
        self._written_n, self._written_tenth = self.n, self._tenth()

    def update(self, n: float = 1) -> None:
        self.n += n
        if self._tenth() > self._written_tenth:
            self._write()

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True, **kwargs: Any) -> None:
        """Shown at the end of the next line, as ``key=value`` pairs (``refresh`` is tqdm's, unused)."""
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{key}={value}" for key, value in items.items())

    def close(self) -> None:
        if not self._closed and self.n != self._written_n:
            self._write()
        self._closed = True

    def __iter__(self) -> Iterator[Any]:
        for item in self.iterable:  # type: ignore[union-attr]
            yield item
            self.update(1)
        self.close()


def progress_bar(
    iterable: Iterable[Any] | None = None, *, leave: bool = True, disable: bool = False, **kwargs: Any
) -> Any:
    """A progress bar over ``iterable`` (or of ``total`` units advanced by ``update``).

    ``kwargs`` are :class:`LineProgress`'s (``total``, ``initial``, ``desc``, ``unit``,
    ``unit_scale``), which tqdm takes too. On a terminal or in a notebook this is
    ``tqdm.auto.tqdm`` (``leave``: keep the finished bar); elsewhere a :class:`LineProgress`.
    ``disable`` gives tqdm's no-op bar.
    """
    if disable or interactive():
        return auto_tqdm(iterable, leave=leave, disable=disable, **kwargs)
    return LineProgress(iterable, **kwargs)
