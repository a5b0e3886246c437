"""The sentence reader's words and tokens: the intents, cues and word roles read from the KB
(kb/sentences.ttl), a sentence cut into words, and the small helpers every part shares."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple, TypeVar

from kbq.errors import QueryError
from kbq.lang.catalog import PREFIXES, Catalog, Term
from kbq.store.resources import KB_NS

DATA_SIZE = KB_NS + "DataSize"
COUNT = KB_NS + "Count"  # the dimension of a setting that counts (tokens, batch, epochs)
MONEY = KB_NS + "Money"
T = TypeVar("T")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_TOKEN = re.compile(r"\$?[\w][\w.$%/+\-]*|\$\d+(?:\.\d+)?k?")
_NUMBER = re.compile(r"^\$?(\d+(?:\.\d+)?)([a-z%$/]*)$")
_COUNT_PREFIX = re.compile(r"^(\d+)[x×\*]([a-z].*|\d{3,}.*)$")  # '2x3090', '4xa100' (not '8x7b')
_SIZE = re.compile(r"^(?:\d+x)?\d+(?:\.\d+)?b$")  # '70b', '8x7b': a model size
_ACTIVE = re.compile(r"^a\d+(?:\.\d+)?b$")  # 'a3b' after '30b': the active parameters of a mixture of experts
_JOINED = re.compile(r"(?<=[a-z0-9])\+(?=[a-z])")  # a plus between two names ('lora+flashattention2'), not '16gb+'
_GRAMMAR_WORD = re.compile(r"^[^\s=<>!(),\"']+$")
_SLOT = re.compile(r"\{(\w+)\}")
_PUNCTUATION = " ?!.,:;\"'\u3002\uff1f\uff01\uff0c"
_MAX_RUN = 7
CheckFn = Callable[[str], Exception | None]  # None: the canonical question answers


class Intent(NamedTuple):
    label: str
    priority: int
    cues: tuple[str, ...]  # normalised token sequences joined by ' '
    templates: tuple[str, ...]
    unplaced: frozenset[str] = frozenset()  # templates for a question that names no hardware (a ranking)
    unnamed: frozenset[str] = frozenset()  # templates for a question that names hardware but no model (the reverse)
    examples: tuple[str, ...] = ()  # models a refusal's suggestions fill the templates with (kbq:exampleWorkload)
    note: str = ""  # what the answer to a reading of this intent says (kbq:readingNote)
    weak: frozenset[str] = frozenset()  # cues that count only when no other intent's cue is found (kbq:weakCue)
    role: str = ""  # a span role that cues the intent as a weak cue does (kbq:cueRole: 'key')


class Lexicon(NamedTuple):
    intents: tuple[Intent, ...]
    roles: dict[str, str]  # word -> ignore | budget | need | suffix | deictic
    counts: dict[str, int]
    formats: dict[str, str]  # a packaging suffix -> the label of the weight format it says ('awq' -> GPTQ 4-bit)


class Span(NamedTuple):
    start: int
    end: int
    role: str  # gpu | workload | process | precision | mode | qualifier | chassis | budget | money | setting
    text: str  # what goes into the canonical question
    count: int = 1  # type: ignore[assignment]  # a field named like tuple.count
    terms: tuple[Term, ...] = ()


class Reading(NamedTuple):
    canonical: str
    intent: str
    notes: tuple[str, ...] = ()
    template: str = ""
    observed: tuple[str, ...] = ()  # numbers the sentence reports, not asks ('uses 24 gb'): a reading may leave them out
    no_model: bool = False  # the reverse question read for a sentence that names hardware but no model


class SentenceError(QueryError):
    """A sentence the reader cannot read as one question: its nearest questions (each answers)."""


class UnanswerableSentenceError(SentenceError):
    """A sentence read as a canonical question kbq cannot answer as asked: what is missing, said."""


class MissingModelError(UnanswerableSentenceError):
    """A sentence that asks what only a model can answer (how long, how many, how fast) and names none."""


class MissingHardwareError(UnanswerableSentenceError):
    """A sentence that asks what only hardware can answer (which models fit, the largest) and names none."""


class AmbiguousSentenceError(QueryError):
    """A sentence with several readings that answer; lists them instead of guessing."""


def per_catalog(catalog: Catalog, key: str, build: Callable[[], T]) -> T:
    """`build()` once per catalog, kept on it: what the reader reads from the KB (its words, the
    names it corrects typos to) is read only when a sentence reaches the reader, then reused."""
    if key not in catalog.__dict__:
        catalog.__dict__[key] = build()
    return catalog.__dict__[key]


def lexicon(catalog: Catalog, chinese: bool = False) -> Lexicon:
    """The reader's words, read once per catalog (only when a sentence reaches the reader). Its
    Chinese words only for a Chinese sentence: cutting them loads jieba's dictionary (~1 s), which
    an English question (a server's first error answer, within its time limit) should not wait for."""
    key = "_sentence_lexicon_zh" if chinese else "_sentence_lexicon"
    return per_catalog(catalog, key, lambda: _read_lexicon(catalog, chinese))


def _read_lexicon(catalog: Catalog, chinese: bool) -> Lexicon:
    def wanted(text: object) -> bool:
        return chinese or not _CJK.search(str(text))

    assert catalog.run is not None
    rows = catalog.run(
        PREFIXES
        + """SELECT ?i ?label ?priority ?cue ?template ?unplaced ?unnamed ?example ?note ?weak ?role WHERE {
  ?i a kbq:SentenceIntent ; rdfs:label ?label ; kbq:intentPriority ?priority .
  { ?i kbq:cue ?cue } UNION { ?i kbq:template ?template } UNION { ?i kbq:unplacedTemplate ?unplaced }
  UNION { ?i kbq:noModelTemplate ?unnamed } UNION { ?i kbq:exampleWorkload ?example } UNION { ?i kbq:readingNote ?note }
  UNION { ?i kbq:weakCue ?weak } UNION { ?i kbq:cueRole ?role } }"""
    ).rows
    found: dict[str, tuple[str, int, set[str], set[str], set[str], set[str], set[str]]] = {}
    notes: dict[str, str] = {}
    weak: dict[str, set[str]] = {}
    cue_roles: dict[str, str] = {}
    for iri, label, priority, cue, template, unplaced, unnamed, example, note, weak_cue, role in rows:
        if note is not None:
            notes[str(label)] = str(note)
        if role is not None:
            cue_roles[str(label)] = str(role)
        if weak_cue is not None and wanted(weak_cue):
            cue = weak_cue  # a weak cue is a cue, found like the others
            weak.setdefault(str(label), set()).add(" ".join(_tokens(str(weak_cue).lower())))
        entry = found.setdefault(str(iri), (str(label), int(str(priority)), set(), set(), set(), set(), set()))
        if example is not None:
            entry[6].add(str(example))
        if cue is not None and wanted(cue):
            entry[2].add(" ".join(_tokens(str(cue).lower())))
        for text in (template, unplaced, unnamed):
            if text is not None:
                entry[3].add(str(text))
        if unplaced is not None:
            entry[4].add(_ordered({str(unplaced)})[0])
        if unnamed is not None:
            entry[5].add(_ordered({str(unnamed)})[0])
    intents = tuple(
        sorted(
            (
                Intent(
                    label,
                    priority,
                    tuple(sorted(cues, key=len, reverse=True)),
                    tuple(_ordered(templates)),
                    frozenset(unplaced),
                    frozenset(unnamed),
                    tuple(sorted(examples)),
                    notes.get(label, ""),
                    frozenset(weak.get(label, set())),
                    cue_roles.get(label, ""),
                )
                for label, priority, cues, templates, unplaced, unnamed, examples in found.values()
            ),
            key=lambda i: -i.priority,
        )
    )
    words = catalog.run(
        PREFIXES + "SELECT ?text ?role ?n WHERE { ?w a kbq:SentenceWord ; kbq:wordRole ?role ; kbq:sentenceText ?text "
        "OPTIONAL { ?w kbq:numberValue ?n } }"
    ).rows
    roles: dict[str, str] = {}
    counts: dict[str, int] = {}
    for text, role, n in words:
        if not wanted(text):
            continue
        key = " ".join(_tokens(str(text).lower()))
        if str(role) == "count" and n is not None:
            counts[key] = int(str(n))
        else:
            roles.setdefault(key, str(role))
            roles.setdefault(f"{role}:{key}", str(role))
    formats = {
        " ".join(_tokens(str(text).lower())): str(label)
        for text, label in catalog.run(
            PREFIXES + "SELECT ?text ?label WHERE { ?w a kbq:SentenceWord ; kbq:sentenceText ?text ; "
            "kbq:suffixFormat/rdfs:label ?label }"
        ).rows
        if wanted(text)
    }
    return Lexicon(intents, roles, counts, formats)


def _ordered(templates: set[str]) -> list[str]:
    def order(t: str) -> tuple[int, str]:
        head, _, rest = t.partition("|")
        return (int(head), rest) if head.isdigit() and rest else (99, t)

    return [order(t)[1] for t in sorted(templates, key=order)]


def _tokens(text: str) -> list[str]:
    """Words of a sentence: lower case, numbers with their units kept ('24gb', '$1500', 'q4_k_m',
    'meta-llama/llama-3.1-8b-instruct'), Chinese runs cut into words by jieba."""
    text = text.replace("\u2019", "'").replace("\uff1f", " ").replace("\uff0c", " ").replace("\u3002", " ")
    text = re.sub(r"'(s|m|re|ve|ll|d)\b", " ", text)
    text = re.sub(r"(\d),(\d{3})\b", r"\1\2", text)
    text = re.sub(r"\b(\d+(?:\.\d+)?b)\s*[x×*]\s*(\d+)\b", r"\2x\1", text)  # '7b*8', '7bx8': a mixture, '8x7b'
    text = re.sub(r"(?<=[a-z0-9])\s*[*×]\s*(?=\d{1,3}(?!\d))", " x ", text)  # 'h100*8': eight of them
    text = re.sub(r"(?<![\w.])(\d+(?:\.\d+)?)\s+b\b", r"\1b", text)  # '671 b': a size, '671b'
    if _CJK.search(text):
        text = re.sub(r"([\u3400-\u9fff\uf900-\ufaff]+)", r" \1 ", text)
    out: list[str] = []
    for piece in text.split():
        if _CJK.search(piece):
            import jieba  # only for Chinese text (its dictionary loads in about a second)

            jieba.setLogLevel(60)
            out += [w for w in jieba.lcut(piece) if w.strip()]
            continue
        for token in (t for found in _TOKEN.findall(piece) for t in _JOINED.split(found)):  # 'lora+flashattention2': two names
            token = token.rstrip(".-/+")
            if not token:
                continue
            match = _COUNT_PREFIX.match(token)
            if match and not _SIZE.match(match.group(2)):
                out += [match.group(1), "x", match.group(2)]
            else:
                out.append(token)
    return out


def _singular(text: str) -> str:
    return text[:-1] if len(text) > 2 and text.endswith("s") and not text.endswith("ss") else text


def _say(label: str, text: str) -> str:
    """A name as the grammar can read it: the KB's label, or the words as typed when the label
    holds characters the grammar keeps for structure (parentheses, commas)."""
    return label if all(_GRAMMAR_WORD.match(w) for w in label.split()) else text


def _fmt(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


@lru_cache(maxsize=1)
def _keywords() -> frozenset[str]:
    """The grammar's keywords (for, on, with, where ...): words a sentence's wrapping never drops."""
    from kbq.lang.parse import parser

    return frozenset(
        str(t.pattern.value).lower() for t in parser().terminals if t.pattern.type == "str" and str(t.pattern.value).isalpha()
    )
