"""Readers are registered in one list (``jaxscale.trackers.sources.READERS``): a toy reader added in
a test is detected by its files, directories and URI scheme, read by ``load_runs`` and the
command line, offered by ``--source`` and named where the kinds are listed; the documentation
lists the registered kinds (issue 36, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxscale.cli import main
from jaxscale.trackers import sources
from jaxscale.trackers.logged import Logged, Reader, scalars_frame
from jaxscale.tables.table import read_runs_table

ROOT = Path(__file__).resolve().parents[2]


def _read_toy(source: str | Path, scale: float | None = None) -> Logged:
    """A ``.toy`` file (or a directory of them, or ``toy://PATH``): JSON {run: {"config": {...},
    "loss": [[step, value], ...]}}; ``scale`` multiplies the losses."""
    path = Path(str(source).removeprefix("toy://"))
    files = sorted(path.glob("*.toy")) if path.is_dir() else [path]
    runs = {name: run for file in files for name, run in json.loads(file.read_text()).items()}
    rows = [(name, "loss", step, value * (scale or 1.0)) for name, run in runs.items() for step, value in run["loss"]]
    return Logged("toy", str(source), scalars_frame(*map(list, zip(*rows))),
                  {name: run["config"] for name, run in runs.items()})


TOY = Reader("toy", _read_toy, "toy files (*.toy)", claims_file=lambda p: p.suffix == ".toy",
             claims_directory=lambda p: any(p.glob("*.toy")), schemes=("toy",), options=("scale",))


@pytest.fixture
def toy_file(tmp_path):
    runs = {f"r{n}": {"config": {"params": n * 1e6, "tokens_per_step": 1000},
                      "loss": [[s, 2 + 1 / n + 1 / s] for s in range(1, 6)]} for n in (1, 2, 4)}
    path = tmp_path / "runs.toy"
    path.write_text(json.dumps(runs))
    return path


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setattr(sources, "READERS", (*sources.READERS, TOY))


def test_a_registered_reader_is_detected_and_read_everywhere(registered, toy_file, capsys):
    assert sources.detect_kind(toy_file) == sources.detect_kind(toy_file.parent) == "toy"
    assert sources.detect_kind(f"toy://{toy_file}") == "toy"
    assert sources.source_kinds()[-1] == "toy"
    table = read_runs_table(toy_file, sizes_vary=False)
    assert table.report.kind == "toy" and sorted(table.run_id.tolist()) == ["r1"] * 5 + ["r2"] * 5 + ["r4"] * 5
    assert read_runs_table(f"toy://{toy_file}", sizes_vary=False).report.kind == "toy"
    assert main(["runs", str(toy_file), "--source", "toy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "toy"
    with pytest.raises(SystemExit):
        main(["runs", "--help"])
    assert "wandb, toy" in " ".join(capsys.readouterr().out.split())


def test_a_reader_takes_its_options_and_refuses_others(registered, toy_file):
    doubled = sources.read_logged(toy_file, scale=2.0).scalars["value"].to_numpy()
    assert list(doubled) == list(2 * sources.read_logged(toy_file).scalars["value"].to_numpy())
    with pytest.raises(ValueError, match="scale is read for toy sources only, not wandb"):
        sources.read_logged(toy_file, "wandb", scale=2.0)


def test_the_kinds_listed_in_messages_come_from_the_registry(registered, toy_file, tmp_path):
    with pytest.raises(ValueError, match="must be one of table, tensorboard, mlflow, wandb, toy; got 'nope'"):
        read_runs_table(toy_file, source_kind="nope")
    with pytest.raises(ValueError, match=r"URIs read: mlflow: sqlite, .*; toy: toy\)"):
        sources.detect_kind("gopher://host/runs")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"no runs jaxscale reads \(.*toy files \(\*\.toy\)\)"):
        sources.detect_kind(tmp_path / "empty")


def test_without_its_registration_the_toy_is_a_table_and_no_kind(toy_file, capsys):
    assert sources.detect_kind(toy_file) == "table"
    with pytest.raises(SystemExit) as exited:
        main(["runs", str(toy_file), "--source", "toy"])
    assert exited.value.code == 2 and "invalid choice: 'toy'" in capsys.readouterr().err


def test_a_reader_whose_package_is_missing_names_its_extra(monkeypatch, toy_file):
    needy = Reader("toy", _read_toy, "toy files", claims_file=TOY.claims_file, modules=("jaxscale_no_such_package",))
    monkeypatch.setattr(sources, "READERS", (*sources.READERS, needy))
    needs = r"reading toy runs needs jaxscale_no_such_package: pip install 'jaxscale\[trackers\]'"
    with pytest.raises(ValueError, match=needs):
        read_runs_table(toy_file)


def test_the_guide_lists_every_registered_kind():
    guide = (ROOT / "docs" / "guides" / "runs_from_trackers.md").read_text()
    listed = next(line for line in guide.splitlines() if line.startswith("Kinds (`--source KIND`):"))
    assert [word.strip("`.,") for word in listed.split(":", 1)[1].split()] == list(sources.source_kinds())
