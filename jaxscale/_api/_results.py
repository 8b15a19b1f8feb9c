"""What every result of a verb shares: a summary table, its JSON, its figures, a readable repr.

A result is a frozen dataclass of what the verb computed. :meth:`Result.to_dict` is the JSON
object ``jaxscale COMMAND --json`` prints (one source for both); :meth:`Result.summary` a
DataFrame with the columns quantity, estimate, lower, upper (95% intervals, NaN where there are
none) and more where useful; :meth:`Result.plot` the figures the command writes into
``--out``, as :class:`Figures`; :meth:`Result.save` writes them and the result's data files;
:meth:`Result.text` (also ``str(result)`` and the notebook's plain repr) the text the command
prints without ``--json``: one rendering of each result, written once, in its class.
"""

from __future__ import annotations

import base64
import functools
import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from jaxscale.support.json_native import json_native
from jaxscale.support.significant import significant_table

if TYPE_CHECKING:
    import pandas as pd

#: Resolution of every saved figure.
DPI = 110
#: The columns every summary starts with.
COLUMNS = ("quantity", "estimate", "lower", "upper")


class Figures(dict):
    """Figures by name (the file stem :meth:`save` writes), shown as images in a notebook."""

    def save(self, directory: str | Path, dpi: int = DPI) -> list[Path]:
        """Write every figure as ``directory/NAME.png`` (the directory is made if needed), each
        complete or absent (:func:`jaxscale.support.atomic.atomic_path`)."""
        from jaxscale.support.atomic import atomic_path

        directory = Path(directory)
        paths = []
        for name, figure in self.items():
            paths.append(directory / f"{name}.png")
            with atomic_path(paths[-1]) as tmp:
                figure.savefig(tmp, dpi=dpi, format="png")
        return paths

    def _repr_html_(self) -> str:
        parts = []
        for name, figure in self.items():
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=80)
            image = base64.b64encode(buffer.getvalue()).decode("ascii")
            parts.append(f"<figure><img src='data:image/png;base64,{image}'/><figcaption>{name}</figcaption></figure>")
        return "".join(parts)


def rows(entries: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """A summary table of ``entries`` (dicts with the keys of :data:`COLUMNS` and more; a missing
    or None number is NaN)."""
    import pandas as pd  # imported when a summary is asked for: commands that print none stay light

    listed = list(entries)
    frame = pd.DataFrame(listed) if listed else pd.DataFrame(columns=[COLUMNS[0]])  # no entries: no rows
    for column in COLUMNS[1:]:
        frame[column] = pd.to_numeric(frame[column], errors="coerce") if column in frame else math.nan
    return frame[[*COLUMNS, *(c for c in frame.columns if c not in COLUMNS)]]


def bounds(pair: Any) -> dict[str, float]:
    """``lower`` and ``upper`` of an interval given as a pair (None or a null bound: NaN)."""
    lo, hi = (None, None) if pair is None else pair
    return {"lower": math.nan if lo is None else lo, "upper": math.nan if hi is None else hi}


class Result:
    """The shared behaviour of every verb's result (the verbs' frozen dataclasses subclass it)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``jaxscale COMMAND --json`` (JSON-native: NaN and inf are None; a
        new object at each call)."""
        return json_native(self._numbers)

    @functools.cached_property
    def _numbers(self) -> dict[str, Any]:
        """The report, assembled once (:meth:`_report`)."""
        return self._report()

    def _report(self) -> dict[str, Any]:
        raise NotImplementedError

    def summary(self) -> pd.DataFrame:
        """The headline numbers: one row per quantity, columns quantity, estimate, lower, upper
        (the 95% interval; NaN where there is none) and more where useful."""
        raise NotImplementedError

    def plot(self) -> Figures:
        """The figures ``jaxscale COMMAND --out DIR`` writes, by name."""
        return Figures()

    def save(self, directory: str | Path) -> list[str]:
        """Write :meth:`plot`'s figures and the result's data files into ``directory``, then its
        ``manifest.json`` (each file's size and SHA-256, the record that the output is whole);
        the paths of the figures and data files.

        Each file is complete or absent, whenever the process stops, and one process at a time
        writes a directory (:mod:`jaxscale.support.atomic`: another one's writing is refused in
        one line naming it)."""
        from jaxscale.support.atomic import OutputLock, write_manifest

        directory = Path(directory)
        with OutputLock(directory):
            paths = [*self.plot().save(directory), *self._data_files(directory)]
            write_manifest(directory, paths)
        return [str(p) for p in paths]

    def _data_files(self, directory: Path) -> list[Path]:
        return []

    def _title(self) -> str:
        return type(self).__name__

    def text(self, files: Sequence[str | Path] = ()) -> str:
        """The result as text: what ``jaxscale COMMAND`` prints without ``--json``, and the
        notebook's plain repr.

        Args:
            files: the paths :meth:`save` wrote, listed where the command lists its files.

        Returns:
            The rendering, lines joined by newlines (no newline at the end).
        """
        numbers = self.to_dict()
        if files:
            numbers["files"] = [str(path) for path in files]
        return "\n".join(self._text(numbers))

    def _text(self, numbers: dict[str, Any]) -> list[str]:
        """The lines of :meth:`text`, from ``numbers`` (:meth:`to_dict`, and ``files`` where some
        were written); by default the title and the summary table."""
        return [self._title(), self.summary().to_string(index=False)]

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        """The summary as a notebook shows it: each estimate and its interval with the digits the
        interval justifies (:func:`~jaxscale.support.significant.significant_table`); the
        DataFrame of :meth:`summary` keeps full precision."""
        table = significant_table(self.summary())
        return f"<p><b>{self._title()}</b></p>{table.to_html(index=False, na_rep='')}"
