#!/usr/bin/env bash
# Virtuoso 7 (Debian's virtuoso-opensource-7-bin, the store behind DBpedia) for the store parity
# tests (tests/test_stores.py). Loopback only; every file in the folder given.
#
#   tests/stores/virtuoso.sh install          install the package when missing (root + apt-get only)
#   tests/stores/virtuoso.sh start DIR FILE   a fresh database in DIR holding FILE (`kbq export
#                                             --format nt`): prints the SPARQL endpoint URL
#   tests/stores/virtuoso.sh stop DIR         stop the server started in DIR
#
# Ports: $VIRTUOSO_HTTP_PORT and $VIRTUOSO_ISQL_PORT, else free ones. Exit status 3 from
# `install` or `start` means Virtuoso is not installed and cannot be installed here.
set -euo pipefail

VIRTUOSO=${VIRTUOSO:-virtuoso-t}
ISQL=${ISQL:-isql-vt}
GRAPH=https://kbq.dev/graph/export

die() { echo "virtuoso.sh: $*" >&2; exit 1; }

install() {
  command -v "$VIRTUOSO" >/dev/null 2>&1 && command -v "$ISQL" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "virtuoso.sh: virtuoso-t is missing and this user cannot apt-get install virtuoso-opensource-7-bin" >&2
    return 3
  fi
  export DEBIAN_FRONTEND=noninteractive
  # the package lists may be missing or stale on a fresh machine: update once, only if needed
  apt-get install -y -qq --no-install-recommends virtuoso-opensource-7-bin >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends virtuoso-opensource-7-bin >/dev/null; } \
    || { echo "virtuoso.sh: apt-get could not install virtuoso-opensource-7-bin" >&2; return 3; }
  command -v "$VIRTUOSO" >/dev/null 2>&1 || { echo "virtuoso.sh: installed, but no virtuoso-t on PATH" >&2; return 3; }
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

isql() { "$ISQL" "127.0.0.1:$(cat "$DIR/isql.port")" dba dba "exec=$1" >>"$DIR/isql.log" 2>&1; }

write_ini() {
  local http=$1 sql=$2
  # Minimal: 2 cores / small data (NumberOfBuffers x 8 KB = 80 MB), no checkpoint timer, no
  # anytime-query cut-off (a partial answer would read as a wrong one), results never truncated.
  cat >"$DIR/virtuoso.ini" <<EOF
[Database]
DatabaseFile       = $DIR/virtuoso.db
ErrorLogFile       = $DIR/virtuoso.log
LockFile           = $DIR/virtuoso.lck
TransactionFile    = $DIR/virtuoso.trx
xa_persistent_file = $DIR/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = $DIR/virtuoso-temp.db
TransactionFile    = $DIR/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort               = 127.0.0.1:$sql
DisableUnixSocket        = 1
ServerThreads            = 10
CheckpointInterval       = 0
NumberOfBuffers          = 10000
MaxDirtyBuffers          = 6000
DirsAllowed              = ., $DIR/load
ThreadCleanupInterval    = 0
ResourcesCleanupInterval = 0

[HTTPServer]
ServerPort               = 127.0.0.1:$http
ServerRoot               = $DIR
ServerThreads            = 4
MaxKeepAlives            = 10
KeepAliveTimeout         = 10
HTTPThreadSize           = 280000
HttpPrintWarningsInOutput = 0
Charset                  = UTF-8

[SPARQL]
ResultSetMaxRows           = 1000000
MaxQueryCostEstimationTime = 0
MaxQueryExecutionTime      = 0
EOF
}

start() {
  local data=$1
  [ -f "$data" ] || die "no such file: $data"
  install || exit $?
  mkdir -p "$DIR/load"
  [ -e "$DIR/virtuoso.db" ] && die "$DIR already holds a database (stop it and use a fresh folder)"
  cp "$data" "$DIR/load/kbq.nt"
  local http=${VIRTUOSO_HTTP_PORT:-$(free_port)} sql=${VIRTUOSO_ISQL_PORT:-$(free_port)}
  echo "$sql" >"$DIR/isql.port"
  write_ini "$http" "$sql"
  # +wait: returns once the server is online (it forks; its pid is in the lock file)
  (cd "$DIR" && timeout 120 "$VIRTUOSO" +configfile "$DIR/virtuoso.ini" +wait >"$DIR/start.log" 2>&1) \
    || { tail -20 "$DIR/virtuoso.log" >&2 2>/dev/null; die "virtuoso-t did not start (see $DIR/virtuoso.log)"; }
  sed -n 's/^VIRT_PID=//p' "$DIR/virtuoso.lck" >"$DIR/virtuoso.pid"
  # the bulk loader: register the file, load it into one graph, make it durable
  isql "ld_dir('$DIR/load', 'kbq.nt', '$GRAPH'); rdf_loader_run(); checkpoint;" \
    || { stop; die "isql could not load $data (see $DIR/isql.log)"; }
  local failed
  failed=$("$ISQL" "127.0.0.1:$sql" dba dba \
    "exec=SELECT 'failed', COUNT(*) FROM DB.DBA.LOAD_LIST WHERE ll_state <> 2 OR ll_error IS NOT NULL;" 2>&1 \
    | awk '$1 == "failed" { print $2 }')
  [ "$failed" = 0 ] || { stop; die "the bulk loader did not load $data (see $DIR/isql.log and $DIR/virtuoso.log)"; }
  echo "http://127.0.0.1:$http/sparql"
}

stop() {
  [ -f "$DIR/virtuoso.pid" ] || return 0
  local pid
  pid=$(cat "$DIR/virtuoso.pid")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$DIR/virtuoso.pid"
}

case "${1:-}" in
  install) install ;;
  start) [ $# = 3 ] || die "usage: $0 start DIR FILE.nt"; DIR=$(cd "$2" && pwd); start "$3" ;;
  stop) [ $# = 2 ] || die "usage: $0 stop DIR"; DIR=$(cd "$2" && pwd); stop ;;
  *) die "usage: $0 install | start DIR FILE.nt | stop DIR" ;;
esac
