"""SHACL validation of the knowledge (data and ontology). Build-time only.

Three validators, one report: `sparql` (the build's: the shapes compiled to SPARQL queries run
in the build's own store, kbq.build.shacl_sparql; on the shipped KB about 20x faster than rudof),
rudof (Rust, pyrudof: for shapes beyond what that compiler understands) and pySHACL (the
reference, which tests run against both on good and bad files: the same focus nodes, paths,
messages and constraint components).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal as TypingLiteral

import pyoxigraph as ox

from kbq.build.loader import ASSERTED, LoadedKnowledge, load
from kbq.errors import ValidationError, Violation
from kbq.store import resources

Validator = TypingLiteral["sparql", "rudof", "pyshacl"]
DEFAULT_VALIDATOR: Validator = "sparql"
# (focus node, path IRI or None, message) of one violation
Result = tuple[ox.NamedNode | ox.BlankNode | ox.Literal | None, str | None, str]


def _short(text: str | None) -> str | None:
    if text is None:
        return None
    for ns, prefix in ((resources.KB_NS, "kb:"), (resources.KBQ_NS, "kbq:")):
        if text.startswith(ns):
            return prefix + text[len(ns) :]
    return "[blank node]" if text.startswith("_:") else text


def _unquote(message: str) -> str:
    """rudof's message is a Turtle literal ("text" or "text"@en); the text."""
    message = message.strip()
    if message.startswith('"') and '"' in message[1:]:
        return message[1 : message.rindex('"')].replace('\\"', '"')
    return message


def _rudof(loaded: LoadedKnowledge, shapes: Path) -> list[Result]:
    import pyrudof

    rudof = pyrudof.Rudof(pyrudof.RudofConfig())
    data = loaded.store.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ASSERTED)
    rudof.read_data((data or b"").decode("utf-8"), pyrudof.RDFFormat.NTriples)
    rudof.read_shacl(shapes.read_text(encoding="utf-8"))
    report = rudof.validate_shacl()
    if report.conforms:
        return []
    found: list[Result] = []
    for v in report.violations:
        if str(v.severity) != "Violation":
            continue
        focus = v.focus_node
        node: ox.NamedNode | ox.BlankNode | None = None
        if focus:
            node = ox.BlankNode(focus[2:]) if focus.startswith("_:") else ox.NamedNode(focus)
        path = v.path if v.path and not v.path.startswith("_:") else None
        found.append((node, path, _unquote(v.message or "")))
    return found


def _sparql(loaded: LoadedKnowledge, shapes: Path) -> list[Result]:
    from kbq.build import shacl_sparql

    checks = shacl_sparql.compile_shapes(shapes)
    if checks is None:  # shapes beyond the compiled subset
        return _rudof(loaded, shapes)
    return list(shacl_sparql.run(loaded.store, ASSERTED, checks))


def _pyshacl(loaded: LoadedKnowledge, shapes: Path) -> list[Result]:
    import pyshacl
    import rdflib
    from rdflib.namespace import SH

    from kbq.build.loader import to_ox

    shapes_graph = rdflib.Graph().parse(shapes, format="turtle")
    conforms, report, _text = pyshacl.validate(
        loaded.graph, shacl_graph=shapes_graph, inference="none", advanced=False, allow_warnings=True
    )
    if conforms:
        return []
    found: list[Result] = []
    for result in report.subjects(rdflib.RDF.type, SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        path = report.value(result, SH.resultPath)
        message = report.value(result, SH.resultMessage)
        found.append(
            (
                to_ox(focus) if focus is not None else None,
                str(path) if isinstance(path, rdflib.URIRef) else None,
                str(message or ""),
            )
        )
    return found


def violations(
    loaded: LoadedKnowledge, shapes: Path | None = None, *, validator: Validator = DEFAULT_VALIDATOR
) -> list[Violation]:
    run = {"sparql": _sparql, "rudof": _rudof, "pyshacl": _pyshacl}[validator]
    found = []
    for focus, path, message in run(loaded, shapes or resources.shapes_file()):
        files: tuple[str, ...] = ()
        if isinstance(focus, ox.NamedNode | ox.BlankNode):
            files = loaded.files_of(focus)
            if not files:  # a thing only referred to (a source URL): the files that refer to it
                referrers = {
                    q.subject
                    for q in loaded.store.quads_for_pattern(None, None, focus, ASSERTED)
                    if isinstance(q.subject, ox.NamedNode | ox.BlankNode)
                }
                files = tuple(sorted({f for s in referrers for f in loaded.files_of(s)}))
        subject = "?" if focus is None else ("[blank node]" if isinstance(focus, ox.BlankNode) else _short(focus.value))
        found.append(Violation(subject=subject or "?", path=_short(path), message=message or "violates a shape", files=files))
    return sorted(found, key=lambda v: (v.files, v.subject, v.path or "", v.message))


def validate_graph(loaded: LoadedKnowledge, *, validator: Validator = DEFAULT_VALIDATOR) -> None:
    """Raise ValidationError listing every violation."""
    found = violations(loaded, validator=validator)
    if found:
        raise ValidationError(found)


def validate_files(
    extra: list[Path] | None = None, *, shipped: bool = True, validator: Validator = DEFAULT_VALIDATOR
) -> list[Violation]:
    files = (resources.knowledge_files() if shipped else []) + list(extra or [])
    return violations(load(files), validator=validator)
