"""Charts in a plain terminal: Unicode bars (eighth blocks) with their numbers and units.

Draws the chart specs of kbq.lang.chartspec (`Result.extra["chart"]`) the page draws as SVG.
Colour only on a terminal (`use_color`): a pipe or a file gets the same text without escape codes.
An unknown figure is written 'unknown', never drawn as a zero-length bar.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

from kbq.output import _cell
from kbq.sanitize import clean_data

EIGHTHS = " ▏▎▍▌▋▊▉"
FULL = "█"
SHADES = "█▓▒░"  # stacked parts, told apart without colour
UNKNOWN = "unknown"
NAME_WIDTH = 30
COLORS = ("36", "33", "35", "32", "34", "31")  # cyan, yellow, magenta, green, blue, red
Chart = dict[str, Any]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def use_color(stream: TextIO) -> bool:
    """Colour when the stream is a terminal and NO_COLOR is unset (https://no-color.org)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def terminal_width(stream: TextIO) -> int:
    if use_color(stream) or getattr(stream, "isatty", lambda: False)():
        return max(60, min(120, shutil.get_terminal_size((100, 24)).columns))
    return 100


def bar(fraction: float, width: int) -> str:
    """A left-aligned bar of `fraction` (0..1) of `width` cells, to an eighth of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return FULL * full + (EIGHTHS[part] if part else "")


def number(value: float | None, unit: str = "") -> str:
    if value is None:
        return UNKNOWN
    return _cell(value) + (f" {unit}" if unit else "")


def _name(text: str, width: int = NAME_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class _Paint:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text


def render(chart: Chart, *, width: int = 100, color: bool = False) -> str:
    """The chart as lines of text (no trailing newline), none wider than `width`."""
    chart = clean_data(chart)  # names and titles come from the KB, overlays or an endpoint
    paint = _Paint(color)
    draw = {"breakdown": _breakdown, "bars": _bars, "scatter": _scatter, "paired": _paired}.get(str(chart.get("type")))
    return "\n".join(_fit(draw(chart, width, paint), width)) if draw else ""


def _fit(lines: list[str], width: int) -> list[str]:
    """Prose lines (a title, the profile, notes) wrapped to `width`; bars are drawn to fit already."""
    out = []
    for line in lines:
        plain = ANSI.sub("", line)
        if len(plain) <= width:
            out.append(line)
            continue
        indent = " " * (len(plain) - len(plain.lstrip()))
        out += textwrap.wrap(plain, width, initial_indent="", subsequent_indent=indent + "  ", break_on_hyphens=False)
    return out


def _track(width: int, label_width: int) -> int:
    return max(10, width - label_width - 18)


def _heading(chart: Chart, paint: _Paint) -> list[str]:
    lines = [paint(str(chart["title"]), "1")] if chart.get("title") else []
    if chart.get("profile"):
        lines.append(str(chart["profile"]))
    return lines


# --- memory breakdown -------------------------------------------------------------------------


def _breakdown(chart: Chart, width: int, paint: _Paint) -> list[str]:
    unit = str(chart.get("unit", ""))
    parts = [(str(p), float(v)) for p, v in chart.get("lines", [])]
    total = sum(v for _, v in parts)
    capacity = chart.get("capacity")
    usable = capacity * float(chart.get("usable_share", 1.0)) if capacity else None
    scale = max([total, *([capacity] if capacity else [])]) or 1.0
    label_width = min(NAME_WIDTH, max([len(p) for p, _ in parts] + [len("total")]))
    track = _track(width, label_width)
    per = f" per GPU over {chart['per_gpu']}" if (chart.get("per_gpu") or 0) > 1 else ""
    head = f"memory{per} ({unit})"
    if capacity:
        head += f" on {chart.get('gpu')}: {paint(str(chart.get('verdict')), '1')}"
    lines = [head]
    for i, (part, value) in enumerate(parts):
        drawn = bar(value / scale, track)
        if i % len(SHADES):  # the first part in full blocks (with eighths), the others in their shade
            drawn = SHADES[i % len(SHADES)] * max(1 if value > 0 else 0, round(value / scale * track))
        gap = " " * (track - len(drawn))
        label = _name(part, label_width).ljust(label_width)
        lines.append(f"  {label}  {paint(drawn, COLORS[i % len(COLORS)])}{gap}  {number(value, unit)}")
    stacked = "".join(SHADES[i % len(SHADES)] * round(value / scale * track) for i, (_part, value) in enumerate(parts))[:track]
    marks = list(stacked.ljust(track))
    for at, char in ((usable, "┊"), (capacity, "│")):
        if at:
            pos = min(track - 1, round(at / scale * track) - 1)
            marks[pos] = char
    lines.append(f"  {'total'.ljust(label_width)}  {''.join(marks)}  {number(round(total, 3), unit)}")
    if capacity:
        note = f"│ capacity {number(capacity, unit)}"
        if usable and usable != capacity:
            note += f"   ┊ usable {number(round(usable, 3), unit)} ({float(chart.get('usable_share', 1)):.0%})"
        lines.append(f"  {''.ljust(label_width)}  {note}")
    lines.append("  parts: " + ", ".join(f"{SHADES[i % len(SHADES)]} {p}" for i, (p, _v) in enumerate(parts)))
    return lines


# --- ranking ----------------------------------------------------------------------------------


def _series_title(series: Chart) -> str:
    rank = f"{series['rank']}. " if series.get("rank") else ""
    unit = f" ({series['unit']})" if series.get("unit") else ""
    better = f", {series['better']} is better" if series.get("better") else ""
    return f"{rank}{series['label']}{unit}{better}"


def _bar_rows(
    names: Sequence[str], values: Sequence[float | None], unit: str, width: int, paint: _Paint, mark: int | None
) -> list[str]:
    known = [v for v in values if v is not None]
    top = max([abs(v) for v in known] + [0.0]) or 1.0
    label_width = min(NAME_WIDTH, max(len(n) for n in names))
    track = _track(width, label_width + 2)
    lines = []
    for i, (name, value) in enumerate(zip(names, values, strict=True)):
        pointer = "▶ " if i == mark else "  "
        label = _name(name, label_width).ljust(label_width)
        if value is None:
            lines.append(f"  {pointer}{label}  {paint('?', '2')}{' ' * (track - 1)}  {paint(UNKNOWN, '2')}")
            continue
        drawn = bar(abs(value) / top, track)
        code = "1;36" if i == mark else "36"
        lines.append(f"  {pointer}{label}  {paint(drawn, code)}{' ' * (track - len(drawn))}  {number(value, unit)}")
    return lines


def _bars(chart: Chart, width: int, paint: _Paint) -> list[str]:
    names = [str(n) for n in chart["names"]]
    lines = _heading(chart, paint)
    shown, candidates = int(chart.get("shown", len(names))), int(chart.get("candidates", len(names)))
    if len(names) > shown:
        lines.append(f"(the answer is the first {shown}; drawn with the next {len(names) - shown} of {candidates} candidates)")
    elif len(names) < candidates:
        lines.append(f"(the first {len(names)} of {candidates}; the table lists every row)")
    for series in chart["series"]:
        lines.append("")
        lines.append(paint(_series_title(series), "1"))
        lines += _bar_rows(names, series["values"], str(series.get("unit", "")), width, paint, chart.get("recommended"))
    unknown = sum(v is None for s in chart["series"] for v in s["values"])
    if unknown:
        lines.append("")
        lines.append(f"{UNKNOWN}: {unknown} figure(s) with no source in the KB (not drawn; never counted as zero)")
    return lines


# --- compare ----------------------------------------------------------------------------------


def _paired(chart: Chart, width: int, paint: _Paint) -> list[str]:
    names = [str(n) for n in chart["names"]]
    lines = _heading(chart, paint)
    for attribute in chart["attributes"]:
        lines.append("")
        lines.append(paint(_series_title({**attribute, "rank": None}), "1"))
        lines += _bar_rows(names, attribute["values"], str(attribute.get("unit", "")), width, paint, None)
    return lines


# --- value scatter ----------------------------------------------------------------------------


def _position(value: float, low: float, high: float, cells: int, log: bool) -> int:
    if log:
        value, low, high = math.log10(value), math.log10(low), math.log10(high)
    span = (high - low) or 1.0
    return max(0, min(cells - 1, round((value - low) / span * (cells - 1))))


def _axis(axis: Chart) -> str:
    unit = f" ({axis['unit']})" if axis.get("unit") else ""
    scale = ", log scale" if axis.get("log") else ""
    return f"{axis['label']}{unit}, {axis['better']} is better{scale}"


def _scatter(chart: Chart, width: int, paint: _Paint) -> list[str]:
    points = chart["points"]
    front = set(chart.get("front", []))
    best = chart.get("recommended")
    xs, ys = [float(p["x"]) for p in points], [float(p["y"]) for p in points]
    cols, rows = max(20, min(width - 14, 72)), 14
    grid = [[" "] * cols for _ in range(rows)]
    for p in sorted(points, key=lambda p: (p["name"] == best, p["name"] in front)):
        c = _position(float(p["x"]), min(xs), max(xs), cols, bool(chart["x"].get("log")))
        r = rows - 1 - _position(float(p["y"]), min(ys), max(ys), rows, bool(chart["y"].get("log")))
        grid[r][c] = "★" if p["name"] == best else ("◆" if p["name"] in front else "·")
    lines = _heading(chart, paint)
    lines.append(f"y: {_axis(chart['y'])}")
    top, bottom = _cell(max(ys)), _cell(min(ys))
    pad = max(len(top), len(bottom))
    for r, cells in enumerate(grid):
        label = top if r == 0 else (bottom if r == rows - 1 else "")
        text = "".join(cells)
        if paint.color:
            text = text.replace("★", paint("★", "1;33")).replace("◆", paint("◆", "36"))
        lines.append(f"{label.rjust(pad)} ┤{text}")
    lines.append(" " * pad + " └" + "─" * cols)
    left, right = _cell(min(xs)), _cell(max(xs))
    lines.append(" " * (pad + 2) + left + right.rjust(cols - len(left)))
    lines.append(f"x: {_axis(chart['x'])}")
    lines.append("★ recommended (first-ranked)   ◆ Pareto front (no other card is better on both axes)   · other candidates")
    lines.append("")
    lines.append("Pareto front:")
    xu, yu = str(chart["x"].get("unit", "")), str(chart["y"].get("unit", ""))
    by_name = {p["name"]: p for p in points}
    for name in chart.get("front", []):
        p = by_name[name]
        mark = "★" if name == best else "◆"
        lines.append(f"  {mark} {_name(name).ljust(NAME_WIDTH)}  {number(p['x'], xu):>14}  {number(p['y'], yu)}")
    if best is not None and best not in front:
        p = by_name[best]
        lines.append(f"  ★ {_name(best).ljust(NAME_WIDTH)}  {number(p['x'], xu):>14}  {number(p['y'], yu)}")
    if chart.get("unknown"):
        lines.append(f"not drawn ({UNKNOWN} figure): " + ", ".join(chart["unknown"]))
    return lines
