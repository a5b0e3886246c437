#!/usr/bin/env bash
# The one test command (README and CI): installs kbq with its test extras into a venv
# (the active one, else ./.venv), installs the system Chromium the page test drives, runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${VIRTUAL_ENV:-}" ]; then
  PY=python
else
  [ -x .venv/bin/python ] || python3 -m venv .venv
  PY=.venv/bin/python
fi
"$PY" -m pip install -q --disable-pip-version-check -e ".[test]"
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
exec "$PY" -m pytest "$@"
