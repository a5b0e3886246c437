"""Load Turtle files into one rdflib graph, remembering which file states each subject.

Build-time only: the query path never imports this module (rdflib is slow to import).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph
import rdflib

from kbq.errors import KnowledgeFileError

_LINE = re.compile(r"line (\d+)")


@dataclass
class LoadedKnowledge:
    """The asserted graph and where each subject is stated (for error messages)."""

    graph: rdflib.Graph
    files: list[Path]
    subject_files: dict[rdflib.term.Node, set[str]] = field(default_factory=dict)


def check_turtle(path: Path, data: bytes) -> None:
    """Raise KnowledgeFileError with the file and line of the first Turtle syntax error."""
    try:
        for _ in pyoxigraph.parse(data, format=pyoxigraph.RdfFormat.TURTLE, base_iri=path.as_uri()):
            pass
    except SyntaxError as exc:
        match = _LINE.search(str(exc))
        raise KnowledgeFileError(str(path), int(match.group(1)) if match else None, str(exc)) from None


def load(files: list[Path]) -> LoadedKnowledge:
    graph = rdflib.Graph()
    subject_files: dict[rdflib.term.Node, set[str]] = defaultdict(set)
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise KnowledgeFileError(str(path), None, f"cannot read: {exc.strerror}") from None
        check_turtle(path, data)
        part = rdflib.Graph()
        part.parse(data=data, format="turtle", publicID=path.as_uri())
        for s in part.subjects(unique=True):
            subject_files[s].add(path.name)
        graph += part
    return LoadedKnowledge(graph=graph, files=files, subject_files=dict(subject_files))
