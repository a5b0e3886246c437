"""The package layout follows the data flow, and imports only go one way:
build -> store; lang -> store; serve -> api, lang, store; store imports no other kbq package.
Heavy build-time libraries are imported only under kbq/build. Every import counts, including
those inside functions (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "kbq"
SHARED = {"kbq.errors", "kbq.version", "kbq", "kbq.bounded", "kbq.sanitize"}  # leaf modules every layer may use
ALLOWED = {
    "store": {"store"},
    "build": {"build", "store"},
    "lang": {"lang", "store"},
    "serve": {"serve", "lang", "store", "api", "models", "output", "build"},
}
BUILD_ONLY = {"rdflib", "pyshacl", "owlrl", "reasonable", "pyrudof"}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "kbq" or len(parts) < 2 or ".".join(parts[:2]) in SHARED:
        return None
    return parts[1].removesuffix(".py")


MODULES = sorted(p for p in PKG.rglob("*.py"))


@pytest.mark.parametrize("leaf", sorted(SHARED - {"kbq"}))
def test_shared_leaf_modules_import_no_layer(leaf: str) -> None:
    """A module every layer may use must itself stand below every layer."""
    path = PKG / (leaf.split(".", 1)[1] + ".py")
    layers = sorted(m for m in _imports(path) if _layer(m) is not None)
    assert not layers, f"{leaf} is shared by every layer, so it may not import {layers}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_imports_follow_the_flow(path: Path) -> None:
    rel = path.relative_to(PKG)
    here = rel.parts[0] if len(rel.parts) > 1 else None
    imports = _imports(path)
    if here in ALLOWED:
        bad = sorted(m for m in imports if (layer := _layer(m)) is not None and layer not in ALLOWED[here])
        assert not bad, f"kbq/{rel} ({here}) may not import {bad}"
    if here != "build":
        heavy = sorted(m for m in imports if m.split(".")[0] in BUILD_ONLY)
        assert not heavy, f"kbq/{rel} imports build-time libraries {heavy}"


def test_the_rule_can_fail() -> None:
    """The checker sees a lazy import inside a function (so the test above can fail)."""
    source = "def f():\n    from kbq.lang import catalog\n"
    tree_imports = {n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)}
    assert "kbq.lang" in tree_imports and _layer("kbq.lang") == "lang" and "lang" not in ALLOWED["store"]


def _module_graph() -> dict[str, set[str]]:
    names = {}
    for path in MODULES:
        name = ".".join(path.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")
        names[name] = path
    return {name: {m for m in _imports(path) if m in names and m != name} for name, path in names.items()}


def test_no_import_cycle() -> None:
    """No module reaches itself through imports (lazy ones count): the workload model flows one way,
    language -> scenario -> evaluate -> forms (once lang/gpu/question and lang/workload/question
    imported each other)."""
    graph = _module_graph()

    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            module = todo.pop()
            if module not in seen:
                seen.add(module)
                todo += graph[module]
        return seen

    cycles = sorted(m for m in graph if m in reaches(m))
    assert not cycles, f"import cycles through {cycles}"
    assert "kbq.lang.workload.question" in reaches("kbq.lang.gpu.question")  # so the check above can fail
