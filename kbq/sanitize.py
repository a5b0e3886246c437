"""Make any text safe to print: the one place where control characters from data (the KB, an
overlay, a remote endpoint, an error message, a request path) are neutralised before they reach a
terminal, a CSV file or a log.

A terminal obeys escape sequences wherever they come from: ESC (and the 8-bit CSI, U+009B) can set
the window title, write the clipboard (OSC 52), clear the screen or hide text; a carriage return or
a backspace can overwrite what was printed; a newline in a log field forges a log line; Unicode
bidirectional overrides make text read differently from what it is. Each such character is shown
as a visible escape (``\\x1b``, ``\\u202e``) instead, so nothing is lost and nothing is obeyed.

API (kept small on purpose; every text output boundary calls one of these):

* ``clean(text)``: for multi-line text (an answer's explanation, an error message). Keeps newlines
  and tabs, escapes every other control character.
* ``clean_line(text)``: for one field on one line (a table cell, a log field). Escapes newlines,
  carriage returns and tabs too.
* ``clean_data(value)``: every string in JSON-like data through ``clean_line`` (for chart specs).
* ``escape_json(text)``: serialized JSON with those characters as ``\\uXXXX`` (lossless).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["clean", "clean_data", "clean_line", "escape_json"]

# C0 controls, DEL, C1 controls (U+0080-U+009F, where U+009B is CSI and U+009D is OSC),
# line/paragraph separators, bidirectional embeddings, overrides and isolates, and lone
# surrogates (which cannot be encoded and would crash the write).
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_MULTI_LINE = re.compile(f"[{_UNSAFE}]")
_ONE_LINE = re.compile(f"[{_UNSAFE}\t\n]")
_IN_JSON = re.compile(f"[{_UNSAFE}]")  # json.dumps already escapes \x00-\x1f


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: str) -> str:
    """`text` with every control character except newline and tab shown as an escape."""
    if text.isprintable():  # fast path: no control character at all (and no newline)
        return text
    return _MULTI_LINE.sub(_escape, text)


def clean_line(text: str) -> str:
    """`text` as one safe line: every control character, newlines and tabs too, shown as an escape."""
    if text.isprintable():
        return text
    return _ONE_LINE.sub(_escape, text)


def clean_data(value: Any) -> Any:
    """`value` (JSON-like data: dicts, lists, strings, numbers) with every string `clean_line`d,
    for renderers that lay data out themselves (charts): no string in it can steer the terminal."""
    if isinstance(value, str):
        return clean_line(value)
    if isinstance(value, dict):
        return {clean_line(k) if isinstance(k, str) else k: clean_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_data(v) for v in value]
    return value


def escape_json(text: str) -> str:
    """Serialized JSON with every unsafe character written as a `\\uXXXX` escape: the same data
    (a JSON reader gets the exact string back), nothing a terminal obeys. Such characters can only
    stand inside JSON strings, where `\\uXXXX` is always valid."""
    if text.isprintable():
        return text
    return _IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
