"""The library API: typed results, overlays, typed errors, no printing."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbq import KnowledgeBase, __version__
from kbq.errors import KbqSyntaxError, NoResultError, UnknownTermError
from kbq.models import GPU, Answer, Entity, SparqlResult

OVERLAY = """@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> . @prefix dcterms: <http://purl.org/dc/terms/> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .

kbq:lab_count a owl:DatatypeProperty ; rdfs:label "cards in our lab" ; rdfs:comment "How many we own." ;
    rdfs:domain kbq:GPU ; rdfs:range xsd:integer ; kbq:queryKey "owned" ; kbq:unit kb:One .

kb:LabCard a kbq:GPU ; rdfs:label "Lab Card 9000" ; skos:altLabel "labcard" ; rdfs:comment "A test GPU." ;
    kbq:vendor kb:NVIDIA ; kbq:releaseDate "2026-01-01"^^xsd:date ; kbq:memory 999.0 ;
    kbq:memoryBandwidth 99999.0 ; kbq:lab_count 3 ; kbq:formFactor kb:PCIe ; dcterms:source <https://example.org/lab> ;
    kbq:boardDesign kb:LabCardBlower .
kb:LabCardBlower a kbq:BoardDesign ; rdfs:label "Lab Card blower" ; rdfs:comment "Blower." ;
    kbq:cooling kb:Blower ; kbq:maxCardsPerChassis 10 ; dcterms:source <https://example.org/lab> .
kb:RTX2080Ti kbq:lab_count 2 .
<https://example.org/lab> rdfs:label "our lab's inventory sheet" ; kbq:tier kb:TierReported .
"""


@pytest.fixture(scope="module")
def overlay_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    path = tmp_path_factory.mktemp("overlay") / "lab.ttl"
    path.write_text(OVERLAY)
    before = path.read_bytes()
    kb = KnowledgeBase.load(path)
    assert path.read_bytes() == before
    return kb


def test_version_matches_metadata() -> None:
    from importlib.metadata import version

    assert version("kbq") == __version__


def test_sparql_returns_a_pydantic_result(kb: KnowledgeBase) -> None:
    result = kb.sparql("SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { ?g a <https://kbq.dev/ontology#GPU> }")
    assert isinstance(result, SparqlResult)
    assert result.columns == ["n"] and result.rows[0][0] >= 30


def test_ask_returns_an_answer_with_sparql_and_explanation(kb: KnowledgeBase) -> None:
    answer = kb.ask("best gpu for bert on dense 9-card chassis as of 2020-03")
    assert isinstance(answer, Answer)
    assert answer.rows[0][1] == "Quadro RTX 8000"
    assert "SELECT" in answer.sparql and any("profile" in line for line in answer.explanation)


def test_gpus_and_entity(kb: KnowledgeBase) -> None:
    gpus = kb.gpus(where="memory >= 80gb and vendor = nvidia", order_by="memory", limit=3)
    assert gpus and all(isinstance(g, GPU) for g in gpus)
    assert all(g.specs["memory"] >= 80 for g in gpus)
    assert [g.specs["memory"] for g in gpus] == sorted((g.specs["memory"] for g in gpus), reverse=True)
    entity = kb.entity("rtx 2080 ti")
    assert isinstance(entity, Entity) and entity.name == "GeForce RTX 2080 Ti" and entity.sources


def test_typed_errors(kb: KnowledgeBase) -> None:
    with pytest.raises(KbqSyntaxError):
        kb.ask("gpu for lstm where")
    with pytest.raises(UnknownTermError) as info:
        kb.ask("gpu for lstn")
    assert info.value.suggestions == ["gpu for LSTM"]  # the whole question that answers (errors that teach)
    with pytest.raises(NoResultError):
        kb.ask("gpus where memory > 5000gb")


def test_overlay_adds_a_gpu_and_a_query_key_without_code(overlay_kb: KnowledgeBase, kb: KnowledgeBase) -> None:
    answer = overlay_kb.ask("gpus where owned >= 2 order by owned desc")
    assert [row[1] for row in answer.rows] == ["Lab Card 9000", "GeForce RTX 2080 Ti"]
    assert overlay_kb.ask("best gpu for lstm where cooling = blower").rows[0][1] == "Lab Card 9000"
    assert overlay_kb.ask("best gpu for bert on dense 10-card chassis").rows[0][1] == "Lab Card 9000"
    with pytest.raises(UnknownTermError):
        kb.ask("gpus where owned >= 2")


def test_library_never_prints(kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]) -> None:
    kb.ask("frameworks for rnn")
    with pytest.raises(UnknownTermError):
        kb.ask("frameworks for nothing-like-this")
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_examples_embedding_script_runs() -> None:
    import runpy

    script = Path(__file__).parent.parent / "examples" / "embed.py"
    namespace = runpy.run_path(str(script), run_name="not_main")
    assert namespace["recommend"]("lstm")[0]
