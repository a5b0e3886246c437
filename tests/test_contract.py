"""The KB contract (kbq/lang/contract.py) both ways: what the code reads exists in the KB, what
the code spells is listed, and every enumeration the KB holds is one the code implements."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbq.lang import contract
from kbq.lang.catalog import PREFIXES

ROOT = Path(__file__).resolve().parent.parent
CODE = [p for p in (ROOT / "kbq").rglob("*.py") if p.name != "contract.py"]


def _spelled(pattern: str) -> set[str]:
    found: set[str] = set()
    for path in CODE:
        found |= set(re.findall(pattern, path.read_text(encoding="utf-8")))
    return found


def test_every_term_the_code_spells_is_in_the_contract() -> None:
    spelled = _spelled(r"kbq:([A-Za-z][A-Za-z0-9]*)") | _spelled(r'\bk\("([A-Za-z]+)"\)')
    spelled |= _spelled(r"https://kbq\.dev/ontology#([A-Za-z0-9]+)")
    spelled.discard("kbq")
    assert spelled - contract.TERMS == set()
    individuals = _spelled(r"\bkb:([A-Z][A-Za-z0-9]*)") | _spelled(r"https://kbq\.dev/kb/([A-Za-z0-9]+)")
    assert individuals - contract.INDIVIDUALS - contract.SENTINELS == set()


def test_every_contract_term_exists_in_the_kb(kb) -> None:  # type: ignore[no-untyped-def]
    names = {str(r[0]) for r in kb.table(PREFIXES + "SELECT DISTINCT ?t WHERE { { ?t ?p ?o } UNION { ?s ?t ?o } }").rows}
    missing = {t for t in contract.TERMS | set(contract.MODEL_PROPERTIES.values()) if contract.ONTOLOGY + t not in names}
    assert missing == set()
    assert {i for i in contract.INDIVIDUALS if contract.KB + i not in names} == set()


@pytest.mark.parametrize(
    ("pattern", "listed"),
    [
        ("?s kbq:settingName ?v", contract.SETTINGS),
        ("?s kbq:rankStrategy ?v", contract.STRATEGIES),
        ("?s kbq:constantName ?v", contract.CONSTANTS),
        ("?s kbq:defaultName ?v", contract.DEFAULTS),
    ],
)
def test_enumerations_match_both_ways(kb, pattern: str, listed: frozenset[str]) -> None:  # type: ignore[no-untyped-def]
    in_kb = {str(r[0]) for r in kb.table(PREFIXES + f"SELECT DISTINCT ?v WHERE {{ {pattern} }}").rows}
    assert in_kb - listed == set(), "the KB defines names no code reads"
    assert listed - in_kb == set(), "the code reads names the KB does not define"


def test_a_new_ranking_strategy_fails_validation(tmp_path: Path) -> None:
    from kbq.build.validate import validate_files

    overlay = tmp_path / "mode.ttl"
    overlay.write_text(
        "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        'kb:GreenestMode a kbq:RankingMode ; rdfs:label "greenest" ; rdfs:comment "c" ; kbq:rankStrategy "carbon" .\n'
    )
    found = validate_files([overlay])
    assert any("ranking strategy" in v.message for v in found), found


def test_every_form_resolves_and_every_plan_kind_is_a_form() -> None:
    from kbq.lang import forms

    for form in forms.FORMS.values():
        assert callable(forms.compiler(form.kind)) and callable(forms.shaper(form.kind)), form.kind
    kinds = _spelled(r'Plan\(\s*"([a-z_]+)"') | _spelled(r'plan\.kind, plan\.subject = "([a-z_]+)"')
    assert kinds and kinds <= set(forms.FORMS), kinds - set(forms.FORMS)
