"""SHACL Core validation as SPARQL queries over the build's store (the build's validator).

The shapes (ontology/shapes.ttl) use a small part of SHACL Core: class, subjects-of and
objects-of targets; property shapes with an IRI path and a message; minCount, maxCount,
datatype, class, in, pattern, the four range constraints and an `or` of class/datatype
alternatives. Each (property shape, constraint) becomes one SELECT over the ASSERTED graph, with
the SPARQL meaning the SHACL specification gives it (its appendix of SPARQL-based definitions),
so validation runs inside pyoxigraph, grows with the data like a query, and copies nothing.
Shapes using anything else make `compile_shapes` return None: the caller then validates with
rudof. pySHACL stays the reference: tests check both report the same on good and bad data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

SH = "http://www.w3.org/ns/shacl#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
_TYPE_PATH = f"<{RDF}type>/<http://www.w3.org/2000/01/rdf-schema#subClassOf>*"  # SHACL instance of
# Shape vocabulary this compiler understands; any other predicate on a shape means rudof.
_NODE_KEYS = {"targetClass", "targetSubjectsOf", "targetObjectsOf", "property"}
_PROPERTY_KEYS = {"path", "message", "minCount", "maxCount", "datatype", "class", "in", "pattern", "flags", "or"}
_RANGES = {"minExclusive": ">", "minInclusive": ">=", "maxExclusive": "<", "maxInclusive": "<="}
_CASTABLE = {XSD + t for t in ("decimal", "integer", "double", "float", "boolean", "date", "dateTime")}


@dataclass(frozen=True)
class Check:
    """One constraint of one property shape as a SELECT ?this ?v (a row per violation)."""

    query: str
    path: str
    message: str


def _term(node: ox.NamedNode | ox.BlankNode | ox.Literal) -> str:
    return str(node)  # pyoxigraph terms print as SPARQL/N-Triples terms


def _list(store: ox.Store, head: ox.NamedNode | ox.BlankNode | ox.Literal) -> list[ox.NamedNode | ox.BlankNode | ox.Literal]:
    items = []
    while head != ox.NamedNode(RDF + "nil") and not isinstance(head, ox.Literal):
        first = _value(store, head, RDF + "first")
        if first is None:
            break
        items.append(first)
        rest = _value(store, head, RDF + "rest")
        if rest is None:
            break
        head = rest
    return items


def _value(store: ox.Store, node: object, predicate: str) -> ox.NamedNode | ox.BlankNode | ox.Literal | None:
    for q in store.quads_for_pattern(node, ox.NamedNode(predicate), None, None):  # type: ignore[arg-type]
        return q.object  # type: ignore[return-value]
    return None


def _keys(store: ox.Store, node: object) -> dict[str, list[ox.NamedNode | ox.BlankNode | ox.Literal]]:
    found: dict[str, list[ox.NamedNode | ox.BlankNode | ox.Literal]] = {}
    for q in store.quads_for_pattern(node, None, None, None):  # type: ignore[arg-type]
        name = q.predicate.value
        key = name[len(SH) :] if name.startswith(SH) else ("type" if name == RDF + "type" else "?" + name)
        found.setdefault(key, []).append(q.object)  # type: ignore[arg-type]
    return found


def _condition(store: ox.Store, key: str, value: ox.NamedNode | ox.BlankNode | ox.Literal) -> str | None:
    """A SPARQL expression true when ?v satisfies one value constraint; None: not supported."""
    if key == "datatype" and isinstance(value, ox.NamedNode):
        cond = f"(isLiteral(?v) && DATATYPE(?v) = {_term(value)}"
        if value.value in _CASTABLE:  # well-formed: a lexical form the datatype accepts
            cond += f" && COALESCE(isLiteral({_term(value)}(STR(?v))), false)"
        return cond + ")"
    if key == "class" and isinstance(value, ox.NamedNode | ox.BlankNode):
        return f"EXISTS {{ ?v {_TYPE_PATH} {_term(value)} }}"
    if key == "in":
        items = _list(store, value)
        return "(" + " || ".join(f"sameTerm(?v, {_term(i)})" for i in items) + ")" if items else "false"
    if key in _RANGES and isinstance(value, ox.Literal):
        return f"COALESCE(?v {_RANGES[key]} {_term(value)}, false)"
    if key == "or":
        alternatives = []
        for member in _list(store, value):
            keys = {k: v for k, v in _keys(store, member).items() if k != "type"}
            if len(keys) != 1 or len(next(iter(keys.values()))) != 1:
                return None
            ((k, (v,)),) = keys.items()
            alternative = _condition(store, k, v) if k in {"class", "datatype"} else None
            if alternative is None:
                return None
            alternatives.append(alternative)
        return "(" + " || ".join(alternatives) + ")" if alternatives else "false"
    return None


def _targets(store: ox.Store, keys: dict[str, list[ox.NamedNode | ox.BlankNode | ox.Literal]]) -> str | None:
    patterns = []
    for target in keys.get("targetClass", []):
        patterns.append(f"{{ ?this {_TYPE_PATH} {_term(target)} }}")
    for target in keys.get("targetSubjectsOf", []):
        patterns.append(f"{{ ?this {_term(target)} [] }}")
    for target in keys.get("targetObjectsOf", []):
        patterns.append(f"{{ [] {_term(target)} ?this }}")
    if not patterns:
        return None
    return "{ SELECT DISTINCT ?this WHERE { " + " UNION ".join(patterns) + " } }"


def _property_checks(store: ox.Store, focus: str, shape: object) -> list[Check] | None:
    keys = _keys(store, shape)
    unknown = set(keys) - _PROPERTY_KEYS - set(_RANGES) - {"type"}
    paths, messages = keys.get("path", []), keys.get("message", [])
    if unknown or len(paths) != 1 or not isinstance(paths[0], ox.NamedNode) or len(messages) != 1:
        return None
    if "flags" in keys and "pattern" not in keys:
        return None
    path, message = paths[0], messages[0]
    if not isinstance(message, ox.Literal):
        return None
    p = _term(path)
    checks = []
    for key, values in keys.items():
        for value in values:
            if key in {"path", "message", "type", "flags"}:
                continue
            if key in {"minCount", "maxCount"}:
                if not isinstance(value, ox.Literal):
                    return None
                bound = int(value.value)
                values_of = f"OPTIONAL {{ ?this {p} ?o }}" if key == "minCount" else f"?this {p} ?o"
                test = f"?n < {bound}" if key == "minCount" else f"?n > {bound}"
                body = (
                    f"{{ SELECT ?this (COUNT(DISTINCT ?o) AS ?n) WHERE {{ {focus} {values_of} }} GROUP BY ?this }} "
                    f"FILTER ({test}) BIND (?this AS ?v)"
                )
            elif key == "pattern":
                if not isinstance(value, ox.Literal):
                    return None
                flags = keys.get("flags", [ox.Literal("")])[0]
                body = (
                    f"{focus} ?this {p} ?v . "
                    f"FILTER (isBlank(?v) || !REGEX(STR(?v), {json.dumps(value.value)}, {json.dumps(flags.value)}))"
                )
            else:
                cond = _condition(store, key, value)
                if cond is None:
                    return None
                body = f"{focus} ?this {p} ?v . FILTER (!({cond}))"
            checks.append(Check(query=f"SELECT ?this ?v WHERE {{ {body} }}", path=path.value, message=message.value))
    return checks


def compile_shapes(shapes: Path) -> list[Check] | None:
    """The checks the shapes file states, or None when it uses SHACL beyond this compiler."""
    store = ox.Store()
    store.load(path=str(shapes), format=ox.RdfFormat.TURTLE)
    node_shape = ox.NamedNode(SH + "NodeShape")
    shapes_found = [q.subject for q in store.quads_for_pattern(None, ox.NamedNode(RDF + "type"), node_shape, None)]
    described = {q.subject for q in store.quads_for_pattern(None, None, None, None) if q.predicate.value.startswith(SH)}
    property_nodes = {q.object for q in store.quads_for_pattern(None, ox.NamedNode(SH + "property"), None, None)}
    list_members = {q.object for q in store.quads_for_pattern(None, ox.NamedNode(RDF + "first"), None, None)}
    if described - set(shapes_found) - property_nodes - list_members:
        return None  # shapes not typed sh:NodeShape (implicit targets, shapes used by sh:node ...)
    checks: list[Check] = []
    for shape in shapes_found:
        keys = _keys(store, shape)
        if set(keys) - _NODE_KEYS - {"type"} or keys.get("type") != [node_shape]:
            return None
        focus = _targets(store, keys)
        if focus is None:
            return None
        for prop in keys.get("property", []):
            found = _property_checks(store, focus, prop)
            if found is None:
                return None
            checks += found
    return checks


Term = ox.NamedNode | ox.BlankNode | ox.Literal


def run(store: ox.Store, graph: ox.NamedNode, checks: list[Check]) -> Iterator[tuple[Term, str, str]]:
    """(focus node, path IRI, message) of every violation in `graph` of `store`."""
    for check in checks:
        for row in store.query(check.query, default_graph=graph):  # type: ignore[union-attr]
            yield row["this"], check.path, check.message
