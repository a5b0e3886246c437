"""A query worker: a child process of `kbq serve` that runs one query at a time.

It opens the snapshot read-only (and copies it into memory for SPARQL) and answers framed jobs on stdin/stdout, so the server can
kill it when a query runs past its time limit (a running pyoxigraph query cannot be
cancelled). It dies with its parent, and where the OS allows it, it runs in a network
namespace of its own: no interface, so no query could reach the network even if one got
past the guard.

Frames: a job is `>I` length + JSON; a reply is `>II` (header, body lengths) + JSON header
+ body bytes. The header holds `status` and, on failure, `error` (a JSON object).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import struct
import sys
import traceback
from itertools import islice
from typing import IO, Any

_PR_SET_PDEATHSIG = 1
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000

# Media-type keys the server negotiates -> pyoxigraph format names.
RESULT_FORMATS = {"json": "JSON", "xml": "XML", "csv": "CSV", "tsv": "TSV"}
GRAPH_FORMATS = {"ttl": "TURTLE", "nt": "N_TRIPLES", "jsonld": "JSON_LD", "rdfxml": "RDF_XML"}


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when the server dies; elsewhere, rely on stdin EOF."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)


def _isolate_network() -> bool:
    """Enter an empty network namespace (root, or unprivileged user namespaces); True if done."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        unshare = libc.unshare
    except (OSError, AttributeError):
        return False
    return bool(unshare(_CLONE_NEWNET) == 0 or unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0)


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def write_frame(out: IO[bytes], header: dict[str, Any], body: bytes = b"") -> None:
    head = json.dumps(header).encode()
    out.write(struct.pack(">II", len(head), len(body)) + head + body)
    out.flush()


def _failure(status: int, message: str, **extra: Any) -> tuple[dict[str, Any], bytes]:
    return {"status": status, "error": {"error": message, **extra}}, b""


def _limit_memory(megabytes: int) -> None:
    """Let this process use `megabytes` more than it holds now (data and anonymous mappings).
    Past it an allocation fails: Python raises MemoryError, the engine aborts the process; the
    server answers 503 either way and starts another worker."""
    try:
        import resource

        with open("/proc/self/status", encoding="ascii") as handle:
            data_kb = next(int(line.split()[1]) for line in handle if line.startswith("VmData:"))
        limit = (data_kb << 10) + (megabytes << 20)
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        resource.setrlimit(resource.RLIMIT_DATA, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, OSError, StopIteration, ValueError):
        pass  # not Linux: the time limit still stops a query


class Worker:
    """Runs SPARQL and kbq questions against one read-only snapshot."""

    def __init__(self, snapshot: str, max_results: int, max_bytes: int = 32 << 20) -> None:
        import pyoxigraph as ox

        from kbq.api import KnowledgeBase
        from kbq.store import executor

        disk = ox.Store.read_only(snapshot)
        quads = list(disk.quads_for_pattern(None, None, None, None))
        # SPARQL runs in memory, 2-3x faster than the on-disk union: the named graphs, and their
        # union as the default graph (so FROM and GRAPH keep their meaning). The kbq language
        # runs on the snapshot itself, exactly as the command does (same answers, same order).
        self.store = ox.Store()
        self.store.bulk_extend(quads + [ox.Quad(q.subject, q.predicate, q.object, ox.DefaultGraph()) for q in quads])
        self.max_results, self.max_bytes = max_results, max_bytes
        self.kb = KnowledgeBase(lambda q: executor.select(disk, q), store=disk)
        _ = self.kb.catalog  # read once now, so the first question is as fast as the rest

    def handle(self, job: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        if job.get("op") == "sparql":
            return self.sparql(job["query"], job["format"])
        if job.get("op") == "ask":
            return self.ask(job["q"], explain=bool(job.get("explain")))
        return _failure(500, f"unknown job {job.get('op')!r}")

    def _too_many(self) -> tuple[dict[str, Any], bytes]:
        return _failure(400, f"the result has more than {self.max_results} rows, this server's limit: add a LIMIT")

    def _too_big(self) -> tuple[dict[str, Any], bytes]:
        return _failure(413, f"the result is larger than {self.max_bytes} bytes, this server's limit: add a LIMIT or select less")

    def _bounded(self, body: bytes) -> tuple[dict[str, Any], bytes]:
        return ({"status": 200}, body) if len(body) <= self.max_bytes else self._too_big()

    def sparql(self, query: str, fmt: str) -> tuple[dict[str, Any], bytes]:
        import pyoxigraph as ox  # imported in __init__ already: a lookup

        try:
            result = self.store.query(query)
            if isinstance(result, ox.QueryBoolean):
                return {"status": 200}, result.serialize(format=getattr(ox.QueryResultsFormat, RESULT_FORMATS[fmt])) or b""
            if isinstance(result, ox.QuerySolutions):
                # pyoxigraph serialises; the rows pass through TSV so that their number and size are bounded.
                lines = ["\t".join(str(v) for v in result.variables)]
                size = len(lines[0])
                for solution in islice(result, self.max_results + 1):
                    line = "\t".join(["" if t is None else str(t) for t in solution])
                    size += len(line) + 1
                    if size > self.max_bytes:
                        return self._too_big()
                    lines.append(line)
                if len(lines) > self.max_results + 1:
                    return self._too_many()
                tsv = ("\n".join(lines) + "\n").encode()
                del lines
                parsed = ox.parse_query_results(tsv, format=ox.QueryResultsFormat.TSV)
                return self._bounded(parsed.serialize(format=getattr(ox.QueryResultsFormat, RESULT_FORMATS[fmt])) or b"")
            triples, size = [], 0
            for triple in islice(result, self.max_results + 1):
                size += len(str(triple))
                if size > self.max_bytes:
                    return self._too_big()
                triples.append(triple)
            if len(triples) > self.max_results:
                return self._too_many()
            return self._bounded(ox.serialize(triples, format=getattr(ox.RdfFormat, GRAPH_FORMATS[fmt])) or b"")
        except SyntaxError as exc:
            return _failure(400, f"SPARQL syntax error: {exc}")
        except MemoryError:
            return _failure(503, "the query needed more memory than this server lets a query use: simplify it")
        except (OSError, RuntimeError, ValueError, OverflowError) as exc:
            return _failure(400, f"SPARQL evaluation failed: {str(exc)[:1000]}")

    def ask(self, text: str, *, explain: bool) -> tuple[dict[str, Any], bytes]:
        from kbq import output
        from kbq.errors import KbqError, NoResultError, QueryError

        try:
            result = self.kb.answer(text, explain=explain)
            return {"status": 200}, output.to_json(result.to_dict()).encode()
        except NoResultError as exc:
            plan = self.kb.plan(text)
            payload = {
                "question": text,
                "kind": plan.kind,
                "columns": plan.columns,
                "rows": [],
                "units": plan.units,
                "sparql": plan.sparql,
                "explanation": plan.explanation,
                "removed": [],
                "message": str(exc),
            }
            return {"status": 200}, output.to_json(payload).encode()
        except RecursionError:
            return _failure(400, "the question nests too deeply to be read", type="QueryError")
        except (ValueError, OverflowError) as exc:  # a value out of range (a date, a number): the asker's, not ours
            return _failure(400, f"cannot answer this question: {exc}", type=type(exc).__name__)
        except MemoryError:
            return _failure(503, "the question needed more memory than this server lets a query use")
        except QueryError as exc:
            return _failure(
                400,
                exc.message,
                column=exc.column,
                expected=exc.expected,
                suggestions=exc.suggestions,
                detail=exc.render(),
                type=type(exc).__name__,
            )
        except KbqError as exc:
            return _failure(exc.http_status, str(exc), type=type(exc).__name__)


def serve(stdin: IO[bytes], out: IO[bytes], worker: Worker) -> None:
    while (size := _read_exact(stdin, 4)) is not None:
        raw = _read_exact(stdin, struct.unpack(">I", size)[0])
        if raw is None:
            return
        try:
            header, body = worker.handle(json.loads(raw))
        except Exception as exc:  # noqa: BLE001 - an unexpected bug: a 500 for this job, the worker goes on
            traceback.print_exc(file=sys.stderr)
            header, body = _failure(500, f"internal error: {type(exc).__name__}: {exc}")
        write_frame(out, header, body)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kbq.serve.worker", description="A kbq serve query worker.")
    p.add_argument("--snapshot", required=True)
    p.add_argument("--max-results", type=int, required=True)
    p.add_argument("--max-bytes", type=int, default=32 << 20)
    p.add_argument("--memory-mb", type=int, default=1024)
    p.add_argument("--parent", type=int, required=True)
    p.add_argument("--no-sandbox", action="store_true")
    args = p.parse_args(argv)
    _die_with_parent(args.parent)
    # Before pyoxigraph starts any thread: a multi-threaded process cannot enter a user namespace.
    sandboxed = False if args.no_sandbox else _isolate_network()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed by accident goes to the log, not into the reply stream
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops its workers itself
    worker = Worker(args.snapshot, args.max_results, args.max_bytes)
    _limit_memory(args.memory_mb)
    write_frame(out, {"status": 200, "ready": True, "sandboxed": sandboxed, "pid": os.getpid()})
    serve(sys.stdin.buffer, out, worker)
    return 0


if __name__ == "__main__":
    sys.exit(main())
