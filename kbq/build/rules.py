"""Rule and check files (SPARQL): read and checked for their form, told apart by monotonicity,
and the consistency checks run. Shared by every engine; imports no rdflib (a build does not need it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph as ox

from kbq.errors import InconsistencyError, KnowledgeFileError


def load_rules(paths: list[Path], form: str = "CONSTRUCT") -> list[tuple[Path, str]]:
    """Read rule (CONSTRUCT) or check (SELECT) files: each must parse and be of that form."""
    rules = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            result = ox.Store().query(text)  # parse check against an empty store
        except SyntaxError as exc:
            raise KnowledgeFileError(str(path), None, f"rule does not parse: {exc}") from None
        found = "ASK"
        if isinstance(result, ox.QueryTriples):
            found = "CONSTRUCT"
        elif isinstance(result, ox.QuerySolutions):
            found = "SELECT"
        if found != form:
            what = "a rule must be a CONSTRUCT query"
            if form == "SELECT":
                what = "a check must be a SELECT ?subject ?message query"
            raise KnowledgeFileError(str(path), None, f"{what}; this is {found}")
        rules.append((path, text))
    return rules


_NON_MONOTONIC = re.compile(
    r"(?i)\bNOT\s+EXISTS\b|\bMINUS\b|\bOPTIONAL\b|\bGROUP\s+BY\b|\b(?:COUNT|SUM|MIN|MAX|AVG|SAMPLE|GROUP_CONCAT)\s*\("
)


def is_monotonic(text: str) -> bool:
    """Whether a rule only ever adds conclusions as the knowledge grows (no negation, no aggregate,
    no OPTIONAL). Such rules reach their fixpoint first; the others then see a complete closure,
    and an overlay build may start from a snapshot's monotonic closure (kbq.build.closure)."""
    return not _NON_MONOTONIC.search(re.sub(r"(?m)^\s*#.*$", "", text))


def check_consistency(store: ox.Store, checks: list[tuple[Path, str]]) -> None:
    """Run the inconsistency checks (SELECT ?subject ?message); raise listing every finding."""
    found = []
    for path, text in checks:
        result = store.query(text, use_default_graph_as_union=True)
        if not isinstance(result, ox.QuerySolutions):  # load_rules checked the form
            raise KnowledgeFileError(str(path), None, "a check must be a SELECT ?subject ?message query")
        for row in result:
            found.append(f"{row['subject'].value}: {row['message'].value} (check {path.name})")
    if found:
        raise InconsistencyError("inconsistent knowledge:\n  " + "\n  ".join(sorted(set(found))))
