"""Validation: broken Turtle names file and line; SHACL violations name subject and file.

The bad-input cases add their file to the tests' tiny KB (KBQ_DATA_DIR, tests/data/tiny_kb: the
shipped ontology and shapes, 7 GPUs and 7 models of the shipped KB), where pySHACL, the reference,
takes a fraction of its time over the whole KB; the shipped KB itself is checked by all three
validators in test_validators_agree_that_the_shipped_knowledge_conforms."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TINY_KB

from kbq.build.loader import load
from kbq.build.validate import validate_files, violations
from kbq.errors import KnowledgeFileError
from kbq.store import resources

PREFIXES = (
    "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\n"
    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
    "@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix dcterms: <http://purl.org/dc/terms/> .\n"
)


def test_shipped_knowledge_conforms() -> None:
    assert resources.data_dir() is None  # the shipped kb/, not the tiny one
    assert validate_files() == []


def test_turtle_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.ttl"
    bad.write_text(PREFIXES + 'kb:X a kbq:GPU ;\n    rdfs:label "X"\n    kbq:memory 3.0 .\n')
    with pytest.raises(KnowledgeFileError) as info:
        load([bad])
    assert info.value.path.endswith("broken.ttl")
    assert info.value.line == 6
    assert "broken.ttl:6" in str(info.value)


def test_gpu_without_source_and_with_negative_memory(tmp_path: Path, tiny_kb: Path) -> None:
    bad = tmp_path / "my_gpus.ttl"
    bad.write_text(
        PREFIXES + 'kb:MyCard a kbq:GPU ; rdfs:label "My Card" ; rdfs:comment "c" ; kbq:vendor kb:NVIDIA ;\n'
        '  kbq:releaseDate "2024-01-01"^^xsd:date ; kbq:memory -4.0 ; kbq:boardDesign kb:MyCardDesign .\n'
        'kb:MyCardDesign a kbq:BoardDesign ; rdfs:label "d" ; rdfs:comment "d" ; kbq:cooling kb:Blower ;\n'
        "  dcterms:source <https://example.org/> .\n"
    )
    found = validate_files([bad])
    messages = {(v.subject, v.message) for v in found}
    assert ("kb:MyCard", "a GPU needs at least one dcterms:source") in messages
    assert any(v.subject == "kb:MyCard" and "memory" in v.message for v in found)
    assert all("my_gpus.ttl" in v.files for v in found)


def test_ontology_terms_need_label_and_comment(tmp_path: Path) -> None:
    bad = tmp_path / "onto.ttl"
    bad.write_text(PREFIXES + 'kbq:newThing a owl:DatatypeProperty ; rdfs:label "new thing" .\n')
    found = violations(load([bad]))
    assert [(v.subject, v.message) for v in found] == [("kbq:newThing", "every ontology term needs an rdfs:comment")]


def test_kbq_validate_command_fails_with_subject_and_file(tmp_path: Path, tiny_kb: Path) -> None:
    bad = tmp_path / "my_gpus.ttl"
    bad.write_text(PREFIXES + 'kb:MyCard a kbq:GPU ; rdfs:label "My Card" ; rdfs:comment "c" .\n')
    before = bad.read_bytes()
    run = subprocess.run([sys.executable, "-m", "kbq", "validate", str(bad)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "my_gpus.ttl: kb:MyCard" in run.stderr
    assert "Traceback" not in run.stderr
    assert bad.read_bytes() == before


def test_kbq_validate_reports_syntax_error_with_line(tmp_path: Path, tiny_kb: Path) -> None:
    bad = tmp_path / "broken.ttl"
    bad.write_text(PREFIXES + "kb:X a kbq:GPU\n")
    run = subprocess.run([sys.executable, "-m", "kbq", "validate", str(bad)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "broken.ttl:" in run.stderr and "Traceback" not in run.stderr


BAD_DATA = {
    "negative memory, no source": (
        'kb:MyCard a kbq:GPU ; rdfs:label "My Card" ; rdfs:comment "c" ; kbq:vendor kb:NVIDIA ;\n'
        '  kbq:releaseDate "2024-01-01"^^xsd:date ; kbq:memory -4.0 ; kbq:boardDesign kb:MyCardDesign .\n'
        'kb:MyCardDesign a kbq:BoardDesign ; rdfs:label "d" ; rdfs:comment "d" ; kbq:cooling kb:Blower ;\n'
        "  dcterms:source <https://example.org/> .\n"
    ),
    "ontology term without comment": 'kbq:newThing a owl:DatatypeProperty ; rdfs:label "new thing" .\n',
    "bare gpu": 'kb:MyCard a kbq:GPU ; rdfs:label "My Card" ; rdfs:comment "c" .\n',
    "segment outside the list, two memory types": ('kb:RTX4090 kbq:segment "datacenter" ; kbq:memoryType "GDDR6X", "GDDR7" .\n'),
    "wrong datatypes": 'kb:RTX4090 kbq:nvlink "yes" ; kbq:launchPrice "cheap" .\n',
}


BAD_DATA |= {
    "an ill-formed literal, a count too high, a class that is not one": (
        'kb:RTX4090 kbq:slots "two"^^xsd:integer ; kbq:vendor kb:Ampere .\n'
        'kb:MyRelease a kbq:SdkRelease ; rdfs:label "r" ; rdfs:comment "c" ; kbq:versionMajor 1, 2 ; kbq:versionMinor 1.5 .\n'
    ),
    "query key pattern, range bounds": (
        'kbq:memory kbq:queryKey "Not A Key" . kb:RTX4090 kbq:slots 9 ; kbq:tensorTflops -1.0 .\n'
    ),
}


@pytest.fixture(scope="module")
def pyshacl_reports(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(the bad file, pySHACL's violations) per case, computed once for both fast validators
    (pySHACL is the slow part of these tests), over the tiny KB and the bad file."""
    found: dict[str, tuple[Path, list[object]]] = {}

    def reference(case: str) -> tuple[Path, list[object]]:
        if case not in found:
            bad = tmp_path_factory.mktemp("bad") / "mine.ttl"
            bad.write_text(PREFIXES + BAD_DATA[case])
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("KBQ_DATA_DIR", str(TINY_KB))
                found[case] = (bad, violations(load([*resources.knowledge_files(), bad]), validator="pyshacl"))
        return found[case]

    return reference


@pytest.mark.parametrize("validator", ["sparql", "rudof"])
@pytest.mark.parametrize("case", sorted(BAD_DATA))
def test_fast_validators_report_what_pyshacl_reports(pyshacl_reports, tiny_kb: Path, case: str, validator: str) -> None:  # type: ignore[no-untyped-def]
    """The build validates with SPARQL-compiled shapes (rudof beyond them); pySHACL is the
    reference: the same violations, files and all."""
    bad, reference = pyshacl_reports(case)
    fast = violations(load([*resources.knowledge_files(), bad]), validator=validator)  # type: ignore[arg-type]
    assert fast == reference
    assert fast and all(v.files for v in fast)


def test_sparql_validator_reports_an_unmet_or_as_pyshacl_does(tmp_path: Path, tiny_kb: Path) -> None:
    """sh:or with the shape's message (rudof words this one its own way)."""
    bad = tmp_path / "mine.ttl"
    bad.write_text(
        PREFIXES + 'kb:MyRelease a kbq:SdkRelease ; rdfs:label "r" ; rdfs:comment "c" ; kbq:releaseOf kb:RTX4090 ;\n'
        "  kbq:versionMajor 1 ; kbq:versionMinor 0 .\n"
    )
    loaded = load([*resources.knowledge_files(), bad])
    found = violations(loaded, validator="sparql")
    assert found == violations(loaded, validator="pyshacl")
    assert [(v.subject, v.message) for v in found] == [("kb:MyRelease", "a release needs its SDK or framework")]


def test_validators_agree_that_the_shipped_knowledge_conforms() -> None:
    assert resources.data_dir() is None
    loaded = load(resources.knowledge_files())
    assert violations(loaded, validator="sparql") == violations(loaded, validator="rudof") == []
    assert violations(loaded, validator="pyshacl") == []


def test_shapes_beyond_the_compiled_subset_fall_back_to_rudof(tmp_path: Path) -> None:
    from kbq.build import shacl_sparql

    assert shacl_sparql.compile_shapes(resources.shapes_file())  # the shipped shapes compile
    beyond = tmp_path / "shapes.ttl"
    beyond.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix kbq: <https://kbq.dev/ontology#> .\n"
        "kbq:S a sh:NodeShape ; sh:targetClass kbq:GPU ;\n"
        '  sh:property [ sh:path kbq:memory ; sh:lessThan kbq:tdp ; sh:message "m" ] .\n'
    )
    assert shacl_sparql.compile_shapes(beyond) is None
