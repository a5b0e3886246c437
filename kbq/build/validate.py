"""SHACL validation of the knowledge (data and ontology) with pyshacl. Build-time only."""

from __future__ import annotations

from pathlib import Path

import rdflib
from rdflib.namespace import SH

from kbq.build.loader import LoadedKnowledge, load
from kbq.errors import ValidationError, Violation
from kbq.store import resources


def _short(node: rdflib.term.Node) -> str:
    text = str(node)
    for ns, prefix in ((resources.KB_NS, "kb:"), (resources.KBQ_NS, "kbq:")):
        if text.startswith(ns):
            return prefix + text[len(ns) :]
    return text if not isinstance(node, rdflib.BNode) else "[blank node]"


def violations(loaded: LoadedKnowledge, shapes: Path | None = None) -> list[Violation]:
    import pyshacl

    shapes_graph = rdflib.Graph().parse(shapes or resources.shapes_file(), format="turtle")
    conforms, report, _text = pyshacl.validate(
        loaded.graph, shacl_graph=shapes_graph, inference="none", advanced=False, allow_warnings=True
    )
    if conforms:
        return []
    found = []
    referrers: dict[str, set[str]] | None = None
    for result in report.subjects(rdflib.RDF.type, SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        path = report.value(result, SH.resultPath)
        message = report.value(result, SH.resultMessage)
        files = loaded.files_of(focus) if focus is not None else ()
        if not files and focus is not None:  # a thing only referred to (a source URL): the files that refer to it
            if referrers is None:
                referrers = {}
                for subj, _p, obj in loaded.triples:
                    referrers.setdefault(str(obj), set()).update(loaded.files_of(subj))
            files = tuple(sorted(referrers.get(str(focus), ())))
        found.append(
            Violation(
                subject=_short(focus) if focus is not None else "?",
                path=_short(path) if path is not None else None,
                message=str(message or "violates a shape"),
                files=files,
            )
        )
    return sorted(found, key=lambda v: (v.files, v.subject, v.path or "", v.message))


def validate_graph(loaded: LoadedKnowledge) -> None:
    """Raise ValidationError listing every violation."""
    found = violations(loaded)
    if found:
        raise ValidationError(found)


def validate_files(extra: list[Path] | None = None, *, shipped: bool = True) -> list[Violation]:
    files = (resources.knowledge_files() if shipped else []) + list(extra or [])
    return violations(load(files))
