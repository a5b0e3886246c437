"""The door: the grammar first, the sentence reader only when the grammar (or the compiler) refuses a
text, and the language's own error, with whole questions that answer, when neither reads it."""

from __future__ import annotations

import re

from kbq.errors import AmbiguousTermError, QueryError
from kbq.lang.catalog import Catalog, Run
from kbq.lang.parse import MAX_DIGITS
from kbq.lang.plan import Plan
from kbq.lang.sentence.checks import _checked, _form, _plan
from kbq.lang.sentence.lexicon import (
    AmbiguousSentenceError,
    CheckFn,
    Reading,
    SentenceError,
    UnanswerableSentenceError,
    _tokens,
    lexicon,
)
from kbq.lang.sentence.reader import Reader, read_sentence
from kbq.store.names import normalise

_USING = re.compile(r"\busing\s+(\S+)")
_STRUCTURED = re.compile(r"[=<>]|\b(where|order\s+by|limit)\b", re.IGNORECASE)
_UNPLACED_FORMS = ("WorkloadQuestion:speed", "WorkloadQuestion:time")  # forms a missing card makes a ranking
_YEAR = re.compile(r"^(?:19|20)\d\d$")  # a year the grammar reads after 'in' ('gpu for bert in 2019')


def compile_text(text: str, catalog: Catalog, run: Run) -> Plan:
    """The plan of a question: compiled as written when the language reads it (a canonical
    question keeps its meaning), else the plan of the canonical question the sentence reader
    finds, marked with it ('read as: ...'). A text neither reads raises the language's error,
    whose suggestions are whole questions that answer (not the grammar's token list)."""
    from kbq.lang.compile import compile_question

    try:
        return compile_question(text, catalog, run)
    except QueryError as exc:
        refused = exc
    if any(len(digits) > MAX_DIGITS for digits in re.findall(r"\d+", text)):
        raise refused  # a number too large to read: the language's error names it; no reading may drop it

    def check(question: str) -> Exception | None:
        return _checked(question, catalog, run)[0]

    if _STRUCTURED.search(text):  # a condition, an order or a limit: a canonical question, maybe wrapped in words
        embedded = Reader(text, catalog, run, _unknown(refused)).embedded()
        if embedded is None:
            raise refused
        return _marked(_plan(embedded.canonical, catalog, run), embedded)

    if isinstance(refused, AmbiguousTermError):
        raise refused  # a name with several meanings: its candidates are the readings
    if type(refused) is QueryError and _form(text) in _UNPLACED_FORMS:  # 'how fast is llama 3 8b': no hardware
        unplaced = Reader(text, catalog, run).unplaced(check)
        if unplaced is not None:
            return _marked(_plan(unplaced.canonical, catalog, run), unplaced)
    if type(refused) is QueryError and _form(text) not in (None, "SubjectQuestion"):
        raise refused  # the language read the form and its names: what is wrong is the question itself
    try:
        reading = read_sentence(text, catalog, run, check, _unknown(refused))
    except AmbiguousSentenceError as several:
        if type(refused) is QueryError:
            raise refused from None  # the language understood the words: its own error, not readings of them
        if _substituted(refused, text, check) or _form(text) not in (None, "SubjectQuestion"):
            # 'gpu for lstmm' (the KB's close name answers) or a form the language has: its own error first
            raise _teaching(refused, several, text, check) from None
        raise
    except UnanswerableSentenceError as unread:
        if type(refused) is QueryError and _form(text) is not None:
            raise refused from None  # the language read the question and refused its meaning ('gpu for lstm on 0 gpus')
        if _substituted(refused, text, check):
            raise _teaching(refused, unread, text, check) from None  # a close name the KB knows answers
        raise unread from None  # what is missing, and the nearest questions that answer
    except SentenceError as unread:
        raise _teaching(refused, unread, text, check) from None
    if _form(text) not in (None, "SubjectQuestion") and _form(text) != _form(reading.canonical) and not reading.no_model:
        # a question of a form the language has ('speed of X on 24gb') keeps that form: its own error,
        # with the reading as a suggestion, rather than an answer to another question; but a question the
        # language refused only for words that name no model ('can I run this on my rtx 4090') is the reverse
        raise _teaching(refused, SentenceError("", suggestions=[reading.canonical]), text, check) from None
    if _names_backend(text, catalog) and not _USING.search(reading.canonical):
        raise refused  # the reading would drop the backend the question names ('using frobnicator')
    if _settings_named(text, catalog) - _settings_named(reading.canonical, catalog):
        raise refused  # the reading would drop a setting the question names ('with selective recompute')
    if dropped := _numbers(text) - _numbers_kept(reading.canonical) - set(reading.observed):
        dated = _with_year(reading, dropped, text, check)
        if dated is None and _form(text) is not None:
            raise refused  # a question the grammar read keeps its numbers ('gpu for lstm on 0 gpus'), but for reported ones
        reading = dated or reading
    return _marked(_plan(reading.canonical, catalog, run), reading)


def _with_year(reading: Reading, dropped: set[str], text: str, check: CheckFn) -> Reading | None:
    """A year the reading left out ('... which to buy in 2026'; the grammar's 'in YEAR'): kept when
    the reading takes it, else dropped and said; None when something else was left out."""
    years = {n for n in dropped if _YEAR.match(n) and re.search(rf"\bin\s+{n}\b", text, re.IGNORECASE)}
    if len(years) != 1 or years != dropped:
        return None
    year = years.pop()
    dated = f"{reading.canonical} in {year}"
    if check(dated) is None:
        return reading._replace(canonical=dated)
    note = f"'in {year}' left out: {reading.canonical!r} has no date; the KB's figures are those it holds now"
    return reading._replace(notes=(*reading.notes, note))


def _unknown(refused: QueryError) -> str:
    """The name the language refused as unknown ('' for other errors)."""
    quoted = re.search(r"unknown [\w ]*?'([^']+)'", refused.message)
    return quoted.group(1) if quoted else ""


def _names_backend(text: str, catalog: Catalog) -> bool:
    """Whether 'using X' in a text may name a backend ('using frobnicator'); not when X is a word the
    reader ignores ('when using any family of llama models')."""
    used = _USING.search(text)
    return used is not None and lexicon(catalog).roles.get(f"ignore:{used.group(1).lower()}") != "ignore"


def _numbers_kept(canonical: str) -> set[str]:
    """The numbers a canonical question keeps, with their unit or not ('24gb' keeps the sentence's '24 GB')."""
    return set(re.findall(r"(?<![\w.])(\d+)(?:gb|gib|mb|tb)?(?![\w.])", canonical, re.IGNORECASE))


def _numbers(text: str) -> set[str]:
    """The standalone numbers of a text ('0 gpus', 'a 3090'; not the digits of 'v0.3' or '8b')."""
    return set(re.findall(r"(?<![\w.])\d+(?![\w.])", text))


def _marked(plan: Plan, reading: Reading) -> Plan:
    plan.extra["read_as"] = reading.canonical
    plan.extra["read_notes"] = list(reading.notes)
    return plan


def _settings_named(text: str, catalog: Catalog) -> set[str]:
    """The settings a text names by their words ('selective recompute', 'zero', 'context')."""
    toks = _tokens(text.lower())
    found = set()
    for i in range(len(toks)):
        for j in range(i + 1, min(len(toks), i + 4) + 1):
            setting = catalog.settings.get(normalise(" ".join(toks[i:j])))
            rate = j < len(toks) and toks[j] in ("per", "/s", "/sec")  # 'tokens per second' is a rate, not a setting
            valued = any(re.match(r"\$?\d", t) for t in toks[max(0, i - 1) : i] + toks[j : j + 1])
            if setting is not None and not rate and (setting.flag or setting.dimension is None or valued):
                found.add(setting.name)  # a setting that takes a number is asked only with one ('high vram usage' is not)
    return found


def _substituted(refused: QueryError, text: str, check: CheckFn) -> list[str]:
    """The question as written with its unknown name replaced by each close name the KB suggests,
    kept when it answers ('gpu for lstmm' -> 'gpu for LSTM')."""
    out: list[str] = []
    quoted = re.search(r"'([^']+)'", refused.message)
    if quoted and refused.suggestions:
        unknown = quoted.group(1)
        at = text.lower().find(unknown.lower())
        if at >= 0:
            for name in refused.suggestions:
                candidate = text[:at] + name + text[at + len(unknown) :]
                if candidate != text and check(candidate) is None:
                    out.append(candidate)
    return out


def _teaching(refused: QueryError, unread: QueryError, text: str, check: CheckFn) -> QueryError:
    """The language's own error, with the nearest questions that answer as its suggestions: the
    question with an unknown name replaced by the KB's close names, then the sentence reader's."""
    questions = _substituted(refused, text, check)
    questions += [q for q in unread.suggestions if q not in questions]
    error = type(refused)(
        refused.message,
        query=refused.query or text,
        column=refused.column,
        expected=[] if questions else refused.expected,
        suggestions=questions[:6] or refused.suggestions,
    )
    return error
