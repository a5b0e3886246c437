"""The sentence reader: a question as people type it -> the canonical question it means.

Tried only when the grammar (or the compiler) refuses a text, so no sentence changes what a
canonical question means. It finds the KB's names anywhere in the sentence (one name-index
query for every word run), the quantities (a memory budget, a count, money, settings such as
context), reads the intent from cue words (kb/sentences.ttl) and fills that intent's templates:
canonical questions with slots, tried in order until one compiles. The answer says which
canonical question it answered ("read as: ..."). No word of any language is in this file.
"""

from kbq.lang.sentence.door import compile_text
from kbq.lang.sentence.lexicon import (
    AmbiguousSentenceError,
    MissingHardwareError,
    MissingModelError,
    Reading,
    SentenceError,
    UnanswerableSentenceError,
    _tokens,
    lexicon,
)
from kbq.lang.sentence.reader import Reader, read_sentence

__all__ = [
    "AmbiguousSentenceError",
    "MissingHardwareError",
    "MissingModelError",
    "Reader",
    "Reading",
    "SentenceError",
    "UnanswerableSentenceError",
    "_tokens",
    "compile_text",
    "lexicon",
    "read_sentence",
]
