"""The `sparql` engine: OWL-RL closure and the rules, run inside the store. Build-time only.

The OWL 2 RL subset the ontology uses (ontology/owlrl/rules/) and the rules of ontology/rules/
are CONSTRUCT queries; here each becomes a SPARQL update (INSERT ... WHERE) that the store runs
natively, so no triple crosses into Python. Rounds repeat until a round adds nothing; a round
after the first reruns only the rules whose WHERE clause can match what the last round added
(its predicates and the classes it typed, read off the rule's text: a rule with a variable
predicate or class always reruns). The result equals owlrl's after `reason.normalise` (tests
check it on the shipped KB and on a 10x synthetic KB); knowledge using OWL beyond the subset
(ontology/owlrl/beyond.rq) is reasoned with `reasonable` instead (the caller's choice).

Graphs of the working store: ASSERTED (input, never changed), INFERRED (the closure beyond the
input) and two scratch graphs that swap roles each round: the DELTA the current round derives
into and the NEW one the last round added (which the delta forms read). A round writes each new
triple twice (DELTA, then INFERRED); no graph is copied wholesale.

Costs (pyoxigraph's in-memory store): a scan is about 0.2 us per row, but a lookup per solution
(FILTER NOT EXISTS, EXISTS, a join it evaluates as a loop) about 17 us. So a rule's known
conclusions are dropped with MINUS (a hash anti-join over the template's matches) and a round's
DELTA is checked against the other graphs with a hash join, not a lookup per triple.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pyoxigraph as ox

from kbq.build.rules import is_monotonic
from kbq.errors import KnowledgeFileError
from kbq.store import resources

MAX_ROUNDS = 20
ASSERTED = resources.ASSERTED_GRAPH
INFERRED = resources.INFERRED_GRAPH
DELTA = "https://kbq.dev/graph/delta"
NEW = "https://kbq.dev/graph/new"  # what the last round added (the delta forms of ontology/owlrl/delta/ read it)
_SCRATCH = re.compile(f"<({re.escape(DELTA)}|{re.escape(NEW)})>")
_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_CONSTRUCT = re.compile(r"(?im)^\s*CONSTRUCT\s*\{")
_PREFIX = re.compile(r"(?i)PREFIX\s+([\w.-]*):\s*<([^>]*)>")
_IRI = re.compile(r"<([^<>\s]*)>")
_NAME = re.compile(r"(?<![\w?$<])([A-Za-z][\w.-]*)?:([A-Za-z_][\w-]*)")
_OPEN_PREDICATE = re.compile(r"[?$]\w+\s+[?$]\w+")  # `?s ?p`: a variable in predicate position (or a projection: harmless)
_OPEN_CLASS = re.compile(r"(?:\ba\b|rdf:type)\s+[?$]\w+")
_SLOT = "#kbq-predicates#"  # in an update's VALUES: filled with what the rule's probe finds
_SCHEMA = frozenset("http://www.w3.org/2000/01/rdf-schema#" + n for n in ("subClassOf", "subPropertyOf", "domain", "range")) | {
    "http://www.w3.org/2002/07/owl#inverseOf",
    "http://www.w3.org/2002/07/owl#Thing",
}
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_COMMENT = re.compile(r"(?m)#[^\n>]*$")

# What reason.normalise drops, for the triples derived here (the rules can state any of them).
_NORMALISE = f"""
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX owl: <http://www.w3.org/2002/07/owl#>
DELETE {{ GRAPH <{INFERRED}> {{ ?s ?p ?o }} }} WHERE {{
  GRAPH <{INFERRED}> {{ ?s ?p ?o }}
  FILTER (
    ?s = owl:Nothing
    || (isIRI(?s) && (STRSTARTS(STR(?s), STR(rdf:)) || STRSTARTS(STR(?s), STR(rdfs:)) || STRSTARTS(STR(?s), STR(owl:))
                      || STRSTARTS(STR(?s), "http://www.w3.org/2001/XMLSchema#")))
    || (?s = ?o && ?p IN (rdfs:subClassOf, rdfs:subPropertyOf, owl:equivalentClass, owl:equivalentProperty, owl:sameAs))
    || (?o = owl:Thing && ?p IN (rdf:type, rdfs:subClassOf, rdfs:domain, rdfs:range))
  )
}}
"""


@dataclass(frozen=True)
class Rule:
    path: Path
    update: str  # INSERT { GRAPH <DELTA> { template } } USING ... WHERE { pattern }
    mentions: frozenset[str]  # the IRIs its WHERE clause names
    open_predicate: bool
    open_class: bool
    monotonic: bool
    delta_update: str | None = None  # the semi-naive form, if the rule has one
    exact: bool = False  # derives only triples the store lacks (one template triple, filtered by _unless_known)
    derives: frozenset[str] | None = None  # the IRIs its template names (None: a variable predicate)
    probe: str | None = None  # a template `s ?p o`: SELECT DISTINCT ?p, the predicates its update's MINUS needs
    delta_probe: str | None = None

    def runnable(self, store: ox.Store, predicates: set[str], first_round: bool, delta: str, new: str) -> str | None:
        """The update to run this round (for these scratch graphs), None when it has nothing to match."""
        update = self.form(predicates, first_round)
        probe = self.probe if update is self.update else self.delta_probe
        if probe is not None:
            found = {row[0] for row in store.query(_swapped(probe, delta, new))}  # type: ignore[union-attr]
            names = sorted(str(term) for term in found if isinstance(term, ox.NamedNode))
            if not names:
                return None
            update = update.replace(_SLOT, " ".join(names))
        return _swapped(update, delta, new)

    def form(self, predicates: set[str], first_round: bool) -> str:
        """The delta form after a round that added none of the (schema) predicates the rule names."""
        if first_round or self.delta_update is None or predicates & self.mentions:
            return self.update
        return self.delta_update

    def wants(self, predicates: set[str], classes: set[str]) -> bool:
        """Can this rule match something among new triples with these predicates / new types?"""
        if self.open_predicate and (predicates or classes):
            return True
        if classes and (self.open_class or classes & self.mentions):
            return True
        return bool(predicates & self.mentions)


@dataclass(frozen=True)
class StoreInference:
    inferred: int
    rounds: int
    seconds: float


def _where_iris(where: str, prefixes: dict[str, str]) -> set[str]:
    text = _COMMENT.sub("", _STRINGS.sub('""', where))
    found = set(_IRI.findall(text))
    for prefix, local in _NAME.findall(_IRI.sub(" ", text)):
        if prefix.lower() in {"http", "https", "urn", "mailto"} or (prefix or "") not in prefixes:
            continue
        found.add(prefixes[prefix or ""] + local)
    if re.search(r"(?<![\w?$:])a(?![\w:-])", _IRI.sub(" ", text)):
        found.add(_RDF_TYPE)
    return found


def compile_rule(path: Path, text: str) -> Rule:
    """A CONSTRUCT rule as an update into the DELTA graph over ASSERTED + INFERRED + DELTA."""
    match = _CONSTRUCT.search(text)
    end = match.end() if match else -1
    depth = 1
    while match and depth and end < len(text):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        end += 1
    rest = text[end:]
    if not match or depth or not re.match(r"\s*WHERE\b", rest, re.IGNORECASE):
        raise KnowledgeFileError(str(path), None, "a rule must read CONSTRUCT { template } WHERE { pattern }")
    template = text[match.end() : end - 1]
    filtered = _unless_known(rest.lstrip(), template)
    probe = None
    if _SLOT in filtered:  # the predicates its solutions have, to limit the MINUS to them
        graphs = f"FROM <{ASSERTED}> FROM <{INFERRED}> FROM <{DELTA}> FROM NAMED <{NEW}>"
        probe = f"{text[: match.start()]}\nSELECT DISTINCT {_open_slot(template)} {graphs}\n{rest.lstrip()}"
    using = f"USING <{ASSERTED}> USING <{INFERRED}> USING <{DELTA}> USING NAMED <{NEW}>"
    update = f"{text[: match.start()]}\nINSERT {{ GRAPH <{DELTA}> {{ {template} }} }}\n{using}\n{filtered}"
    prefixes = dict(_PREFIX.findall(text[: match.start()]))
    where = rest.lstrip()[5:]
    open_template = bool(_OPEN_PREDICATE.search(_STRINGS.sub('""', template)))
    return Rule(
        path=path,
        update=update,
        mentions=frozenset(_where_iris(where, prefixes)),
        open_predicate=bool(_OPEN_PREDICATE.search(_STRINGS.sub('""', where))),
        open_class=bool(_OPEN_CLASS.search(where)),
        monotonic=is_monotonic(text),
        exact=filtered != rest.lstrip() and _one_triple(template),
        derives=None if open_template else frozenset(_where_iris(template, prefixes)),
        probe=probe,
    )


def _one_triple(template: str) -> bool:
    bare = _COMMENT.sub("", _STRINGS.sub('""', _IRI.sub("<>", template))).strip().rstrip(".")
    return not re.search(r"[.;,]", bare)


def _unless_known(where: str, template: str) -> str:
    """`WHERE { pattern }` less the solutions whose every conclusion the store already holds
    (most of a round's derivations): they would be written to DELTA only to be dropped again.
    Only the solution set changes, never what is concluded; a template with blank nodes (new
    nodes per solution) or a query with modifiers after its WHERE clause is left as it is.

    MINUS where every template statement has a variable subject: pyoxigraph evaluates it as a
    hash anti-join over the template's matches (a scan), where FILTER NOT EXISTS costs a lookup
    per solution (about 17 us each, most of a rule's time when it derives much). A template with
    a variable predicate would make MINUS scan the whole store: NOT EXISTS there."""
    bare = _STRINGS.sub('""', _IRI.sub("<>", template))
    if re.search(r"\[|_:", bare):
        return where
    start = where.index("{")
    depth, end = 0, start
    for end in range(start, len(where)):
        depth += {"{": 1, "}": -1}.get(where[end], 0)
        if depth == 0:
            break
    if depth or _COMMENT.sub("", where[end + 1 :]).strip():
        return where
    statements = [t for t in re.split(r"\.(?:\s+|$)", _COMMENT.sub("", bare).strip()) if t.strip()]
    body = where[start + 1 : end]
    if open_slot := _open_slot(template):  # MINUS over the predicates the solutions have (the rule's probe finds them)
        return f"{where[:start]}{{ {{ {body}\n}} MINUS {{ VALUES {open_slot} {{ {_SLOT} }} {template}\n}} }}"
    variable_subjects = all(re.match(r"\s*[?$]", t) for t in statements)
    anti = "MINUS" if not _OPEN_PREDICATE.search(bare) and variable_subjects else "FILTER NOT EXISTS"
    return f"{where[:start]}{{ {{ {body}\n}} {anti} {{ {template}\n}} }}"


def _open_slot(template: str) -> str | None:
    """The predicate variable of a one-triple template `s ?p o`, else None."""
    match = re.fullmatch(r"\s*(\S+)\s+([?$]\w+)\s+(\S+)\s*\.?\s*", _COMMENT.sub("", template))
    return match.group(2) if match else None


def _is_schema(rule: Rule) -> bool:
    """Whether a rule derives only schema statements (subclass, subproperty, domain, range, inverse)."""
    return rule.derives is not None and rule.derives <= _SCHEMA


def _ordered(rules: list[Rule]) -> list[Rule]:
    """The rules in the order one round best runs them (a later rule reads what an earlier one
    added in the same round, so a good order means fewer rounds; any order reaches the same
    fixpoint): the schema rules, each after those it reads; then the rules that state arbitrary
    properties (sub- and inverse properties); then those that do not read types (domains,
    ranges, ...); then those that read them (superclasses, the rules about typed things)."""
    schema = [r for r in rules if _is_schema(r)]
    ordered: list[Rule] = []
    while schema:  # Kahn's order, file order among equals (a cycle takes the first)
        free = [r for r in schema if not any(q is not r and (q.derives or set()) & r.mentions for q in schema)]
        ordered.append((free or schema)[0])
        schema.remove(ordered[-1])

    def rank(rule: Rule) -> int:
        if rule.derives is None:
            return 0
        return 2 if rule.open_class or _RDF_TYPE in rule.mentions else 1

    return ordered + sorted((r for r in rules if not _is_schema(r)), key=rank)


def _in(graph: str) -> str:
    return f"GRAPH <{graph}> {{ ?s ?p ?o }}"


def _with_delta(rule: Rule) -> Rule:
    """The rule with its delta form from ontology/owlrl/delta/ (same file name), if there is one."""
    delta = Path(resources.owlrl_delta_dir(), rule.path.name)
    if rule.path.parent != Path(resources.owlrl_rule_paths()[0]).parent or not delta.is_file():
        return rule
    compiled = compile_rule(delta, delta.read_text(encoding="utf-8"))
    return replace(rule, delta_update=compiled.update, delta_probe=compiled.probe)


def count_graph(store: ox.Store, graph: str) -> int:
    """How many triples a graph of the store holds."""
    row = next(iter(store.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")))  # type: ignore[arg-type]
    return int(row["n"].value)


def _settle_delta(store: ox.Store, target: str, delta: str, new: str, exact: bool) -> tuple[int, set[str], set[str]]:
    """Drop from `delta` what another graph already holds (unless every rule that ran was
    `exact`), add the rest to `target`, empty `new` (the round before's; `delta` takes its role);
    return how many triples were new, their predicates and the classes they typed."""
    if not exact and (found := _predicates(store, delta)):
        # a join of two sub-selects, which pyoxigraph evaluates as a hash join: the other graphs'
        # triples with these predicates, scanned once (FILTER EXISTS costs a lookup per triple)
        values = " ".join(f"<{p}>" for p in sorted(found))
        store.update(
            f"DELETE {{ GRAPH <{delta}> {{ ?s ?p ?o }} }} WHERE {{ "
            f"{{ SELECT ?s ?p ?o WHERE {{ GRAPH <{delta}> {{ ?s ?p ?o }} }} }} "
            f"{{ SELECT ?s ?p ?o WHERE {{ VALUES ?p {{ {values} }} GRAPH ?g {{ ?s ?p ?o }} "
            f"FILTER (?g != <{delta}> && ?g != <{new}>) }} }} }}"
        )
    store.update(f"DROP SILENT GRAPH <{new}>")
    count = count_graph(store, delta)
    predicates, classes = _signature(store, delta)
    if count:
        store.update(f"ADD <{delta}> TO <{target}>")
    return count, predicates, classes


def _predicates(store: ox.Store, graph: str) -> set[str]:
    return {r["p"].value for r in store.query(f"SELECT DISTINCT ?p WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")}  # type: ignore[union-attr]


def _signature(store: ox.Store, graph: str) -> tuple[set[str], set[str]]:
    """The predicates (less rdf:type) of a graph's triples and the classes they type."""
    predicates = _predicates(store, graph)
    classes = {r["c"].value for r in store.query(f"SELECT DISTINCT ?c WHERE {{ GRAPH <{graph}> {{ ?s a ?c }} }}")}  # type: ignore[union-attr]
    predicates.discard(_RDF_TYPE)
    return predicates, classes


def beyond_subset(store: ox.Store) -> list[str]:
    """The OWL/RDFS terms the knowledge uses that the OWL-RL subset does not cover."""
    text = Path(resources.owlrl_beyond_path()).read_text(encoding="utf-8")
    return sorted(r["term"].value for r in store.query(text, use_default_graph_as_union=True))  # type: ignore[union-attr]


def _fixpoint(
    store: ox.Store,
    rules: list[Rule],
    rounds: int,
    first: list[Rule] | None = None,
    seeded: bool = False,
    interrupt: Callable[[], None] | None = None,
) -> int:
    """Apply `rules` in rounds until one adds nothing to the store (the first round: only `first`,
    when given); the rounds so far. `seeded`: the store is a fixpoint of these rules but for the
    triples in the NEW graph (an overlay on a snapshot's closure), so the first round is a later
    round's: only the rules that can match them, in their delta forms."""
    predicates, classes = _signature(store, NEW) if seeded else (set(), set())
    start = rounds + 1 - int(seeded)
    delta, new = DELTA, NEW
    while True:
        rounds += 1
        last = rounds == MAX_ROUNDS
        deriving: list[Path] = []
        exact = True
        for rule in first if first is not None and rounds == start else rules:
            if rounds > start and not rule.wants(predicates, classes):
                continue
            exact = exact and rule.exact
            if interrupt is not None:
                interrupt()
            size = count_graph(store, delta) if last else 0
            try:
                update = rule.runnable(store, predicates, rounds == start, delta, new)
                if update is not None:
                    store.update(update)
            except (SyntaxError, OSError, ValueError) as exc:
                raise KnowledgeFileError(str(rule.path), None, f"rule does not run: {exc}") from None
            if last and count_graph(store, delta) > size:
                deriving.append(rule.path)
        added, predicates, classes = _settle_delta(store, INFERRED, delta, new, exact)
        delta, new = new, delta  # what this round added is what the next one reads as new
        if not added:
            store.update(f"DROP SILENT GRAPH <{new}>")
            return rounds
        if last:
            raise KnowledgeFileError(
                ", ".join(str(p) for p in deriving),
                None,
                f"the rules still derive new triples after {MAX_ROUNDS} rounds ({added} in the last one): "
                "a rule that makes new terms each round never reaches a fixpoint",
            )


def _swapped(update: str, delta: str, new: str) -> str:
    """A compiled rule (written for DELTA and NEW) for this round's graphs."""
    if delta == DELTA:
        return update
    return _SCRATCH.sub(lambda m: f"<{NEW if m.group(1) == DELTA else DELTA}>", update)


def infer_in_store(
    store: ox.Store,
    rule_paths: list[Path],
    *,
    seeded: bool = False,
    monotonic_dump: Path | None = None,
    interrupt: Callable[[], None] | None = None,
) -> StoreInference:
    """Add to `store`'s INFERRED graph what ASSERTED (and INFERRED) entail under the OWL-RL
    subset and the rules, to a fixpoint: first the monotonic rules, then all. INFERRED may start
    with an earlier monotonic closure (an overlay build): the result is the same. `seeded`: it
    does, and the NEW graph holds what ASSERTED gained since (the overlay's triples): the
    monotonic rules then start from those (semi-naive) instead of from everything.
    `monotonic_dump`: write the store after the monotonic rules there (N-Quads), for overlay
    builds to start from (restore_closure). `interrupt`: called before each rule runs; it may
    raise to stop the reasoning (the build's validation, running beside it, found violations)."""
    start = time.perf_counter()
    paths = [*resources.owlrl_rule_files(), *rule_paths]
    rules = _ordered([_with_delta(compile_rule(p, p.read_text(encoding="utf-8"))) for p in paths])
    before = count_graph(store, INFERRED)
    rounds = 0
    schema = [r for r in rules if r.monotonic and _is_schema(r)]
    if schema and not seeded:  # the schema first: the first round then sees it whole, and later ones use delta forms
        rounds = _fixpoint(store, schema, rounds, interrupt=interrupt)
    rounds = _fixpoint(store, [r for r in rules if r.monotonic], rounds, seeded=seeded, interrupt=interrupt)
    if monotonic_dump is not None:  # ASSERTED and INFERRED (the scratch graphs are empty now)
        store.dump(str(monotonic_dump), format=ox.RdfFormat.N_QUADS)
    rounds = _fixpoint(store, rules, rounds, first=[r for r in rules if not r.monotonic], interrupt=interrupt)
    store.update(_NORMALISE)
    if before:  # an overlay's base closure may hold what the overlay now asserts (a hash join of the two graphs)
        store.update(
            f"DELETE {{ GRAPH <{INFERRED}> {{ ?s ?p ?o }} }} WHERE {{ {{ SELECT ?s ?p ?o WHERE {{ {_in(INFERRED)} }} }} "
            f"{{ SELECT ?s ?p ?o WHERE {{ {_in(ASSERTED)} }} }} }}"
        )
    inferred = count_graph(store, INFERRED)
    return StoreInference(inferred=inferred - before, rounds=rounds, seconds=time.perf_counter() - start)


def restore_closure(store: ox.Store, dump: Path) -> None:
    """Start from a snapshot's monotonic closure (the file infer_in_store wrote): its ASSERTED
    graph and what the monotonic rules inferred, which stays true whatever an overlay adds (the
    other rules' conclusions may not). One load: the blank nodes get new names, consistently."""
    store.bulk_load(path=str(dump), format=ox.RdfFormat.N_QUADS)
