"""A new user's first hour, run for real: every command line of the README and of the getting-started
page, as written, in a fresh virtual environment where jaxscale is installed (not editable) from a
fresh clone.

Slow (opt-in: ``python -m pytest -m slow tests/cli/test_fresh_install.py``): it installs the package
(the pages' ``pip install`` lines, each as written) and runs every command, the smoke sweep
included. The layout is a user's: a workspace holding the clone and ``shared/`` beside it (a link
to the data the suite reads); the lines run from the root of the clone, as the Quickstart says, so
``../shared/data/...`` means what the pages say. The ``jaxscale`` script imports the installed copy
(a console script's first path is its own folder, not the working directory), and the test checks,
from a folder outside the clone, that the environment imports jaxscale from its site-packages. The
environment sees the machine's site packages (``--system-site-packages``), so the dependencies are
not downloaded again.

The placeholders of the tour stand for real tables: ``RUNS.csv`` for Epoch's extraction of the
Chinchilla runs, ``A.csv`` and ``B.csv`` for those runs and the same runs at 1% lower loss (a recipe
B that saves compute). Inline code that names a command in prose (``jaxscale sweep``, ``jaxscale
COMMAND --help``) is not a command line. One line is not run: the Quickstart's test command, which is
the suite this file belongs to (CI runs that exact line)."""

from __future__ import annotations

import os
import re
import subprocess
import venv
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import REPO_ROOT, SHARED_DATA

pytestmark = pytest.mark.slow

PAGES = (REPO_ROOT / "README.md", REPO_ROOT / "docs" / "getting_started.md")
#: The Quickstart's second command: this suite itself.
THE_SUITE = "pip install '.[test]' && python -m pytest"
EPOCH = "../shared/data/chinchilla_svg_extracted_data.csv"


def documented_lines(text: str) -> list[str]:
    """The shell lines of a page's ``bash`` blocks (comments dropped) and its inline
    ``jaxscale ...`` command lines, in the order they appear on the page."""
    found: list[tuple[int, str]] = []
    for block in re.finditer(r"```bash\n(.*?)```", text, re.DOTALL):
        for line in block.group(1).splitlines():
            line = re.split(r"\s+#", line)[0].strip()
            if line:
                found.append((block.start(), line))
    found += [(m.start(), m.group(1)) for m in re.finditer(r"`(jaxscale [^`]+)`", text) if _is_command_line(m.group(1))]
    return [line for _, line in sorted(found, key=lambda item: item[0])]


def _is_command_line(code: str) -> bool:
    """Whether inline code is a command to run: a command with arguments, none of them a
    metasyntactic name in capitals (COMMAND) other than the tour's tables."""
    words = code.split()
    return len(words) > 2 and not any(re.fullmatch(r"[A-Z_]+", w) for w in words)


def _placeholders_filled(line: str) -> str:
    for placeholder, path in {"RUNS.csv": EPOCH, "A.csv": "A.csv", "B.csv": "B.csv"}.items():
        line = re.sub(rf"(?<![\w/.]){re.escape(placeholder)}", path, line)
    return line


def _run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)


def test_documented_lines_are_found():
    """The reader finds the Quickstart, the tour and the README's table (fast, but it belongs here)."""
    lines = [line for page in PAGES for line in documented_lines(page.read_text())]
    assert "pip install . && jaxscale reconcile" in lines and THE_SUITE in lines
    assert any(line.startswith("jaxscale sweep --preset smoke") for line in lines)
    assert any("--method approach2" in line for line in lines)
    assert not {"jaxscale sweep", "jaxscale COMMAND --help"} & set(lines)


def test_every_documented_line_runs_from_a_fresh_install(tmp_path):
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared data folder {SHARED_DATA} is absent")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "shared").symlink_to(SHARED_DATA.parent, target_is_directory=True)
    clone, user, env_dir = workspace / "jaxscale", workspace / "user", tmp_path / "venv"
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(clone)], check=True)
    user.mkdir()
    epoch = pd.read_csv(SHARED_DATA / "chinchilla_svg_extracted_data.csv")
    epoch.to_csv(clone / "A.csv", index=False)
    epoch.assign(loss=epoch["loss"] * 0.99).to_csv(clone / "B.csv", index=False)
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}", VIRTUAL_ENV=str(env_dir), MPLBACKEND="Agg")

    lines = [line for page in PAGES for line in documented_lines(page.read_text())]
    assert lines.count(THE_SUITE) == 2  # the README's and the getting-started page's Quickstart
    failures, ran = [], 0
    for line in dict.fromkeys(lines):  # each distinct line once, in page order (installs first)
        if line == THE_SUITE:
            continue
        done = _run(_placeholders_filled(line), clone, env)
        ran += 1
        if done.returncode != 0 or "Traceback" in done.stderr:
            failures.append(f"{line!r}: exit {done.returncode}: {done.stderr.strip()[-600:]}")
        if ran == 1:  # after the first install: the copy imported is the installed one, not the clone's
            found = _run("python -c 'import jaxscale; print(jaxscale.__file__)'",
                         user, env).stdout.strip()
            assert found.startswith(str(env_dir)), f"jaxscale imported from {found}, not the fresh environment"
    assert ran >= 15
    assert failures == [], "\n".join(failures)
