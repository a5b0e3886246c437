"""Run SPARQL on an external SPARQL 1.1 endpoint (Protocol, query operation) -> executor.Table.

Any store holding `kbq export` output works (Oxigraph server, Fuseki, QLever, GraphDB,
Virtuoso, or another `kbq serve`). Results come back as SPARQL JSON (SELECT, ASK) or
N-Triples (CONSTRUCT, DESCRIBE) and become the same Python values the embedded engine gives.
Standard library only (urllib).

The endpoint is not trusted: its answer is read up to MAX_BYTES within the time limit (a
trickle cannot hold the caller), redirects go to http(s) only, and the JSON must have the
shape SPARQL 1.1 gives it (a `"boolean": "false"` is an error, not true; nesting deeper than
Python can parse is an error, not a RecursionError).
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from kbq.errors import KbqError, QueryTimeoutError, SparqlError
from kbq.store.executor import XSD, Table, Value, literal_value
from kbq.version import __version__

ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8"
MAX_BYTES = 64 << 20
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
    try:
        doc = json.loads(data)
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
    return Table(columns=columns, rows=[[binding_value(b.get(c)) for c in columns] for b in bindings])


def _parse_triples(data: bytes, media: str) -> Table:
    import pyoxigraph as ox

    from kbq.store.executor import term_value

    fmt = ox.RdfFormat.from_media_type(media) or ox.RdfFormat.N_TRIPLES
    try:
        parsed = list(ox.parse(data, format=fmt))
    except SyntaxError as exc:
        raise EndpointError(f"the endpoint's {media} cannot be read: {exc}") from None
    rows = [[term_value(t.subject), term_value(t.predicate), term_value(t.object)] for t in parsed]
    return Table(columns=["subject", "predicate", "object"], rows=rows)


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    max_redirections = 5

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if urllib.parse.urlsplit(newurl).scheme not in ("http", "https"):
            raise EndpointError(f"the endpoint redirected to {newurl!r}: only http(s) is followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_HttpOnlyRedirects)


def _read_bounded(response: Any, url: str, deadline: float, limit: int) -> bytes:
    chunks, size = [], 0
    while chunk := response.read1(1 << 16):  # returns what arrived: a trickle meets the deadline
        size += len(chunk)
        if size > limit:
            raise EndpointError(f"{url} answered more than {limit} bytes, kbq's limit for a remote answer")
        if time.monotonic() > deadline:
            raise QueryTimeoutError(f"{url} did not finish its answer within the time limit")
        chunks.append(chunk)
    return b"".join(chunks)


def remote_select(url: str, query: str, *, timeout: float = 30.0, max_bytes: int = MAX_BYTES) -> Table:
    """POST `query` to `url` as an HTML form (`query=...`); the answer as a Table.

    The form encoding (SPARQL 1.1 Protocol, "query via URL-encoded POST") rather than an
    `application/sparql-query` body: every store accepts it, while Virtuoso 7 never answers a
    direct POST body. A POST, not a GET, because compiled questions outgrow URL limits."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise EndpointError(f"not an http(s) SPARQL endpoint URL: {url!r}")
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode({"query": query}).encode("ascii"),
        method="POST",
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": ACCEPT,
            "User-Agent": f"kbq/{__version__}",
        },
    )
    deadline = time.monotonic() + timeout
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            media = response.headers.get_content_type()
            data = _read_bounded(response, url, deadline, max_bytes)
    except urllib.error.HTTPError as exc:
        detail = exc.read(2000).decode("utf-8", "replace").strip()
        if exc.code == 400:
            raise SparqlError(f"the endpoint refused the query: {detail}") from None
        if exc.code == 503 and "limit" in detail:
            raise QueryTimeoutError(f"{url}: {detail}") from None
        raise EndpointError(f"{url} answered HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:  # a malformed HTTP answer
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise QueryTimeoutError(f"{url} gave no answer within {timeout:g} s") from None
        raise EndpointError(f"cannot reach the SPARQL endpoint {url}: {reason}") from None
    if media in ("application/sparql-results+json", "application/json"):
        return parse_json_results(data)
    if media in ("application/n-triples", "text/turtle", "text/plain"):
        return _parse_triples(data, "application/n-triples" if media == "text/plain" else media)
    raise EndpointError(f"{url} answered {media!r}, not SPARQL results (is it a SPARQL endpoint?)")
