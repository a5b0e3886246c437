"""Where the shipped knowledge (ontology/, kb/, query/) lives: inside the wheel, or the repo."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent
KBQ_NS = "https://kbq.dev/ontology#"
KB_NS = "https://kbq.dev/kb/"
ASSERTED_GRAPH = "https://kbq.dev/graph/asserted"
INFERRED_GRAPH = "https://kbq.dev/graph/inferred"
SHAPES_FILE = "shapes.ttl"


def data_dir() -> Path:
    """The folder holding ontology/, kb/ and query/ (wheel: kbq/_data; checkout: repo root)."""
    packaged = _PKG / "_data"
    return packaged if (packaged / "ontology").is_dir() else _PKG.parent


def knowledge_files() -> list[Path]:
    """Every Turtle file of the shipped TBox and ABox, in a stable order (shapes excluded)."""
    root = data_dir()
    files = sorted((root / "ontology").glob("*.ttl")) + sorted((root / "kb").glob("*.ttl"))
    return [f for f in files if f.name != SHAPES_FILE]


def rule_files() -> list[Path]:
    """The SPARQL CONSTRUCT rules, one per file, applied in name order to a fixpoint."""
    return sorted((data_dir() / "ontology" / "rules").glob("*.rq"))


def check_files() -> list[Path]:
    """SELECT queries (?subject ?message) that find inconsistencies after reasoning."""
    return sorted((data_dir() / "ontology" / "checks").glob("*.rq"))


def shapes_file() -> Path:
    return data_dir() / "ontology" / SHAPES_FILE


def grammar_file() -> Path:
    return data_dir() / "query" / "kbq.lark"
