"""Sphinx configuration of jaxscale's documentation.

Build (from the repository root, with ``pip install '.[docs]'`` and ``../shared/data`` beside the
clone, which the executed notebooks read)::

    sphinx-build -W --keep-going -n -b html docs docs/_build/html

Warnings are errors (``-W``) and every cross-reference must resolve (``-n``, nitpicky). The
build fetches nothing from the network: no intersphinx inventories, no widget scripts, MathJax 3
from the copy that sphinx-mathjax-offline bundles (served from ``_static/mathjax``, not a CDN),
and the theme's fonts and scripts are the copies bundled in its wheel.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from docutils import nodes

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # document this checkout's jaxscale, not an installed copy
sys.path.insert(0, str(DOCS / "_ext"))
# The executed notebooks run in their own kernels: point them at the same checkout.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
# NumPyro imports tqdm.auto, which warns in a kernel without ipywidgets (whose widgets would need
# scripts from a CDN here); only that message is silenced, every other warning stays on the page.
os.environ["PYTHONWARNINGS"] = "ignore:IProgress not found"

import jaxscale  # noqa: E402

project = "jaxscale"
author = "the jaxscale authors"
copyright = "2026, the jaxscale authors"
release = version = jaxscale.__version__

extensions = [
    "myst_nb",  # MyST markdown pages and executed notebooks (it loads myst_parser itself)
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx.ext.mathjax",  # formulas: :math: in docstrings, $...$ and $$...$$ in pages
    "sphinx-mathjax-offline",  # ... typeset by the MathJax 3 bundled in its wheel, copied into _static
    "existing_refs",  # docs/_ext: a role naming a real internal object renders as code
]

exclude_patterns = ["_build", "_ext", "**.ipynb_checkpoints", "snippets"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

# --- MyST ------------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "amsmath"]
myst_heading_anchors = 3  # links such as guides/fit.md#bootstrap resolve to the heading

# --- executed notebooks ----------------------------------------------------------------------
nb_execution_mode = "force"  # every build runs every notebook: CI proves they still execute
nb_execution_timeout = 300  # seconds per cell; each notebook runs in well under 2 minutes
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_show_tb = True  # and its traceback is in the build log
nb_merge_streams = True
nb_ipywidgets_js = {}  # no widget scripts from a CDN
nb_execution_excludepatterns = [
    # The Colab notebook trains a sweep (its smoke mode on a CPU: a minute or more, writing under
    # its OUT folder); tests/examples/test_colab_notebook.py executes it. Here it is shown.
    "notebooks/colab_training.ipynb",
]

# --- API reference ---------------------------------------------------------------------------
autodoc_typehints = "description"  # types in the parameter list, where napoleon puts them
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
# defaults as written in the source (``law=chinchilla.LAW``), not the repr of the object they
# name (a Law's repr holds its published parameter sets, which the signature parser mistakes
# for cross-references)
autodoc_preserve_defaults = True
autodoc_default_options = {"members": False, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_rtype = False
add_module_names = False

# Cross-references must resolve. Without intersphinx (which would download other projects'
# inventories) a type hint or role naming a class of JAX, NumPy or pandas has no page to link to;
# docs/_ext/existing_refs.py renders such a name as code when it imports, as it does for jaxscale's
# internal objects, and leaves a name that does not import to fail the build. So no target needs
# to be ignored: add one here, with the reason, only for a name that cannot be imported at all.
nitpicky = True
nitpick_ignore: list[tuple[str, str]] = []

# --- HTML ------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "jaxscale"
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,  # nothing to download that the source does not hold
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
}
html_static_path: list[str] = []
html_last_updated_fmt = None


def _ipython_lexer(app, docname, source):
    """Highlight a notebook saved without a kernel's language info as IPython (whose ``!shell``
    lines are not Python), the lexer a Python kernel reports when it runs the notebook."""
    if app.env.doc2path(docname).suffix != ".ipynb":
        return
    notebook = json.loads(source[0])
    info = notebook.setdefault("metadata", {}).setdefault("language_info", {})
    if info.get("name", "python") == "python" and "pygments_lexer" not in info:
        info["pygments_lexer"] = "ipython3"
        source[0] = json.dumps(notebook)


_REMOTE_SCRIPT = re.compile(r"""<script[^>]*\bsrc=["'](?:https?:)?//""")


def _only_local_scripts(app, exception):
    """Fail the build when a page loads a script from the network (MathJax from a CDN, say): the
    site must work offline, from the files the build wrote."""
    if exception is not None or app.builder.format != "html":
        return
    remote = [str(page.relative_to(app.outdir)) for page in Path(app.outdir).rglob("*.html")
              if _REMOTE_SCRIPT.search(page.read_text(encoding="utf-8"))]
    if remote:
        raise RuntimeError(f"pages load scripts from the network: {', '.join(sorted(remote))}")


def _public_titles(app, doctree, docname):
    """Title a link to a class by the name the reference documents it under: a type hint names a
    result by the module that defines it (``jaxscale._api.fit.FitReport``), which Sphinx resolves
    as an alias of ``jaxscale.FitReport`` but would show, on hover, as the private path."""
    objects = app.env.get_domain("py").objects
    for reference in doctree.findall(nodes.reference):
        entry = objects.get(reference.get("reftitle", ""))
        if entry is not None and entry.aliased:
            reference["reftitle"] = entry.node_id


def setup(app):
    app.connect("source-read", _ipython_lexer)
    app.connect("doctree-resolved", _public_titles)
    app.connect("build-finished", _only_local_scripts)
