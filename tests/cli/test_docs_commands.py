"""Every command line shown in the README and the docs uses today's options: each is parsed by
the command's own parser, and an option it does not know (an old spelling, CHANGELOG.md lists
them) fails here. Usage lines are read with their optional parts included (``[--json]``) and the
first of each set of alternatives (``epoch|chinchilla``); placeholders such as ``RUNS.csv`` parse
as the paths they stand for."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest

from jaxscale.cli import build_parser
from tests.conftest import REPO_ROOT

PAGES = [REPO_ROOT / "README.md", *sorted(p for p in (REPO_ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]


def _command_lines(text: str) -> list[str]:
    """The ``jaxscale ...`` lines of the code blocks and inline code of a page, continuations joined."""
    text = re.sub(r"\\\n\s*", " ", text)
    lines = [m.group(1) for m in re.finditer(r"`(jaxscale [^`]+)`", text)]
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL):
        stripped = (line.strip().lstrip("$! ") for line in block.splitlines())
        lines += [line for line in stripped if line.startswith("jaxscale ")]
    out = []
    for line in lines:
        line = re.split(r"\s+#|\s\||\s>|\s2>|\s&&|\s&$", line)[0].strip()
        line = re.sub(r"\[([^\]]*)\]", r"\1", line)  # optional parts are checked too
        out.append(re.sub(r"(\S+?)\|\S+", r"\1", line))  # a|b: the first alternative
    return out


def _parse_error(line: str) -> str:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(shlex.split(line)[1:])
    except SystemExit as exit_:
        return err.getvalue() if exit_.code else ""
    return ""


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_command_line_on_the_page_uses_todays_options(page):
    lines = [line for line in _command_lines(page.read_text()) if "--help" not in line]
    unknown = [(line, err.strip()) for line in lines if "unrecognized arguments" in (err := _parse_error(line))]
    assert unknown == []


def test_an_old_spelling_is_caught():
    assert _command_lines("```bash\njaxscale reconcile --spec epoch  # old\n```") == ["jaxscale reconcile --spec epoch"]
    assert "unrecognized arguments: --spec" in _parse_error("jaxscale reconcile --spec epoch")
