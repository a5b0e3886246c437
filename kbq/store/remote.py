"""Run SPARQL on an external SPARQL 1.1 endpoint (Protocol, query operation) -> executor.Table.

Any store holding `kbq export` output works (Oxigraph server, Fuseki, QLever, GraphDB,
Virtuoso, or another `kbq serve`). Results come back as SPARQL JSON (SELECT, ASK) or
N-Triples (CONSTRUCT, DESCRIBE) and become the same Python values the embedded engine gives.
Standard library only (urllib).

The endpoint is not trusted: its answer is read up to MAX_BYTES and MAX_CELLS values, within one
deadline for the whole exchange (a trickle of any part cannot hold the caller), redirects go to
http(s) only, and the JSON must have the
shape SPARQL 1.1 gives it (a `"boolean": "false"` is an error, not true; nesting deeper than
Python can parse is an error, not a RecursionError).
"""

from __future__ import annotations

import http.client
import itertools
import json
import socket
import threading
import time
import urllib.parse
from typing import Any

from kbq.errors import KbqError, QueryTimeoutError, SparqlError
from kbq.store.executor import XSD, Table, Value, literal_value
from kbq.version import __version__

ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8"
MAX_BYTES = 16 << 20
"""Bytes of a remote answer (the whole `kbq export` graph is about 5 MB)."""
MAX_CELLS = 2_000_000
"""Solutions x variables (or triples x 3) of a remote answer: a few bytes of JSON can name many
variables for many empty solutions, and each cell costs a Python object (issue 22, M-8)."""
_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


class EndpointError(KbqError):
    """The endpoint cannot be reached or answered with something that is not SPARQL results."""

    http_status = 502


def binding_value(term: dict[str, Any] | None) -> Value:
    """One SPARQL JSON term as executor.term_value gives it for the embedded store."""
    if term is None:
        return None
    if not isinstance(term, dict) or not isinstance(term.get("value", ""), str):
        raise EndpointError(f"not a SPARQL JSON term: {str(term)[:200]}")
    kind, value = term.get("type"), str(term.get("value", ""))
    if kind == "uri":
        return value
    if kind == "bnode":
        return "_:" + value
    if kind in ("literal", "typed-literal"):
        datatype = term.get("datatype") or (_LANG_STRING if "xml:lang" in term else XSD + "string")
        return literal_value(value, str(datatype))
    if kind == "triple":
        return str(value)
    raise EndpointError(f"unknown term type in SPARQL JSON results: {kind!r}")


def parse_json_results(data: bytes) -> Table:
    """SPARQL 1.1 Query Results JSON -> Table (ASK: one 'answer' column)."""
    objects = 0

    def counted(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal objects
        objects += 1
        if objects > MAX_CELLS:
            raise EndpointError(f"the endpoint's JSON results hold more than {MAX_CELLS} objects, kbq's limit")
        return dict(pairs)

    try:
        doc = json.loads(data, object_pairs_hook=counted)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EndpointError(f"the endpoint's JSON results cannot be read: {exc}") from None
    except RecursionError:
        raise EndpointError("the endpoint's JSON results are nested too deeply to read") from None
    if not isinstance(doc, dict):
        raise EndpointError("the endpoint's JSON results are not a JSON object")
    if "boolean" in doc:
        if not isinstance(doc["boolean"], bool):
            raise EndpointError(f"the endpoint answered ASK with {doc['boolean']!r}, not true or false")
        return Table(columns=["answer"], rows=[[doc["boolean"]]])
    head, results = doc.get("head", {}), doc.get("results", {})
    columns = head.get("vars", []) if isinstance(head, dict) else None
    bindings = results.get("bindings", []) if isinstance(results, dict) else None
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise EndpointError("the endpoint's JSON results have no list of variable names (head.vars)")
    if not isinstance(bindings, list) or not all(isinstance(b, dict) for b in bindings):
        raise EndpointError("the endpoint's JSON results have no list of solutions (results.bindings)")
    if len(columns) * len(bindings) > MAX_CELLS:
        raise EndpointError(
            f"the endpoint answered {len(bindings)} solutions x {len(columns)} variables, over kbq's limit of {MAX_CELLS} values"
        )
    return Table(columns=columns, rows=[[binding_value(b.get(c)) for c in columns] for b in bindings])


def _parse_triples(data: bytes, media: str) -> Table:
    import pyoxigraph as ox

    from kbq.store.executor import term_value

    fmt = ox.RdfFormat.from_media_type(media) or ox.RdfFormat.N_TRIPLES
    try:
        parsed = list(itertools.islice(ox.parse(data, format=fmt), MAX_CELLS // 3 + 1))
    except SyntaxError as exc:
        raise EndpointError(f"the endpoint's {media} cannot be read: {exc}") from None
    if len(parsed) > MAX_CELLS // 3:
        raise EndpointError(f"the endpoint answered more than {MAX_CELLS // 3} triples, kbq's limit")
    rows = [[term_value(t.subject), term_value(t.predicate), term_value(t.object)] for t in parsed]
    return Table(columns=["subject", "predicate", "object"], rows=rows)


_REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5


def _abort(connection: http.client.HTTPConnection, fired: threading.Event) -> None:
    """At the deadline: shut the socket, so whatever read is waiting (status line, a header, a
    chunk size, the body) returns at once."""
    fired.set()
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _post(url: str, body: bytes, deadline: float, max_bytes: int) -> tuple[int, str, bytes]:
    """POST `body` to `url`, following http(s) redirects; (status, media type, bounded body).

    One deadline for everything (connecting, the status line, the headers, each chunk, the body):
    a timer shuts the socket when it passes, so a peer that trickles any part cannot hold the
    caller past it. http.client bounds a status or header line (64 KiB) and the header count."""
    for _hop in range(MAX_REDIRECTS + 1):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointError(f"not an http(s) SPARQL endpoint URL: {url!r}")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname, parts.port, timeout=remaining)
        fired = threading.Event()
        timer = threading.Timer(remaining, _abort, (connection, fired))
        timer.daemon = True
        timer.start()
        try:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request(
                "POST",
                path,
                body=body,
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Accept": ACCEPT,
                    "User-Agent": f"kbq/{__version__}",
                },
            )
            response = connection.getresponse()
            if response.status in _REDIRECTS and response.getheader("Location"):
                url = urllib.parse.urljoin(url, response.getheader("Location", ""))
                if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
                    raise EndpointError(f"the endpoint redirected to {url!r}: only http(s) is followed")
                continue
            limit = max_bytes if response.status == 200 else 2000
            data = _read_bounded(response, url, deadline, limit, cut=response.status != 200)
            if fired.is_set():  # the socket was shut mid-answer: what was read may look whole
                raise TimeoutError
            return response.status, response.headers.get_content_type(), data
        except (OSError, http.client.HTTPException):
            if fired.is_set() or time.monotonic() >= deadline:
                raise TimeoutError from None
            raise
        finally:
            timer.cancel()
            connection.close()
    raise EndpointError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _read_bounded(response: Any, url: str, deadline: float, limit: int, *, cut: bool = False) -> bytes:
    chunks, size = [], 0
    while chunk := response.read1(1 << 16):  # returns what arrived: a trickle meets the deadline
        size += len(chunk)
        if size > limit:
            if cut:
                chunks.append(chunk)
                break
            raise EndpointError(f"{url} answered more than {limit} bytes, kbq's limit for a remote answer")
        if time.monotonic() > deadline:
            raise QueryTimeoutError(f"{url} did not finish its answer within the time limit")
        chunks.append(chunk)
    return b"".join(chunks)[: limit if cut else None]


def remote_select(url: str, query: str, *, timeout: float = 30.0, max_bytes: int = MAX_BYTES) -> Table:
    """POST `query` to `url` as an HTML form (`query=...`); the answer as a Table.

    The form encoding (SPARQL 1.1 Protocol, "query via URL-encoded POST") rather than an
    `application/sparql-query` body: every store accepts it, while Virtuoso 7 never answers a
    direct POST body. A POST, not a GET, because compiled questions outgrow URL limits.
    `timeout` bounds the whole exchange, from connecting to the last byte."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise EndpointError(f"not an http(s) SPARQL endpoint URL: {url!r}")
    body = urllib.parse.urlencode({"query": query}).encode("ascii")
    try:
        status, media, data = _post(url, body, time.monotonic() + timeout, max_bytes)
    except TimeoutError:
        raise QueryTimeoutError(f"{url} gave no complete answer within {timeout:g} s") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:  # unreachable, or a malformed HTTP answer
        raise EndpointError(f"cannot reach the SPARQL endpoint {url}: {type(exc).__name__}: {exc}") from None
    if status != 200:
        detail = data.decode("utf-8", "replace").strip()
        if status == 400:
            raise SparqlError(f"the endpoint refused the query: {detail}")
        if status == 503 and "limit" in detail:
            raise QueryTimeoutError(f"{url}: {detail}")
        raise EndpointError(f"{url} answered HTTP {status}: {detail}")
    if media in ("application/sparql-results+json", "application/json"):
        return parse_json_results(data)
    if media in ("application/n-triples", "text/turtle", "text/plain"):
        return _parse_triples(data, "application/n-triples" if media == "text/plain" else media)
    raise EndpointError(f"{url} answered {media!r}, not SPARQL results (is it a SPARQL endpoint?)")
