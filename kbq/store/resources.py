"""Where the knowledge (ontology/, kb/) and the grammar (query/) live: inside the wheel, or the repo,
or, for the knowledge, the folder KBQ_DATA_DIR names.

KBQ_DATA_DIR points kbq (library, CLI, server, builds) at other knowledge: a folder holding kb/
(its Turtle files replace the shipped kb/) and, optionally, ontology/ (its ontology, shapes, rules
and checks replace the shipped ones; without one, the shipped ontology is used). The snapshot is
keyed by its files' contents, so it gets its own snapshot in the same cache and never touches the
shipped one. The grammar, the language reference and the code stay the package's. The tests' tiny
knowledge base (tests/data/tiny_kb) is such a folder.

On the query path: plain os.path strings, no pathlib import (it costs a cold start ~5-10 ms).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs a cold start; annotations are strings (PEP 563)
if TYPE_CHECKING:
    from pathlib import Path

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the kbq package folder
KBQ_NS = "https://kbq.dev/ontology#"
KB_NS = "https://kbq.dev/kb/"
ASSERTED_GRAPH = "https://kbq.dev/graph/asserted"
INFERRED_GRAPH = "https://kbq.dev/graph/inferred"
SHAPES_FILE = "shapes.ttl"
DATA_DIR_ENV = "KBQ_DATA_DIR"


def data_root() -> str:
    """The folder holding the shipped ontology/, kb/ and query/ (wheel: kbq/_data; checkout: repo root)."""
    packaged = os.path.join(_PKG, "_data")
    return packaged if os.path.isdir(os.path.join(packaged, "ontology")) else os.path.dirname(_PKG)


def data_dir() -> str | None:
    """The folder KBQ_DATA_DIR names (checked: it must hold a kb/ folder), or None when unset."""
    chosen = os.environ.get(DATA_DIR_ENV)
    if not chosen:
        return None
    if not os.path.isdir(os.path.join(chosen, "kb")):
        from kbq.errors import KnowledgeFileError

        what = "is not a folder" if not os.path.isdir(chosen) else "holds no kb/ folder"
        raise KnowledgeFileError(chosen, None, f"{DATA_DIR_ENV} {what} (it names a folder with kb/ and, optionally, ontology/)")
    return os.path.abspath(chosen)


def knowledge_root(folder: str = "kb") -> str:
    """Where `folder` (kb or ontology) is read from: KBQ_DATA_DIR's when it has one, else the shipped one."""
    chosen = data_dir()
    if chosen is not None and os.path.isdir(os.path.join(chosen, folder)):
        return chosen
    return data_root()


def _listing(folder: str, suffix: str) -> list[str]:
    path = os.path.join(knowledge_root(folder.split(os.sep, 1)[0]), folder)
    try:
        names = sorted(n for n in os.listdir(path) if n.endswith(suffix))
    except FileNotFoundError:
        return []
    return [os.path.join(path, n) for n in names]


def knowledge_paths() -> list[str]:
    """Every Turtle file of the shipped TBox and ABox, in a stable order (shapes excluded)."""
    return [p for p in _listing("ontology", ".ttl") if not p.endswith(os.sep + SHAPES_FILE)] + _listing("kb", ".ttl")


def rule_paths() -> list[str]:
    """The SPARQL CONSTRUCT rules, one per file, applied in name order to a fixpoint."""
    return _listing(os.path.join("ontology", "rules"), ".rq")


def check_paths() -> list[str]:
    """SELECT queries (?subject ?message) that find inconsistencies after reasoning."""
    return _listing(os.path.join("ontology", "checks"), ".rq")


def owlrl_rule_paths() -> list[str]:
    """The OWL 2 RL subset of the `sparql` engine, as CONSTRUCT rules (applied with rule_paths)."""
    return _listing(os.path.join("ontology", "owlrl", "rules"), ".rq")


def owlrl_delta_dir() -> str:
    """Semi-naive forms of some of those rules (same file names), for rounds after the first."""
    return os.path.join(knowledge_root("ontology"), "ontology", "owlrl", "delta")


def owlrl_beyond_path() -> str:
    """The SELECT finding OWL vocabulary beyond that subset (the build then uses `reasonable`)."""
    return os.path.join(knowledge_root("ontology"), "ontology", "owlrl", "beyond.rq")


def engine_paths() -> list[str]:
    """Files the `sparql` engine reads besides the rules and checks (part of a snapshot's key)."""
    return [*owlrl_rule_paths(), *_listing(os.path.join("ontology", "owlrl", "delta"), ".rq"), owlrl_beyond_path()]


def shapes_path() -> str:
    return os.path.join(knowledge_root("ontology"), "ontology", SHAPES_FILE)


def grammar_path() -> str:
    return os.path.join(data_root(), "query", "kbq.lark")


# --- pathlib views, for build-time code ----------------------------------------------------


def _paths(items: list[str]) -> list[Path]:
    from pathlib import Path

    return [Path(p) for p in items]


def knowledge_files() -> list[Path]:
    return _paths(knowledge_paths())


def rule_files() -> list[Path]:
    return _paths(rule_paths())


def owlrl_rule_files() -> list[Path]:
    return _paths(owlrl_rule_paths())


def check_files() -> list[Path]:
    return _paths(check_paths())


def shapes_file() -> Path:
    from pathlib import Path

    return Path(shapes_path())


def grammar_file() -> Path:
    from pathlib import Path

    return Path(grammar_path())
