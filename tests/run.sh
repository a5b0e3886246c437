#!/usr/bin/env bash
# The test command (README and CI).
#   bash tests/run.sh          every test, against the INSTALLED kbq: installs the package (not editable)
#                              with its test extras into a venv (the active one, else ./.venv), the system
#                              Chromium the page test drives and Virtuoso, then runs `python -P -m pytest`
#                              with PYTHONSAFEPATH=1, so neither pytest nor a `python -m kbq` subprocess
#                              imports the checkout from the current folder.
#                              Tests marked `scale` (owlrl over the hand-written and the whole KB, a 10x synthetic KB: many minutes) are left out unless
#                              asked: `bash tests/run.sh -m scale` (a later -m replaces the default one).
#                              Test files run in parallel, one worker per core (pytest-xdist,
#                              `--dist loadfile`: a file's tests share one worker and its fixtures;
#                              the longest files first), on one snapshot cache for the whole run
#                              (KBQ_TEST_CACHE_DIR, tests/conftest.py); `-n 0` runs them in one process.
#                              With no arguments, the tests that time a real server (marked `serial`)
#                              run afterwards, alone.
#   bash tests/run.sh --fast   the fast lane (< 3 minutes): the checkout as it is, no installs, tests
#                              marked `slow` deselected (tests/conftest.py says what is slow and why).
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  shift
  PY=python
  [ -n "${VIRTUAL_ENV:-}" ] || { [ -x .venv/bin/python ] && PY=.venv/bin/python; }
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # subprocesses run the checkout too
  exec "$PY" -m pytest -n auto --dist loadfile -m "not slow and not scale" "$@"
fi
if [ -n "${VIRTUAL_ENV:-}" ]; then
  PY=python
else
  [ -x .venv/bin/python ] || python3 -m venv .venv
  PY=.venv/bin/python
fi
"$PY" -m pip install -q --disable-pip-version-check ".[test]"  # not editable: the tests run the installed wheel
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "tests/run.sh: could not install chromium; browser tests will say so" >&2
  else
    echo "tests/run.sh: chromium not found (install Debian's chromium package for the browser tests)" >&2
  fi
fi
# Virtuoso 7 (Debian's virtuoso-opensource-7-bin) for the store parity test, tests/test_stores.py
if ! command -v virtuoso-t >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  bash tests/stores/virtuoso.sh install || echo "tests/run.sh: could not install Virtuoso; the store parity test will say so" >&2
fi
if ! command -v wrk >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1 || true
fi
export PYTHONSAFEPATH=1  # `python -m kbq` subprocesses must not import ./kbq from the current folder
# One snapshot cache for the parallel run's workers and the serial run after it (tests/conftest.py)
export KBQ_TEST_CACHE_DIR="$(mktemp -d)/kbq-cache"
trap 'rm -rf "$(dirname "$KBQ_TEST_CACHE_DIR")"' EXIT
if [ "$#" -gt 0 ]; then
  "$PY" -P -m pytest -n auto --dist loadfile -m "not scale" "$@"; exit $?
fi
# Everything in parallel but the tests that time a real server; then those, alone (tests/conftest.py).
status=0
"$PY" -P -m pytest -n auto --dist loadfile -m "not scale and not serial" || status=$?
"$PY" -P -m pytest -m "serial and not scale" || { rc=$?; [ "$status" -ne 0 ] || status=$rc; }
exit "$status"
