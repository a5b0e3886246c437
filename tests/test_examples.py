"""Every file under examples/ runs: the overlay validates and answers, the SPARQL runs, the
embedding script works (golden questions are tested in test_golden.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_in_process

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def commands_in(path: Path) -> list[list[str]]:
    """The `kbq ...` lines a file's header comments show."""
    import shlex

    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"#\s+kbq (.+)$", line)
        if match:
            found.append(shlex.split(match.group(1)))
    return found


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.ttl")) + sorted(EXAMPLES.glob("*.rq")), ids=lambda p: p.name)
def test_example_file_commands_run(path: Path) -> None:
    commands = commands_in(path)
    assert commands, f"{path.name} should show how to use it"
    for args in commands:
        run = run_in_process(*args, cwd=EXAMPLES.parent)
        assert run.returncode == 0, (args, run.stderr)
        assert run.stdout.strip()


def test_overlay_example_answers_with_the_new_key() -> None:
    from kbq import KnowledgeBase

    kb = KnowledgeBase.load(EXAMPLES / "my_lab.ttl")
    owned = kb.ask("gpus where owned >= 1 order by owned desc")
    assert [r[1] for r in owned.rows] == ["NVIDIA A100 SXM4 80GB", "GeForce RTX 2080 Ti", "Quadro RTX 8000"]
    assert kb.entity("the old render box cards").name == "GeForce RTX 2080 Ti"


def test_embedding_script_runs_as_a_program() -> None:
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "embed.py"), "lstm"], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert run.returncode == 0 and len(run.stdout.splitlines()) == 3
