"""The build's `sparql` engine (OWL-RL subset + rules inside the store) against the reference
engines: the same entailments on a 10x synthetic KB (on the shipped KB against owlrl: test_reasoning); overlay builds that
start from the shipped snapshot's closure equal full builds."""

from __future__ import annotations

import sys
from pathlib import Path

import pyoxigraph as ox
import pytest

from kbq.build import closure, loader, reason
from kbq.store import resources

ROOT = Path(__file__).resolve().parent.parent


def sparql_entailments(files: list[Path]) -> set[str]:
    """The inferred triples of the sparql engine, as N-Triples lines."""
    loaded = loader.load(files)
    assert closure.beyond_subset(loaded.store) == []
    closure.infer_in_store(loaded.store, resources.rule_files())
    return {str(q.triple) for q in loaded.store.quads_for_pattern(None, None, None, ox.NamedNode(resources.INFERRED_GRAPH))}


def reference_entailments(files: list[Path], engine: reason.Engine) -> set[str]:
    result = reason.infer(loader.load(files).triples, resources.rule_files(), engine=engine)
    return {str(loader.to_ox_quad(*t).triple) for t in result.inferred}


def synthetic(factor: int, folder: Path) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    from make_synthetic import write

    out = folder / f"synthetic-{factor}x.nt"
    write(factor, out)
    return out


@pytest.mark.slow
@pytest.mark.scale
def test_sparql_engine_equals_reasonable_on_a_10x_synthetic_kb(tmp_path: Path) -> None:
    files = [*resources.knowledge_files(), synthetic(10, tmp_path)]
    found = sparql_entailments(files)
    fast = reference_entailments(files, reason.Engine.REASONABLE)
    assert fast <= found
    # reasonable leaves out OWL 2 RL scm-dom1/scm-rng1 (a domain or range holds for its superclasses),
    # which owlrl, the reference, states (test_reasoning compares the sparql engine with owlrl)
    schema = ("<http://www.w3.org/2000/01/rdf-schema#domain>", "<http://www.w3.org/2000/01/rdf-schema#range>")
    assert all(t.split(" ")[1] in schema for t in found - fast)
    assert len(found) > 10 * 3000


def test_knowledge_beyond_the_subset_is_found(tmp_path: Path) -> None:
    overlay = tmp_path / "same.ttl"
    overlay.write_text("<https://kbq.dev/kb/A> <http://www.w3.org/2002/07/owl#sameAs> <https://kbq.dev/kb/B> .\n")
    assert closure.beyond_subset(loader.load([overlay]).store) == ["http://www.w3.org/2002/07/owl#sameAs"]
    cycle = tmp_path / "cycle.ttl"
    cycle.write_text(
        "<urn:a> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <urn:b> .\n"
        "<urn:b> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <urn:a> .\n"
    )
    assert closure.beyond_subset(loader.load([cycle]).store) == ["http://www.w3.org/2002/07/owl#equivalentClass"]
    fine = tmp_path / "fine.ttl"
    fine.write_text('<https://kbq.dev/kb/A> <http://www.w3.org/2000/01/rdf-schema#label> "a" .\n')
    assert closure.beyond_subset(loader.load([fine]).store) == []


def test_a_rule_not_of_the_construct_where_form_names_its_file(tmp_path: Path) -> None:
    short = tmp_path / "short.rq"
    short.write_text("# derives\nCONSTRUCT WHERE { ?s ?p ?o }")
    with pytest.raises(reason.KnowledgeFileError, match=r"short\.rq.*CONSTRUCT \{ template \} WHERE"):
        closure.compile_rule(short, short.read_text())


def test_rules_read_their_inputs_off_the_where_clause() -> None:
    text = (
        "PREFIX kbq: <https://kbq.dev/ontology#>\n# a comment: kbq:NotThis\n"
        'CONSTRUCT { ?g kbq:dense true } WHERE { ?g a kbq:GPU ; kbq:boardDesign ?d . FILTER(?d != "kbq:NotThis") }'
    )
    rule = closure.compile_rule(Path("r.rq"), text)
    kbq = resources.KBQ_NS
    assert rule.mentions == {kbq + "GPU", kbq + "boardDesign", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"}
    assert not rule.open_predicate and not rule.open_class and rule.monotonic
    assert rule.wants({kbq + "boardDesign"}, set()) and rule.wants(set(), {kbq + "GPU"})
    assert not rule.wants({kbq + "dense"}, {kbq + "Model"})
    open_rule = closure.compile_rule(Path("o.rq"), "CONSTRUCT { ?x a ?c } WHERE { ?c <urn:x> ?d . ?x a ?c }")
    assert open_rule.open_class and open_rule.wants(set(), {kbq + "Anything"})


def test_rules_without_a_fixpoint_stop_with_an_error_naming_them(tmp_path: Path) -> None:
    endless = tmp_path / "endless.rq"
    endless.write_text(
        "# derives a chain that never ends\n"
        "CONSTRUCT { ?n <https://kbq.dev/test#next> ?m } WHERE { ?s <https://kbq.dev/test#next> ?n "
        "FILTER NOT EXISTS { ?n <https://kbq.dev/test#next> ?any } BIND(IRI(CONCAT(STR(?n), 'x')) AS ?m) }"
    )
    start = tmp_path / "start.ttl"
    start.write_text("<https://kbq.dev/test#a> <https://kbq.dev/test#next> <https://kbq.dev/test#b> .\n")
    with pytest.raises(reason.KnowledgeFileError, match=rf"endless\.rq.*after {closure.MAX_ROUNDS} rounds"):
        closure.infer_in_store(loader.load([start]).store, [endless])


def _graph_lines(path: Path, graph: str) -> list[str]:
    """A snapshot graph's triples as N-Triples lines, blank node labels blanked (they differ per load)."""
    store = ox.Store.read_only(str(path))
    lines = []
    for q in store.quads_for_pattern(None, None, None, ox.NamedNode(graph)):
        parts = [("_:b" if isinstance(t, ox.BlankNode) else str(t)) for t in (q.subject, q.predicate, q.object)]
        lines.append(" ".join(parts))
    return sorted(lines)


def test_an_overlay_build_from_the_shipped_closure_equals_a_full_build(tmp_path: Path, tiny_kb: Path) -> None:
    """The base is the tests' tiny KB (KBQ_DATA_DIR: the shipped ontology and rules, where every rule
    the hand-written KB fires fires too): three builds of a second instead of the shipped KB's. The
    shipped snapshot's overlay builds answer in test_api, test_examples and test_model_import."""
    from kbq.build import pipeline

    overlay = tmp_path / "mine.ttl"
    overlay.write_text(
        "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix dcterms: <http://purl.org/dc/terms/> .\n"
        # a newer price for a shipped GPU (a non-monotonic rule's input: the current price changes)
        "kb:TestPrice a kbq:PriceObservation ; kbq:priceOf kb:RTX4090 ; kbq:priceUsd 999.0 ;\n"
        '  kbq:observedOn "2030-01-01"^^xsd:date ; kbq:priceKind kb:StreetPrice ; dcterms:source <https://example.org/p> .\n'
        # a dense-chassis design for a shipped open-air card (monotonic and aggregate rules)
        "kb:RTX4090 kbq:boardDesign kb:TestBlower .\n"
        "kb:TestBlower a kbq:BoardDesign ; kbq:cooling kb:Blower ; kbq:maxCardsPerChassis 10 ;\n"
        "  dcterms:source <https://example.org/d> .\n"
    )
    base = pipeline.build(tmp_path / "snapshot-base")
    quick = pipeline.build(tmp_path / "snapshot-quick", overlays=[overlay], base=base.path, validate=False)
    full = pipeline.build(tmp_path / "snapshot-full", overlays=[overlay], validate=False)
    for graph in (resources.ASSERTED_GRAPH, resources.INFERRED_GRAPH):
        assert _graph_lines(Path(quick.path), graph) == _graph_lines(Path(full.path), graph)
    assert (quick.asserted, quick.inferred) == (full.asserted, full.inferred)
    inferred = _graph_lines(Path(full.path), resources.INFERRED_GRAPH)
    kb, kbq = resources.KB_NS, resources.KBQ_NS
    assert f'<{kb}RTX4090> <{kbq}currentPrice> "999"^^<http://www.w3.org/2001/XMLSchema#decimal>' in inferred
    assert f'<{kb}RTX4090> <{kbq}denseCards> "10"^^<http://www.w3.org/2001/XMLSchema#integer>' in inferred
    assert len([x for x in inferred if x.startswith(f"<{kb}RTX4090> <{kbq}currentPrice>")]) == 1
