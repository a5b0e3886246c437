"""The `kbq` command (in this process; a few smoke tests through a real subprocess), and every
README example."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_in_process as kbq
from cli_helpers import run_subprocess

ROOT = Path(__file__).resolve().parent.parent


def test_question_prints_a_table_and_the_explanation() -> None:
    run = run_subprocess("best gpu for bert on dense 9-card chassis as of 2020-03")  # a smoke test of the real command
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "best for BERT: Quadro RTX 8000"  # the headline first
    header = next(i for i, line in enumerate(lines) if line.startswith("name"))
    assert lines[header - 1].split()[:1] == ["memory"] and lines[header].split()[1] == "GB"  # units under the names
    assert lines[header + 2].startswith("Quadro RTX 8000")
    assert "profile: seed Transformer profile" in run.stdout
    assert "\x1b[" not in run.stdout


def test_json_and_csv_formats() -> None:
    data = json.loads(kbq("frameworks for rnn", "--format", "json").stdout)
    assert data["kind"] == "list" and "PyTorch" in [r[1] for r in data["rows"]]
    rows = list(csv.reader(io.StringIO(kbq("sdks for inference", "--format", "csv").stdout)))
    assert rows[0] == ["item", "name", "role"] and {r[1] for r in rows[1:]} == {"TensorRT", "DALI"}


def test_sparql_flag_prints_the_compiled_query() -> None:
    run = kbq("gpu for lstm where cooling=blower", "--sparql")
    assert run.returncode == 0 and run.stdout.lstrip().startswith("PREFIX") and "ORDER BY" in run.stdout


def test_raw_sparql_subcommand() -> None:
    run = kbq("sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?g a <https://kbq.dev/ontology#GPU> }", "--format", "json")
    assert json.loads(run.stdout)["rows"][0][0] >= 30


def test_syntax_error_shows_caret_expected_and_exit_2() -> None:
    run = kbq("gpu for lstm where memory >")
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.splitlines()
    assert lines[0] == "  gpu for lstm where memory >"
    assert lines[1].index("^") == lines[0].index(">") + 1
    assert "expected:" in run.stderr and "Traceback" not in run.stderr


def test_unknown_word_suggests_and_exits_2() -> None:
    run = kbq("frameworks for lstn")
    assert run.returncode == 2 and "did you mean frameworks for LSTM?" in run.stderr


def test_no_result_exits_1_and_names_the_constraint() -> None:
    run = kbq("gpus where vendor = amd and cooling = blower")
    assert run.returncode == 1 and "'cooling = blower'" in run.stderr


def test_explain_lists_removed() -> None:
    run = kbq("gpu for lstm where cooling=blower as of 2020-03", "--explain")
    assert "removed:" in run.stdout and "NVIDIA TITAN RTX" in run.stdout.split("removed:")[1]


def test_overlay_flag(tmp_path: Path) -> None:
    overlay = tmp_path / "prices.ttl"
    overlay.write_text(
        "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\n"
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        'kb:QuadroRTX8000 skos:altLabel "our nlp box card" .\n'
    )
    run = kbq("describe our nlp box card", "--kb", str(overlay))
    assert run.returncode == 0 and "Quadro RTX 8000" in run.stdout


def test_help_and_version() -> None:
    run = kbq("--help")
    assert run.returncode == 0 and "questions people ask:" in run.stdout
    assert kbq("--version").stdout.startswith("kbq ")


def test_build_reports_counts_and_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_kb: Path) -> None:
    monkeypatch.setenv("KBQ_CACHE_DIR", str(tmp_path))  # a rebuild, not in the cache the other workers read (of the tiny KB)
    run = kbq("build")
    assert run.returncode == 0
    assert re.search(r"\d+ triples asserted, \d+ inferred .* build \d+\.\d+ s", run.stdout)


def test_shell_answers_from_standard_input() -> None:
    run = subprocess.run(
        [sys.executable, "-P", "-m", "kbq", "shell"],
        input="frameworks for cnn\nbad ( question\nquit\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert run.returncode == 0 and "TensorFlow" in run.stdout and "error" in run.stderr


def test_console_script_entry_point_starts() -> None:
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "kbq"]
    assert script.load().__name__ == "main"


def readme_commands() -> list[list[str]]:
    """Every `kbq "..."` command of the README, and every question in its table of forms."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = []
    for line in text.splitlines():
        for chunk in re.findall(r'kbq "[^"]+"(?: --[a-z]+(?: [a-z]+)?)*', line):
            found.append(shlex.split(chunk)[1:])
        if line.startswith("| ") and not line.startswith("| form"):
            found += [[q] for q in re.findall(r"`([^`]+)`", line.split("|")[2])]
    return found


@pytest.mark.parametrize("args", readme_commands(), ids=lambda a: a[0][:40])
def test_every_readme_example_runs(args: list[str]) -> None:
    run = kbq(*args)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()


def test_readme_has_examples() -> None:
    assert len(readme_commands()) >= 15


def test_readme_python_snippets_run(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})  # the README example itself
    assert capsys.readouterr().out.strip()


def test_keys_name_the_property_each_reads() -> None:
    """A key's property IRI is what a SPARQL user writes; a wrong one silently returns nothing."""
    data = json.loads(kbq("keys", "--format", "json").stdout)
    at = {c: i for i, c in enumerate(data["columns"])}
    rows = {r[at["key"]]: r for r in data["rows"]}
    assert rows["bandwidth"][at["item"]] == "https://kbq.dev/ontology#memoryBandwidth"
    assert rows["bandwidth"][at["property"]] == "kbq:memoryBandwidth"
    table = kbq("keys").stdout
    assert "kbq:memoryBandwidth" in table


def test_export_help_says_nquads_needs_a_union_default_graph() -> None:
    run = kbq("export", "--help")
    assert run.returncode == 0 and "union default graph" in " ".join(run.stdout.split())
