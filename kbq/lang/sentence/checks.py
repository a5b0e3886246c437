"""Whether a canonical question answers on a KB (kept per KB), its plan, the form the grammar reads a
text as, and the first GPU of a ranking: what the reader and the door ask of the language."""

from __future__ import annotations

import copy

from kbq.errors import QueryError
from kbq.lang.catalog import Catalog, Run
from kbq.lang.plan import Plan
from kbq.lang.sentence.lexicon import _say
from kbq.store.names import normalise

_CHECKS_KEPT = 512  # canonical questions whose check (and plan) a KB keeps for the sentence reader


def _first_ranked(ranking: str, catalog: Catalog, run: Run) -> str | None:
    """The first GPU of a ranking question ('best gpu for deepseek-v3'), as the grammar reads it;
    None when the ranking does not answer or is empty."""
    from kbq.lang.run import run_plan

    if _checked(ranking, catalog, run)[0] is not None:
        return None
    result = run_plan(ranking, _plan(ranking, catalog, run), catalog, run)
    iri = result.rows[0][0] if result.rows else None
    if not isinstance(iri, str):
        return None
    name = _say(catalog.label(iri), "")  # its label, or its IRI's name when the label holds '(' or ','
    local = iri.rsplit("/", 1)[-1].replace("_", " ")
    if not name and any(t.iri == iri for t in catalog.lookup([local]).get(normalise(local), [])):
        name = local
    return name or None


def _form(text: str) -> str | None:
    """The form the grammar reads a text as ('WorkloadQuestion:speed'), None when it does not parse."""
    from kbq.lang.parse import parse

    try:
        question = parse(text)
    except QueryError:
        return None
    form = getattr(question, "form", None)
    return type(question).__name__ + (f":{form}" if form else "")


def _answers(question: str, catalog: Catalog, run: Run) -> Exception | None:
    """None when the canonical question compiles and answers on this KB, else why not."""
    return _checked(question, catalog, run)[0]


def _checked(question: str, catalog: Catalog, run: Run) -> tuple[Exception | None, Plan | None]:
    """Whether a canonical question answers on this KB, and its plan when it does. Kept per KB (a
    bounded memo): sentences try the same canonical questions ('largest model for 24gb'), and the
    reading's plan is the one its check compiled."""
    from kbq.bounded import BoundedDict
    from kbq.errors import KbqError
    from kbq.lang.compile import compile_question
    from kbq.lang.run import run_plan

    memo: BoundedDict[str, tuple[Exception | None, Plan | None]] = catalog.__dict__.setdefault(
        "_sentence_checks", BoundedDict(_CHECKS_KEPT)
    )
    if question not in memo:
        try:
            plan = compile_question(question, catalog, run)
            run_plan(question, copy.deepcopy(plan), catalog, run)
        except KbqError as exc:
            memo[question] = (exc, None)
        else:
            memo[question] = (None, plan)
    return memo[question]


def _compiles(question: str, catalog: Catalog, run: Run) -> bool:
    """Whether the language reads a question on this KB (its answer is not run: a canonical question
    inside a sentence is the question as written, answered once, errors and all)."""
    from kbq.errors import KbqError
    from kbq.lang.compile import compile_question

    try:
        compile_question(question, catalog, run)
    except KbqError:
        return False
    return True


def _plan(question: str, catalog: Catalog, run: Run) -> Plan:
    """The plan of a canonical question a check found to answer (a copy: the reading marks it)."""
    from kbq.lang.compile import compile_question

    plan = _checked(question, catalog, run)[1]
    return copy.deepcopy(plan) if plan is not None else compile_question(question, catalog, run)
