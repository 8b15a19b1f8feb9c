"""The layers of docs/architecture.md hold in the code: every import, lazy ones inside functions
included, goes to the module's own layer or one below it; no two modules import each other,
directly or round a longer loop; the two wings never import each other; and the engine loads
no wing dependency."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jaxscale"

#: Layer of each part of the package, bottom (0) to top, as docs/architecture.md lists them.
LAYERS = {
    "support": 0, "core": 1, "tables": 2, "trackers": 2, "laws": 3, "optimum": 4, "fitting": 5, "determinacy": 6, "curves": 6, "accuracy": 6,
    "hyperparameters": 6, "reconciliation": 6, "inference": 7, "sensitivities": 8, "planning": 9, "networks": 10,
    "lm": 11, "word2vec": 11, "plots": 12, "_api": 13, "__init__": 14, "cli": 15, "__main__": 15,
}
WINGS = {"lm", "word2vec"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def imports_of(path: Path, module: str) -> set[str]:
    """Every jaxscale module ``path`` imports, at any depth of its code."""
    found = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "jaxscale"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "jaxscale":
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                is_module = (PACKAGE.parent / Path(*candidate.split("."))).with_suffix(".py").is_file() or (
                    PACKAGE.parent / Path(*candidate.split(".")) / "__init__.py").is_file()
                found.add(candidate if is_module else base)
    return found


def import_graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p, module_name(p)) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_part_of_the_package_has_a_layer():
    parts = {part_of(m) for m in import_graph()}
    assert parts <= set(LAYERS), f"parts without a layer in LAYERS: {sorted(parts - set(LAYERS))}"


def test_no_import_goes_up_a_layer_or_across_the_wings():
    upward = []
    for module, targets in import_graph().items():
        for target in targets:
            here, there = part_of(module), part_of(target)
            if target == "jaxscale":
                there = "__init__"
            if LAYERS[there] > LAYERS[here] or (here in WINGS and there in WINGS and here != there):
                upward.append(f"{module} -> {target}")
    assert not upward, "imports against the layers:\n" + "\n".join(sorted(upward))


def test_no_import_cycles():
    graph = {m: {t for t in targets if t in import_graph_modules()} for m, targets in import_graph().items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt == node:
                continue
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def import_graph_modules() -> set[str]:
    return {module_name(p) for p in PACKAGE.rglob("*.py")}


@pytest.mark.parametrize("statement", [
    "import jaxscale.fitting.approach3, jaxscale.fitting.bootstrap, jaxscale.inference.refit, "
    "jaxscale.sensitivities.study, jaxscale.reconciliation.pipeline, jaxscale.optimum.allocation",
    "import jaxscale.cli.fit, jaxscale.cli.bayes, jaxscale.cli.reconcile",
    "import jaxscale; jaxscale.fit; jaxscale.bayes; jaxscale.load_runs",
])
def test_the_engine_loads_no_wing_dependency(statement):
    wing_only = ("flax", "orbax", "tokenizers")
    code = f"import sys; {statement}; print(sorted({{m.split('.')[0] for m in sys.modules}} & set({wing_only!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


#: The faces of one subject, which share its name: a verb (``_api``), its command (``cli``) and its
#: figures (``plots``); a wing's command and figures beside the wing's own module.
FACES = {"_api", "cli", "plots"}
#: Modules of one name in two engine or wing packages that hold the same subject, and why.
SAME_SUBJECT = {
    "grouped.py": "one law on several groups of runs, some coordinates shared: the fit (fitting) and its posterior (inference)",
    "train.py": "each wing's training loop (lm: the transformer; word2vec: skip-gram/CBOW)",
    "word2vec.py": "the word2vec network (networks), its command (cli) and figures (plots)",
    "sweep.py": "the transformer sweep (lm), its command (cli) and figures (plots)",
}


def test_modules_of_one_name_hold_one_subject():
    """Two modules of one name are either the faces of one verb (``_api``, ``cli``, ``plots``) or
    listed in :data:`SAME_SUBJECT` with the subject they share; any other pair is a collision
    (``fitting/design.py`` beside ``jaxscale.design``, three ``schedules.py``) to rename."""
    by_name: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(path.parent.name)
    collisions = {name: sorted(parts) for name, parts in by_name.items()
                  if len(parts) > 1 and name not in SAME_SUBJECT and not set(parts) <= FACES}
    assert not collisions, f"modules of one name with different subjects (rename one): {collisions}"
