"""Screenshots of the page at 1400 px and 400 px (a phone) in headless Chromium, and terminal
captures at 80 columns, for before/after notes.

Run: python bench/screenshots.py LABEL [CHECKOUT]   (writes docs/screenshots/LABEL-*.png and
docs/terminal-LABEL.txt; CHECKOUT: another kbq checkout to capture instead, e.g. main for "before")
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from server_helpers import start_kbq  # noqa: E402

QUESTIONS = {
    "fit": "does llama 3.1 70b fit on rtx 4090",
    "ranking": "gpu for llama 3.1 8b inference",
    "compare": "compare rtx 4090 vs rtx 3090",
}
WIDTHS = {"desktop": (1400, 900), "phone": (400, 800)}
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run"]


def page_shots(label: str, root: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    server = start_kbq(root=root)
    written = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS, headless=True)
            for device, (width, height) in WIDTHS.items():
                context = browser.new_context(viewport={"width": width, "height": height})
                page = context.new_page()
                for name, question in QUESTIONS.items():
                    page.goto(server.url + "/?q=" + urllib.parse.quote(question))
                    page.locator("#results tbody tr").first.wait_for(timeout=60_000)
                    page.wait_for_timeout(300)  # the scroll to the answer
                    path = out / f"{label}-{name}-{device}.png"
                    page.screenshot(path=str(path))  # what the first screen shows
                    written.append(path)
                context.close()
            browser.close()
    finally:
        server.stop()
    return written


def terminal(label: str, root: Path) -> Path:
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    parts = []
    for question in QUESTIONS.values():
        done = subprocess.run([sys.executable, "-m", "kbq", question], capture_output=True, text=True, cwd=root, env=env)
        lines = done.stdout.splitlines()
        widest = max((len(line) for line in lines), default=0)
        parts.append(f'$ COLUMNS=80 kbq "{question}"   # {len(lines)} lines, widest {widest}\n' + "\n".join(lines[:40]))
        if len(lines) > 40:
            parts.append(f"... ({len(lines) - 40} more lines)")
    path = ROOT / "docs" / f"terminal-{label}.txt"
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "after"
    checkout = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else ROOT
    for written in [*page_shots(which, checkout), terminal(which, checkout)]:
        print(written)
