"""Golden questions: examples/questions.kbq -> examples/answers/NNN.json, one case each.

Answers are updated only on purpose, with `pytest tests/test_golden.py --update-golden`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbq.errors import KbqError, NoResultError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
QUESTIONS = [
    line.strip()
    for line in (EXAMPLES / "questions.kbq").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.lstrip().startswith("#")
]


def answer_record(kb, question: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """What a golden file pins: the table, or the error kind with its column and hints."""
    try:
        result = kb.answer(question)
    except NoResultError as exc:
        return {"question": question, "no_result": str(exc)}
    except KbqError as exc:
        return {
            "question": question,
            "error": type(exc).__name__,
            "column": getattr(exc, "column", None),
            "suggestions": getattr(exc, "suggestions", []),
        }
    return {"question": question, "kind": result.kind, "columns": result.columns, "rows": result.rows}


@pytest.mark.parametrize(
    ("number", "question"), list(enumerate(QUESTIONS, start=1)), ids=[f"q{i:02d}" for i in range(1, len(QUESTIONS) + 1)]
)
def test_golden_answer(kb, request: pytest.FixtureRequest, number: int, question: str) -> None:  # type: ignore[no-untyped-def]
    path = EXAMPLES / "answers" / f"{number:03d}.json"
    got = json.loads(json.dumps(answer_record(kb, question), ensure_ascii=False))
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert path.exists(), f"no golden answer for {question!r}: run pytest --update-golden and review the file"
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert got == expected


def test_no_stale_golden_files() -> None:
    files = sorted((EXAMPLES / "answers").glob("*.json"))
    assert len(files) == len(QUESTIONS)
    for number, question in enumerate(QUESTIONS, start=1):
        assert json.loads((EXAMPLES / "answers" / f"{number:03d}.json").read_text(encoding="utf-8"))["question"] == question
