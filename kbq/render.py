"""An answer in a terminal: the headline first, then the table (or chart) fitted to the width,
formulas and sources folded into numbered notes under it, then the explanation, wrapped.

The width is $COLUMNS, else the terminal's, else 80 (a pipe or a file); colour only on a
terminal, never with NO_COLOR, always with FORCE_COLOR (https://no-color.org,
https://force-color.org). Laid out with the standard library only: `rich` did the same job but
cost 170 ms a call (its import and layout), more than the whole command did before.

Every text shown passes `_safe` (kbq.sanitize), the one place control characters from the KB, an
overlay or an endpoint are neutralised before they reach the terminal.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from kbq import sanitize
from kbq.output import IRI_COLUMNS, _cell
from kbq.store.executor import Value

if TYPE_CHECKING:
    from kbq.lang.run import Result

FOLDED = ("formula", "source")  # long text columns, shown as numbered notes under the table
URL = re.compile(r"https?://[^\s,;)\]]+")
TRAILING = re.compile(r"\s+((?:\x1b\[[0-9;]*m|\x1b\]8;;\x1b\\)*)$")
NAME_MAX = 28  # a name column wraps past this many cells
DEFAULT_WIDTH = 80


def width(stream: TextIO) -> int:
    """$COLUMNS when set, else the terminal's width, else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if getattr(stream, "isatty", lambda: False)():
        import shutil  # only on a terminal: a pipe does not pay its import

        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def use_color(stream: TextIO) -> bool:
    """NO_COLOR (set, non-empty) turns colour off, FORCE_COLOR turns it on, else only on a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _safe(text: object, *, one_line: bool = True) -> str:
    """The one call every shown text goes through (see the module doc)."""
    return sanitize.clean_line(str(text)) if one_line else sanitize.clean(str(text))


class Notes:
    """Numbered footnotes: each distinct source once, in order of first use."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def ref(self, text: str) -> str:
        text = text.strip()
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def cite_urls(self, line: str) -> str:
        """`line` with each URL replaced by its footnote number."""
        return URL.sub(lambda m: self.ref(m.group()), line)


STYLES = {"bold": "1", "dim": "2"}


def cells(text: str) -> int:
    """Terminal cells `text` takes (East Asian wide and full-width characters take two)."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells (words longer than a line are cut)."""
    if cells(text) <= width:
        return [text]
    import textwrap

    lines = textwrap.wrap(text, max(1, width), break_on_hyphens=False) or [""]
    out = []
    for line in lines:  # textwrap counts characters: cut again where wide characters overflow
        while cells(line) > width:
            cut = width
            while cells(line[:cut]) > width:
                cut -= 1
            out.append(line[:cut])
            line = line[cut:]
        out.append(line)
    return out


class Page:
    """The terminal text of one answer (see `answer`): plain text laid out to the width, with
    ANSI bold/dim and OSC 8 links only when colour is on."""

    def __init__(self, width: int, color: bool) -> None:
        self.width, self.color = max(20, width), color
        self.lines: list[str] = []
        self.notes = Notes()

    def paint(self, text: str, style: str) -> str:
        if not self.color or not text:
            return text
        if style.startswith("link "):
            url = style[5:]
            return f"\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"
        code = STYLES.get(style)
        return f"\x1b[{code}m{text}\x1b[0m" if code else text

    def text(self, line: str, *, style: str = "", indent: int = 0, hang: int = 0) -> None:
        """A paragraph wrapped to the width, `indent` cells in and `hang` more on later lines."""
        body = _safe(line, one_line=False)
        for paragraph in body.split("\n"):
            first = _wrap(paragraph, self.width - indent)
            if hang and len(first) > 1:
                rest = _wrap(paragraph[len(first[0]) :].lstrip(), self.width - indent - hang)
                wrapped = [(indent, first[0])] + [(indent + hang, part) for part in rest]
            else:
                wrapped = [(indent, part) for part in first]
            self.lines += [" " * pad + self.paint(part, style) for pad, part in wrapped]

    def blank(self) -> None:
        self.lines.append("")

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[Value]], units: dict[str, str]) -> list[str]:
        """The table fitted to the width; returns the columns left out for want of room.

        Columns are kept in order while they fit (the first always); with four columns or fewer
        none is left out and the text columns wrap instead. Units go on a second header line."""
        keep = [i for i, c in enumerate(columns) if c not in IRI_COLUMNS and c not in FOLDED]
        if not keep:
            keep = list(range(len(columns)))
        numeric = {
            i: all((isinstance(r[i], (int, float)) and not isinstance(r[i], bool)) or r[i] is None for r in rows) for i in keep
        }
        body = {i: [_safe(_cell(r[i])) for r in rows] for i in keep}
        heads = {i: [_safe(columns[i])] + ([_safe(units[columns[i]])] if units.get(columns[i]) else []) for i in keep}

        def natural(i: int) -> int:
            head = max(cells(h) for h in heads[i])
            longest = max((cells(c) for c in body[i]), default=0)
            return max(head, longest if numeric[i] else min(longest, NAME_MAX))

        widths = {i: natural(i) for i in keep}
        shown: list[int] = []
        dropped: list[str] = []
        used = 0
        for n, i in enumerate(keep):
            need = widths[i] + (2 if shown else 0)
            if n == 0 or used + need <= self.width or len(keep) <= 4:
                shown.append(i)
                used += need
            else:
                dropped.append(columns[i])
        # text columns share what is left (or give back what is over): widest first
        spare = self.width - used
        texts = sorted((i for i in shown if not numeric[i]), key=lambda i: -max((cells(c) for c in body[i]), default=0))
        for i in texts:
            longest = max([cells(c) for c in body[i]] + [cells(h) for h in heads[i]])
            if spare > 0 and longest > widths[i]:
                grow = min(spare, longest - widths[i])
                widths[i] += grow
                spare -= grow
        floors = {i: max(6, max(cells(w) for h in heads[i] for w in h.split() or [""])) for i in texts}
        while spare < 0:  # one cell at a time from the widest text column, down to its header's longest word
            wide = [i for i in texts if widths[i] > floors[i]]
            if not wide:
                break
            widths[max(wide, key=lambda t: widths[t])] -= 1
            spare += 1

        def emit(cells_of: list[list[str]], style: str = "") -> None:
            height = max(len(c) for c in cells_of)
            for n in range(height):
                parts = []
                for k, i in enumerate(shown):
                    text = cells_of[k][n] if n < len(cells_of[k]) else ""
                    pad = " " * max(0, widths[i] - cells(text))
                    parts.append(pad + text if numeric[i] else text + pad)
                self.lines.append(self.paint("  ".join(parts).rstrip(), style))

        depth = max(len(heads[i]) for i in shown)
        emit([[""] * (depth - len(heads[i])) + heads[i] for i in shown], "bold")
        self.lines.append("─" * min(self.width, sum(widths[i] for i in shown) + 2 * (len(shown) - 1)))
        for n in range(len(rows)):
            emit([[body[i][n]] if numeric[i] else _wrap(body[i][n], widths[i]) for i in shown])
        return dropped

    def folded(self, columns: Sequence[str], rows: Sequence[Sequence[Value]]) -> None:
        """Formula and source columns as notes: 'part: formula [n]', the sources numbered below."""
        at = {c: i for i, c in enumerate(columns)}
        if not any(c in at for c in FOLDED):
            return
        label = next((i for i, c in enumerate(columns) if c not in IRI_COLUMNS), 0)
        lines = []
        for row in rows:
            formula = str(row[at["formula"]] or "") if "formula" in at else ""
            source = str(row[at["source"]] or "") if "source" in at else ""
            if not formula and not source:
                continue
            cite = " " + self.notes.ref(source) if source else ""
            lines.append(f"{row[label]}: {formula}{cite}" if formula else f"{row[label]}:{cite}")
        if lines:
            self.blank()
            self.text("how:")
            for line in lines:
                self.text(line, indent=2, hang=2)

    def footnotes(self) -> None:
        if not self.notes.items:
            return
        self.blank()
        self.text("sources:")
        for n, item in enumerate(self.notes.items, start=1):
            mark = f"[{n}] "
            style = f"link {item}" if self.color and URL.fullmatch(item) else ""
            self.text(mark + item, indent=2, hang=len(mark), style=style)

    def output(self) -> str:
        """The text, with no trailing spaces (also before a closing colour code)."""
        while self.lines and not self.lines[-1].strip():
            self.lines.pop()
        return "\n".join(TRAILING.sub(r"\1", line) for line in self.lines)


def _price(price: object) -> str:
    """'$999 launch MSRP 2022-12': a price with its kind and month."""
    if not isinstance(price, dict):
        return "-"
    amount = f"${price['usd']:,.2f}/h" if price.get("per") == "hour" else f"${price['usd']:,.0f}"
    return f"{amount} {price['kind']} {str(price.get('date') or '')[:7]}".rstrip()


def table(columns: Sequence[str], rows: Sequence[Sequence[Value]], *, width: int, color: bool) -> str:
    """A bare table fitted to the width (raw SPARQL results); left-out columns are named under it."""
    page = Page(width, color)
    dropped = page.table(columns, rows, {})
    if dropped:
        page.blank()
        page.text(f"not shown at {width} columns: {', '.join(dropped)} (COLUMNS=N, or --format csv/json)", style="dim")
    return page.output()


def answer(result: Result, fmt: str, *, width: int, color: bool, explain: bool) -> str:
    """The whole answer for a terminal or a pipe (`fmt`: table or chart)."""
    page = Page(width, color)
    if result.headline:
        page.text(result.headline, style="bold")
        page.blank()
    chart = result.extra.get("chart") if fmt == "chart" else None
    if isinstance(chart, dict):
        from kbq import charts

        page.lines += charts.render(chart, width=width, color=color).split("\n")  # it cleans the spec's text itself
    elif result.rows or result.columns:
        if result.tiers:
            picks: list[list[Value]] = [
                [str(t["tier"]), str(t["gpu"]), t.get("count"), _price(t.get("price"))]  # type: ignore[list-item]
                for t in result.tiers
            ]
            page.table(["tier", "pick", "cards", "price"], picks, {})
            page.blank()
            page.text(f"the full ranking ({len(result.rows)}):")
        dropped = page.table(result.columns, result.rows, result.units)
        page.folded(result.columns, result.rows)
        if dropped:
            page.blank()
            page.text(
                f"not shown at {width} columns: {', '.join(dropped)} (a wider terminal, COLUMNS=N, or --format csv/json)",
                style="dim",
            )
    lines = [line for line in result.explanation if line != result.headline]
    if lines:
        page.blank()
        for line in lines:
            nested = line.startswith("  ")
            page.text(page.notes.cite_urls(line.strip()), indent=4 if nested else 0, hang=2)
    if explain and result.removed:
        page.blank()
        page.text("removed:")
        page.table(["gpu", "name", "removed by"], result.removed, {})
    page.footnotes()
    return page.output()
