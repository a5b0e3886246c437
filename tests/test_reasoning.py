"""The reasoning step: both engines agree, rules are documented, contradictions are reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbq.build import loader, reason
from kbq.errors import InconsistencyError, KnowledgeFileError
from kbq.store import resources

SCHEMA = {"http://www.w3.org/2000/01/rdf-schema#domain", "http://www.w3.org/2000/01/rdf-schema#range"}


def _without_generated() -> list[Path]:
    """The ontology and the hand-written KB: the generated catalog files repeat the same shapes
    (the whole KB goes through the fast engines below, and through owlrl when asked: `scale`);
    rdflib-based reasoning over all of it takes minutes per test."""
    return [f for f in resources.knowledge_files() if not f.name.endswith("_generated.ttl")]


def _three_engines_agree(files: list[Path], at_least: int = 5000) -> None:
    """owlrl is the reference; `reasonable` and the build's `sparql` engine must agree with it."""
    from test_engines import sparql_entailments

    asserted = loader.load(files)
    fast = reason.infer(asserted.triples, resources.rule_files(), engine=reason.Engine.REASONABLE)
    reference = reason.infer(asserted.triples, resources.rule_files(), engine=reason.Engine.OWLRL)
    # reasonable leaves out OWL 2 RL scm-dom1/scm-rng1 (a domain or range holds for its superclasses), which
    # owlrl states; the build's engine (sparql) must equal owlrl exactly
    assert fast.inferred <= reference.inferred
    assert all(str(t[1]) in SCHEMA for t in reference.inferred - fast.inferred)
    assert sparql_entailments(files) == {str(loader.to_ox_quad(*t).triple) for t in reference.inferred}
    assert len(fast.inferred) > at_least


@pytest.mark.slow
@pytest.mark.scale
def test_the_three_engines_give_the_same_entailments_on_the_hand_written_kb() -> None:
    """owlrl (the reference, pure Python) over the ontology and the hand-written KB: 1.5-2.5 minutes
    of one core, so `scale` (when asked). The full lane covers it with owlrl over the same ontology
    and rules and the tiny KB (test_tiny_kb: every rule that derives something here derives
    something there), and `reasonable` against the build's engine over the whole KB (below)."""
    _three_engines_agree(_without_generated())


@pytest.mark.slow
def test_the_sparql_engine_gives_reasonables_entailments_on_the_whole_kb() -> None:
    """The whole shipped KB, the generated catalog too, through `reasonable` and the build's engine:
    the same entailments but scm-dom1/scm-rng1's, which only the sparql engine and owlrl state."""
    from test_engines import sparql_entailments

    files = resources.knowledge_files()
    fast = reason.infer(loader.load(files).triples, resources.rule_files(), engine=reason.Engine.REASONABLE)
    wanted = {str(loader.to_ox_quad(*t).triple) for t in fast.inferred}
    found = sparql_entailments(files)
    assert wanted <= found
    assert all(t.split(" ")[1].strip("<>") in SCHEMA for t in found - wanted)
    assert len(found) > len(wanted) > 5000


@pytest.mark.slow
@pytest.mark.scale
def test_the_three_engines_give_the_same_entailments() -> None:
    """owlrl over the whole shipped KB: 5-11 minutes on 2 cores, longer than the rest of the full
    lane's parallel run, so it runs when asked (`bash tests/run.sh -m scale`), with the 10x KB."""
    _three_engines_agree(resources.knowledge_files())


def test_inference_is_pure(tiny_kb: Path) -> None:
    """Over the tests' tiny KB (KBQ_DATA_DIR): the shipped ontology and rules, a few GPUs and models."""
    asserted = loader.load(resources.knowledge_files())
    before = list(asserted.triples)
    result = reason.infer(asserted.triples, resources.rule_files())
    assert asserted.triples == before
    assert not result.inferred & set(before)


def test_every_rule_file_says_what_it_derives() -> None:
    for path in resources.rule_files() + resources.check_files():
        head = path.read_text(encoding="utf-8").lstrip()
        assert head.startswith("# "), f"{path.name} must start with a comment saying what it derives"
    assert len(resources.rule_files()) >= 10


def test_a_rule_that_does_not_parse_names_its_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.rq"
    bad.write_text("CONSTRUCT { ?s ?p } WHERE { ?s ?p ?o }")
    with pytest.raises(KnowledgeFileError, match=r"broken\.rq"):
        reason.load_rules([bad])


def test_a_select_among_the_rules_names_its_file(tmp_path: Path) -> None:
    select = tmp_path / "not-a-rule.rq"
    select.write_text("# lists\nSELECT ?s WHERE { ?s ?p ?o }")
    with pytest.raises(KnowledgeFileError, match=r"not-a-rule\.rq.*must be a CONSTRUCT query; this is SELECT"):
        reason.load_rules([select])
    check = tmp_path / "not-a-check.rq"
    check.write_text("# derives\nCONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
    with pytest.raises(KnowledgeFileError, match=r"not-a-check\.rq.*must be a SELECT"):
        reason.infer([], [], checks=[check])


def test_rules_without_a_fixpoint_stop_with_an_error_naming_them(tmp_path: Path) -> None:
    from rdflib import URIRef

    endless = tmp_path / "endless.rq"  # each round makes a new IRI from the last one: no fixpoint
    endless.write_text(
        "# derives a chain that never ends\n"
        "CONSTRUCT { ?n <https://kbq.dev/test#next> ?m } WHERE { ?s <https://kbq.dev/test#next> ?n "
        "FILTER NOT EXISTS { ?n <https://kbq.dev/test#next> ?any } BIND(IRI(CONCAT(STR(?n), 'x')) AS ?m) }"
    )
    start = (URIRef("https://kbq.dev/test#a"), URIRef("https://kbq.dev/test#next"), URIRef("https://kbq.dev/test#b"))
    with pytest.raises(KnowledgeFileError, match=rf"endless\.rq.*after {reason.MAX_ROUNDS} rounds"):
        reason.infer([start], [endless])


def test_contradictions_are_reported_not_swallowed(tmp_path: Path, tiny_kb: Path) -> None:
    overlay = tmp_path / "weird.ttl"
    overlay.write_text(
        "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\nkb:Weird a kbq:GPU , kbq:Model .\n"
    )
    graph = loader.load([*resources.knowledge_files(), overlay]).triples  # the tiny KB's
    with pytest.raises(InconsistencyError, match=r"Weird.*disjoint"):
        reason.infer(graph, resources.rule_files(), checks=resources.check_files())


def test_normalise_drops_axiomatic_noise() -> None:
    from rdflib import OWL, RDF, RDFS, XSD, Literal, URIRef

    x = URIRef("https://kbq.dev/kb/X")
    assert reason.normalise((x, OWL.sameAs, x)) is None
    assert reason.normalise((x, RDF.type, OWL.Thing)) is None
    assert reason.normalise((Literal("a"), RDF.type, RDFS.Literal)) is None
    assert reason.normalise((XSD.decimal, RDF.type, RDFS.Datatype)) is None
    kept = reason.normalise((x, RDFS.label, Literal("a", datatype=XSD.string)))
    assert kept == (x, RDFS.label, Literal("a"))
