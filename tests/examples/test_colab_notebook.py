"""The Colab notebook runs top to bottom on a CPU in its smoke mode, on one device and (a slow
test) data parallel over 8 forced CPU devices, from a directory of its own; its Colab-only cells
(installing, Google Drive) step aside outside Colab. The script with the same steps is run by
tests/lm/test_sweep.py."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from jaxscale.lm import presets
from tests.conftest import shared_data_file

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "colab_training.ipynb"


def _outputs(nb: nbformat.NotebookNode) -> str:
    """The text every cell printed or displayed."""
    texts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            texts.append(output.get("text", "") or data.get("text/markdown", "") or data.get("text/plain", ""))
    return "\n".join(texts)


@pytest.mark.slow
@pytest.mark.parametrize("devices", [1, 8])
def test_notebook_trains_the_smoke_preset_on_cpu_devices(tmp_path, monkeypatch, devices):
    corpus = shared_data_file(presets.SHARED_CORPUS.name)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    parameters = next(i for i, cell in enumerate(nb.cells) if "parameters" in cell.metadata.get("tags", []))
    nb.cells.insert(parameters + 1, nbformat.v4.new_code_cell(
        f'MODE = "smoke"\nCORPUS = {str(corpus)!r}\nOUT = {str(tmp_path / "out")!r}'))
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the kernel imports this checkout's jaxscale
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("XLA_FLAGS", f"--xla_force_host_platform_device_count={devices}")
    monkeypatch.delenv(presets.CORPUS_VARIABLE, raising=False)
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()

    printed = _outputs(nb)
    assert "not on Colab: nothing installed; using " + str(REPO / "jaxscale" / "__init__.py") in printed
    assert f": {devices} x cpu (cpu)" in printed
    assert "smoke mode: the smoke preset, 3 model size(s)" in printed and "1 microbatch(es) each" in printed
    runs = pd.read_csv(tmp_path / "out" / "smoke" / "runs.csv")
    assert runs.run_id.nunique() == 3 * 2 + 3 * 6  # 3 sizes x 2 rates, constant; 3 sizes x 6 cosine budgets
    assert (tmp_path / "out" / "smoke" / "curves.png").is_file()
    assert "| experiment 1 | total |" in printed  # Table 1's rows, as Markdown
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing written beside it
