"""An answer in a terminal: the headline first, then the table (or chart) fitted to the width,
formulas and sources folded into numbered notes under it, then the explanation, wrapped.

The width is $COLUMNS, else the terminal's, else 80 (a pipe or a file); colour only on a
terminal, never with NO_COLOR, always with FORCE_COLOR (https://no-color.org,
https://force-color.org). Tables are laid out by `rich` (imported here only, when a table is
printed, so the command's cold start does not pay for it where it prints none).

Every text shown passes `_safe` (kbq.sanitize), the one place control characters from the KB, an
overlay or an endpoint are neutralised before they reach the terminal.
"""

from __future__ import annotations

import io
import os
import re
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from kbq import sanitize
from kbq.output import IRI_COLUMNS, _cell
from kbq.store.executor import Value

if TYPE_CHECKING:
    from rich.console import Console

    from kbq.lang.run import Result

FOLDED = ("formula", "source")  # long text columns, shown as numbered notes under the table
URL = re.compile(r"https?://[^\s,;)\]]+")
TRAILING = re.compile(r"\s+((?:\x1b\[[0-9;]*m)*)$")
NAME_MAX = 28  # a name column wraps past this many cells
DEFAULT_WIDTH = 80


def width(stream: TextIO) -> int:
    """$COLUMNS when set, else the terminal's width, else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if getattr(stream, "isatty", lambda: False)():
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


class Page:
    """The terminal text of one answer (see `answer`)."""

    def __init__(self, width: int, color: bool) -> None:
        from rich.console import Console

        self.width, self.color = width, color
        self.buffer = io.StringIO()
        self.console: Console = Console(
            file=self.buffer,
            width=width,
            force_terminal=color,
            no_color=not color,
            color_system="standard" if color else None,
            highlight=False,
            markup=False,
            emoji=False,
            legacy_windows=False,
        )
        self.notes = Notes()

    def text(self, line: str, *, style: str = "", indent: int = 0, hang: int = 0) -> None:
        """A paragraph wrapped to the width, `indent` cells in and `hang` more on later lines."""
        from rich.padding import Padding
        from rich.text import Text

        body = Text(_safe(line, one_line=False), style=style)
        if hang:
            # a hanging indent: the first line starts `hang` cells left of the rest
            lines = body.wrap(self.console, self.width - indent - hang)
            for n, part in enumerate(lines):
                pad = indent if n == 0 else indent + hang
                self.console.print(Padding(part, (0, 0, 0, pad)), overflow="fold")
            return
        self.console.print(Padding(body, (0, 0, 0, indent)) if indent else body, overflow="fold")

    def blank(self) -> None:
        self.console.print()

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[Value]], units: dict[str, str]) -> list[str]:
        """The table fitted to the width; returns the columns left out for want of room."""
        from rich import box
        from rich.table import Table
        from rich.text import Text

        keep = [i for i, c in enumerate(columns) if c not in IRI_COLUMNS and c not in FOLDED]
        if not keep:
            keep = list(range(len(columns)))
        numeric = {
            i: all((isinstance(r[i], (int, float)) and not isinstance(r[i], bool)) or r[i] is None for r in rows) for i in keep
        }
        cells = {i: [_safe(_cell(r[i])) for r in rows] for i in keep}
        heads = {i: _safe(columns[i]) + (f"\n{_safe(units[columns[i]])}" if units.get(columns[i]) else "") for i in keep}

        def natural(i: int) -> int:
            head = max(len(h) for h in heads[i].split("\n"))
            body = max((len(c) for c in cells[i]), default=0)
            return max(head, body if numeric[i] else min(body, NAME_MAX))

        shown: list[int] = []
        dropped: list[str] = []
        used = 0
        for n, i in enumerate(keep):
            need = natural(i) + (2 if shown else 0)
            if n == 0 or used + need <= self.width or len(keep) <= 4:  # a narrow table wraps instead
                shown.append(i)
                used += need
            else:
                dropped.append(columns[i])
        table = Table(
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            padding=(0, 1),
            collapse_padding=True,
            header_style="bold" if self.color else "",
            width=min(self.width, used + 1) if len(shown) > 1 else None,
        )
        for i in shown:
            table.add_column(
                Text(heads[i]),
                justify="right" if numeric[i] else "left",
                no_wrap=numeric[i],
                overflow="fold",
                max_width=None if numeric[i] else max(NAME_MAX, self.width - used + natural(i)),
            )
        for n in range(len(rows)):
            table.add_row(*(Text(cells[i][n]) for i in shown))
        self.console.print(table)
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
        text = self.buffer.getvalue().rstrip("\n")
        return "\n".join(TRAILING.sub(r"\1", line) for line in text.split("\n"))


def _price(price: object) -> str:
    """'$999 launch MSRP 2022-12': a price with its kind and month."""
    if not isinstance(price, dict):
        return "-"
    return f"${price['usd']:,.0f} {price['kind']} {str(price.get('date') or '')[:7]}".rstrip()


def answer(result: Result, fmt: str, *, width: int, color: bool, explain: bool) -> str:
    """The whole answer for a terminal or a pipe (`fmt`: table or chart)."""
    page = Page(width, color)
    if result.headline:
        page.text(result.headline, style="bold")
        page.blank()
    chart = result.extra.get("chart") if fmt == "chart" else None
    if isinstance(chart, dict):
        from kbq import charts

        page.buffer.write(charts.render(chart, width=width, color=color) + "\n")  # it cleans the spec's text itself
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
