"""kbq.sanitize: the one place that neutralises control characters before text is printed (M-6, L-12)."""

from __future__ import annotations

import pytest

from kbq.sanitize import clean, clean_line

HOSTILE = [
    "\x1b]0;owned\x07",  # set the window title
    "\x1b]52;c;ZXZpbA==\x07",  # write the clipboard (OSC 52)
    "\x1b[2J\x1b[H",  # clear the screen
    "\x9b2J",  # 8-bit CSI
    "\x9d0;t\x9c",  # 8-bit OSC / ST
    "ok\rforged",  # overwrite the line
    "abc\x08\x08\x08xyz",  # backspaces
    "\u202egnp.exe",  # right-to-left override
    "\u2066x\u2069",  # isolates
    "a\u2028b",  # line separator
    "\x00\x7f",
    "\ud800",  # lone surrogate: would crash the write
]


@pytest.mark.parametrize("text", HOSTILE)
def test_no_control_character_survives(text: str) -> None:
    for out in (clean(text), clean_line(text)):
        assert all(ch.isprintable() or ch in "\n\t" for ch in out), repr(out)
        out.encode("utf-8")  # no lone surrogate left


def test_what_was_there_stays_visible() -> None:
    assert clean("a\x1b[31mb") == "a\\x1b[31mb"
    assert clean("\u202e") == "\\u202e"
    assert clean_line("a\nb\tc\r") == "a\\x0ab\\x09c\\x0d"


def test_multi_line_text_keeps_its_lines_and_plain_text_is_untouched() -> None:
    assert clean("line 1\n\tline 2") == "line 1\n\tline 2"
    for text in ("RTX 4090", "Grüße – 日本語 ✓", "👩\u200d💻", ""):
        assert clean(text) == text and clean_line(text) == text
