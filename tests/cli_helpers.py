"""Run the `kbq` command in this process (fast: no interpreter start, no imports, the snapshot
already open) or, for the few smoke tests that need a real process, through a subprocess."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_in_process(
    *args: str, cwd: Path | None = None, env: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """kbq.cli.main(args) with its output captured, as a CompletedProcess (stdout is not a terminal,
    as in a pipe). `env`: variables set for the call (None: unset), restored after it."""
    from kbq import cli

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    saved = {name: os.environ.get(name) for name in env or {}}
    try:
        for name, value in (env or {}).items():
            _set(name, value)
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as exc:  # argparse's --help / --version and usage errors
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        os.chdir(old)
        for name, value in saved.items():
            _set(name, value)
    return subprocess.CompletedProcess(["kbq", *args], code, out.getvalue(), err.getvalue())


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def run_subprocess(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m kbq ARGS` in a new process (-P: the checkout never shadows the installed kbq)."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "kbq", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=dict(os.environ)
    )
