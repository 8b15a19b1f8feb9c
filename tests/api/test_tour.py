"""The Python tour of the docs (docs/snippets/tour.py) runs as written, on Epoch's runs: a fit
with a 1000-resample bootstrap, its summary and figures, a short posterior, a sensitivity study
and an allocation, in at most 15 lines; the README and the getting-started page show those lines."""

from __future__ import annotations

import contextlib
import io
import runpy

from tests.conftest import REPO_ROOT, shared_data_file

TOUR = REPO_ROOT / "docs" / "snippets" / "tour.py"


def test_the_tour_is_short_and_runs(monkeypatch):
    shared_data_file("chinchilla_svg_extracted_data.csv")
    assert len(TOUR.read_text().strip().splitlines()) <= 15
    monkeypatch.chdir(REPO_ROOT)  # the tour names the data as ../shared/data/, from the clone
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        names = runpy.run_path(str(TOUR))
    text = out.getvalue()
    fitted, posterior, study = names["fitted"], names["posterior"], names["study"]
    assert len(fitted.refits.converged) == 1000 and set(names["figures"]) == {"residuals", "isoflop"}
    alpha = fitted.summary().set_index("quantity").loc["alpha"]
    assert alpha.lower < alpha.estimate < alpha.upper  # Epoch's 0.3478 lies in there
    assert posterior.draws.kind == "nuts" and len(posterior.draws) == 600
    assert study.to_dict()["influence"]["n_runs"] == 240 and "reconciled exponent" in study.to_dict()["quantities"]
    for words in ("quantity", "estimate", "lower", "upper", "reconciled_exponent", "N*(1e+24)"):
        assert words in text


def test_the_readme_and_getting_started_show_the_tour():
    """The README's Python tour is the tested snippet, line for line; the docs include the file."""
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## A tour in Python", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert block == TOUR.read_text()
    assert "```{literalinclude} snippets/tour.py" in (REPO_ROOT / "docs" / "getting_started.md").read_text()
