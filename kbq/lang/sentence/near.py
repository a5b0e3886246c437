"""Near names: a word of a sentence that is a typo of a word of the KB's card and model names ('llamma',
'rthx'), or the tail of exactly one model's name ('large-v3'). Bounded: only a word no other part of
the reader reads, only one close candidate, only when the corrected words then name a card or a
model; every correction is said in the answer ("read 'llamma' as 'llama'")."""

from __future__ import annotations

import difflib
import re

from kbq.lang.catalog import PREFIXES, Catalog
from kbq.lang.sentence.lexicon import _CJK, per_catalog
from kbq.lang.words import GPU, GPU_FAMILY, MODEL
from kbq.store.names import normalise

CUTOFF = 0.85  # difflib ratio a typo must reach ('llamma'/'llama' 0.91, 'rthx'/'rtx' 0.86)
MARGIN = 0.05  # how far the best candidate must be above the next
MIN_LETTERS = 4  # shorter words are too often other words
MIN_TAIL = 5  # a name's tail shorter than this ('v3') names too many models
_WORD = re.compile(r"^[a-z]+$")
_GLUED = re.compile(r"^\d{3,4}[a-z]{1,3}$")  # a card's number with its variant letters ('4090d', '5090d')


def name_words(catalog: Catalog) -> frozenset[str]:
    """The alphabetic words of every card's and model's label and alias, read once per catalog."""

    def read() -> frozenset[str]:
        assert catalog.run is not None
        rows = catalog.run(
            PREFIXES + "SELECT DISTINCT ?l WHERE { { ?s a kbq:GPU } UNION { ?s a kbq:GpuFamily } UNION { ?s a kbq:Model } "
            "{ ?s rdfs:label ?l } UNION { ?s skos:altLabel ?l } }"
        ).rows
        return frozenset(w for (label,) in rows for w in re.split(r"[^a-z]+", str(label).lower()) if len(w) >= 3)

    return per_catalog(catalog, "_sentence_name_words", read)


def model_names(catalog: Catalog) -> dict[str, str]:
    """Every model's normalised label -> its label, read once per catalog."""

    def read() -> dict[str, str]:
        assert catalog.run is not None
        rows = catalog.run(PREFIXES + "SELECT DISTINCT ?l WHERE { ?s a kbq:Model ; rdfs:label ?l }").rows
        return {normalise(str(label)): str(label) for (label,) in rows}

    return per_catalog(catalog, "_sentence_model_names", read)


def card_names(catalog: Catalog) -> dict[str, str]:
    """Every card's normalised label and alias -> its label (a GPU's, not a family's), read once per catalog."""

    def read() -> dict[str, str]:
        assert catalog.run is not None
        rows = catalog.run(
            PREFIXES + "SELECT DISTINCT ?n ?l WHERE { ?s a kbq:GPU ; rdfs:label ?l "
            "{ ?s rdfs:label ?n } UNION { ?s skos:altLabel ?n } }"
        ).rows
        return {normalise(str(name)): str(label) for name, label in rows}

    return per_catalog(catalog, "_sentence_card_names", read)


def card_tail(word: str, catalog: Catalog) -> str | None:
    """The one card whose name ends with `word`, a model number with its variant letters glued on
    ('4090d': GeForce RTX 4090 D; 'rtx 4090d' is a name already), or None."""
    if not _GLUED.match(word):
        return None
    key = normalise(word)
    ends = {label for name, label in card_names(catalog).items() if name.endswith(key) and not name[: -len(key)][-1:].isdigit()}
    return ends.pop() if len(ends) == 1 else None


def typo(word: str, catalog: Catalog, known: set[str]) -> str | None:
    """The one name word `word` is a typo of, or None (a word the reader knows otherwise: `known`)."""
    if len(word) < MIN_LETTERS or not _WORD.match(word) or word in known or _CJK.search(word):
        return None
    vocabulary = name_words(catalog)
    if word in vocabulary:
        return None
    close = difflib.get_close_matches(word, vocabulary, n=2, cutoff=CUTOFF)
    if not close:
        return None
    if len(close) > 1:
        ratios = [difflib.SequenceMatcher(None, word, c).ratio() for c in close]
        if ratios[0] - ratios[1] < MARGIN:
            return None
    return close[0]


def tail(word: str, catalog: Catalog) -> str | None:
    """The one model whose name ends with `word` ('large-v3': Whisper large-v3), or None."""
    key = normalise(word)
    if len(key) < MIN_TAIL or not re.search(r"\d", key) or not re.search(r"[a-z]", key):
        return None
    ends = [label for name, label in model_names(catalog).items() if name.endswith(key) and name != key]
    return ends[0] if len(ends) == 1 else None


def corrected(toks: list[str], catalog: Catalog, known: set[str], names: set[int]) -> tuple[list[str], list[str]]:
    """The sentence's words with each typo of a name word replaced when the corrected words then name a
    card or a model (`names`: the indexes already read as names are left alone), and the notes saying so."""
    out, notes = list(toks), []
    for i, word in enumerate(toks):
        if i in names:
            continue
        fixed = typo(word, catalog, known)
        if fixed is None:
            continue
        windows = [
            " ".join([*out[a:i], fixed, *out[i + 1 : b]])
            for a in range(max(0, i - 2), i + 1)
            for b in range(i + 1, min(len(out), i + 3) + 1)
        ]
        found = catalog.lookup(windows)
        if any(t.types & {GPU, GPU_FAMILY, MODEL} for w in windows for t in found.get(normalise(w), [])):
            out[i] = fixed
            notes.append(f"read '{word}' as '{fixed}' (a close word of the KB's names)")
    return out, notes
