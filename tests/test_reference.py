"""The language reference (docs/language.md): generated from the grammar and the KB, every example
answers, every grammar rule and keyword is documented by an example, `kbq help` and the server
give the same text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from lark import Lark, Token, Tree
from server_helpers import shared_kbq

from kbq import errors
from kbq.lang import reference
from kbq.store import resources

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "language.md"
SECTIONS = reference.sections()
EXAMPLES = list(dict.fromkeys(e for s in SECTIONS for e in s.examples))


def kbq(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kbq", *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_the_committed_reference_is_the_generated_one(kb) -> None:  # type: ignore[no-untyped-def]
    generated = reference.Reference(kb.catalog, kb.table).markdown()
    assert DOC.read_text(encoding="utf-8") == generated, "docs/language.md is stale: run kbq help --write docs/language.md"


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_answers(kb, example: str) -> None:  # type: ignore[no-untyped-def]
    answer = kb.answer(example)
    assert answer.rows, f"{example!r} answers with no rows"
    assert f"\n{example}\n" in DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "question"), sorted(reference.error_examples().items()))
def test_every_error_example_raises_its_error(kb, name: str, question: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(errors.KbqError) as raised:
        kb.answer(question)
    assert type(raised.value).__name__ == name
    assert str(raised.value).splitlines()[-1] in DOC.read_text(encoding="utf-8")


def test_every_error_class_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.KbqError)]
    assert len(classes) >= 10
    for cls in classes:
        assert f"### {cls.__name__}\n" in text and f"Exit code {cls.exit_code}; HTTP status {cls.http_status}" in text


# --- every rule and keyword of the grammar has a documented example -----------------------------


def _parsers(grammar: str) -> tuple[Lark, Lark]:
    """The kbq parser, and one that keeps every token (to see which keywords an example uses)."""
    options = {"parser": "lalr", "lexer": "contextual", "start": ["start", "expr_start"]}
    return Lark(grammar, **options), Lark(grammar, keep_all_tokens=True, **options)  # type: ignore[arg-type]


def _trees(parser: Lark, text: str) -> list[Tree[Token]]:
    """The example's tree, and the tree of a `with` clause that holds a condition (parsed again, as kbq does)."""
    tree = parser.parse(text, start="start")
    found = [tree]
    for clause in tree.find_data("with"):
        words = [t for t in clause.scan_values(lambda v: isinstance(v, Token))]
        if any(t.type == "COMPARATOR" for t in words):
            start = min(t.start_pos for t in words if t.type != "WITH")  # type: ignore[type-var]
            stop = max(t.end_pos for t in words)  # type: ignore[type-var]
            found.append(parser.parse(text[start:stop], start="expr_start"))
    return found


def uncovered(grammar: str, sections: list[reference.Section]) -> list[str]:
    """What the reference does not document with an example: forms and clauses with no section
    whose examples use them, rules no example uses, terminals no example contains."""
    plain, keeping = _parsers(grammar)
    missing = []
    used_rules: set[str] = set()
    used_terminals: set[str] = set()
    for section in sections:
        in_section: set[str] = set()
        for example in section.examples:
            for tree in _trees(plain, example):
                in_section |= {t.data for t in tree.iter_subtrees()}  # type: ignore[misc]
            for tree in _trees(keeping, example):
                used_terminals |= {t.type for t in tree.scan_values(lambda v: isinstance(v, Token))}
        used_rules |= in_section
        missing += [f"section {section.name}: no example uses rule {r}" for r in section.rules if r not in in_section]
    alternatives = {
        str(rule.expansion[0].name)
        for rule in plain.rules
        if rule.origin.name in ("question", "clause") and len(rule.expansion) == 1
    }
    documented = {r for s in sections for r in s.rules}
    missing += [f"form or clause {r} has no section" for r in sorted(alternatives - documented)]
    nodes = {  # rules that can be a node of a tree (not inlined: `?rule` with one kept child, `_rule`)
        str(rule.alias or rule.origin.name)
        for rule in plain.rules
        if not (rule.options.expand1 and len([s for s in rule.expansion if not (s.is_term and s.filter_out)]) == 1)
        and not str(rule.origin.name).startswith("_")
    } - {"start", "expr_start"}
    missing += [f"rule {r} is in no example" for r in sorted(nodes - used_rules)]
    terminals = {t.name for t in plain.terminals} - set(plain.ignore_tokens)
    missing += [f"terminal {t} is in no example" for t in sorted(terminals - used_terminals)]
    return missing


def test_every_grammar_rule_and_keyword_has_a_documented_example() -> None:
    grammar = Path(resources.grammar_path()).read_text(encoding="utf-8")
    assert uncovered(grammar, SECTIONS) == []


def test_the_coverage_check_fails_on_an_undocumented_rule() -> None:
    grammar = Path(resources.grammar_path()).read_text(encoding="utf-8")
    grown = grammar.replace("         | how_many_question\n", "         | how_many_question\n         | cost_question\n")
    grown += '\ncost_question: COST (FOR | OF) target clause*\nCOST: "cost"i\n'
    assert "| cost_question" in grown  # the form was added to the question alternatives
    missing = uncovered(grown, SECTIONS)
    assert "form or clause cost_question has no section" in missing
    assert "terminal COST is in no example" in missing
    without_limit = [s._replace(examples=tuple(e for e in s.examples if " limit " not in e)) for s in SECTIONS]
    assert "section limit: no example uses rule limit" in uncovered(grammar, without_limit)


def test_syntax_lines_come_from_the_grammar() -> None:
    assert reference.syntax("describe_question") == "(describe | show) <phrase>"
    assert reference.syntax("as_of") == "as of (<date> | <number>)"
    assert reference.syntax("order") == "order by <ratio> [asc | ascending | desc | descending]"


# --- kbq help and the server ----------------------------------------------------------------------


def test_help_lists_every_section_and_prints_one() -> None:
    listing = kbq("help")
    assert listing.returncode == 0, listing.stderr
    for section in SECTIONS:
        assert section.name in listing.stdout and section.title in listing.stdout
    memory = kbq("help", "memory")
    assert memory.returncode == 0 and memory.stdout.startswith("## memory: ")
    assert memory.stdout in DOC.read_text(encoding="utf-8")
    wrong = kbq("help", "memroy")
    assert wrong.returncode == 2 and "did you mean memory" in wrong.stderr and "Traceback" not in wrong.stderr


def test_help_write_writes_the_reference(tmp_path: Path) -> None:
    target = tmp_path / "language.md"
    run = kbq("help", "--write", str(target))
    assert run.returncode == 0, run.stderr
    assert target.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")


@pytest.mark.server
def test_the_server_serves_the_reference() -> None:
    server = shared_kbq()
    response = httpx.get(server.url + "/docs/language.md", timeout=30)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    assert response.text == DOC.read_text(encoding="utf-8")
    assert 'href="docs/language.html"' in httpx.get(server.url + "/", timeout=30).text
    html = httpx.get(server.url + "/docs/language.html", timeout=30)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "<h1>The kbq question language</h1>" in html.text and "<script" not in html.text
