"""Run SPARQL on an external SPARQL 1.1 endpoint (Protocol, query operation) -> executor.Table.

Any store holding `kbq export` output works (Oxigraph server, Fuseki, QLever, GraphDB,
Virtuoso, or another `kbq serve`). Results come back as SPARQL JSON (SELECT, ASK) or
N-Triples (CONSTRUCT, DESCRIBE) and become the same Python values the embedded engine gives.
Standard library only (urllib).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from kbq.errors import KbqError, QueryTimeoutError, SparqlError
from kbq.store.executor import XSD, Table, Value, literal_value
from kbq.version import __version__

ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8"
_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


class EndpointError(KbqError):
    """The endpoint cannot be reached or answered with something that is not SPARQL results."""

    http_status = 502


def binding_value(term: dict[str, Any] | None) -> Value:
    """One SPARQL JSON term as executor.term_value gives it for the embedded store."""
    if term is None:
        return None
    kind, value = term.get("type"), str(term.get("value", ""))
    if kind == "uri":
        return value
    if kind == "bnode":
        return "_:" + value
    if kind in ("literal", "typed-literal"):
        datatype = term.get("datatype") or (_LANG_STRING if "xml:lang" in term else XSD + "string")
        return literal_value(value, datatype)
    if kind == "triple":
        return str(value)
    raise EndpointError(f"unknown term type in SPARQL JSON results: {kind!r}")


def parse_json_results(data: bytes) -> Table:
    """SPARQL 1.1 Query Results JSON -> Table (ASK: one 'answer' column)."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EndpointError(f"the endpoint's JSON results cannot be read: {exc}") from None
    if "boolean" in doc:
        return Table(columns=["answer"], rows=[[bool(doc["boolean"])]])
    columns = list(doc.get("head", {}).get("vars", []))
    bindings = doc.get("results", {}).get("bindings", [])
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


def remote_select(url: str, query: str, *, timeout: float = 30.0) -> Table:
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
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            media = response.headers.get_content_type()
            data = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace").strip()[:2000]
        if exc.code == 400:
            raise SparqlError(f"the endpoint refused the query: {detail}") from None
        if exc.code == 503 and "limit" in detail:
            raise QueryTimeoutError(f"{url}: {detail}") from None
        raise EndpointError(f"{url} answered HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise QueryTimeoutError(f"{url} gave no answer within {timeout:g} s") from None
        raise EndpointError(f"cannot reach the SPARQL endpoint {url}: {reason}") from None
    if media in ("application/sparql-results+json", "application/json"):
        return parse_json_results(data)
    if media in ("application/n-triples", "text/turtle", "text/plain"):
        return _parse_triples(data, "application/n-triples" if media == "text/plain" else media)
    raise EndpointError(f"{url} answered {media!r}, not SPARQL results (is it a SPARQL endpoint?)")
