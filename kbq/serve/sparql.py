"""The SPARQL 1.1 Protocol query operation at /sparql, and its service description.

GET ?query=, POST form-encoded, POST application/sparql-query. Results by content
negotiation (SELECT/ASK: SPARQL JSON, XML, CSV, TSV; CONSTRUCT/DESCRIBE: Turtle,
N-Triples, JSON-LD, RDF/XML: SPARQLWrapper's and rdflib SPARQLStore's default for
graphs), serialised by pyoxigraph in a worker. Every query passes the guard (kbq.serve.guard) first;
the dataset is always the served graphs.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterator, Sequence
from urllib.parse import parse_qs

import pyoxigraph as ox
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from kbq.serve.guard import Checked, RefusedQuery, check_query
from kbq.serve.state import ServerState, answer, failure, run_job
from kbq.serve.state import client_address as _client
from kbq.store.resources import ASSERTED_GRAPH, INFERRED_GRAPH

RESULT_TYPES = {
    "application/sparql-results+json": "json",
    "application/sparql-results+xml": "xml",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "application/json": "json",
    "application/xml": "xml",
    "text/xml": "xml",
}
GRAPH_TYPES = {
    "text/turtle": "ttl",
    "application/n-triples": "nt",
    "application/ld+json": "jsonld",
    "application/x-turtle": "ttl",
    "text/plain": "nt",
    "application/json": "jsonld",
    "application/rdf+xml": "rdfxml",
    "application/xml": "rdfxml",
    "text/xml": "rdfxml",
}
_RDF_FORMATS = {
    "ttl": ox.RdfFormat.TURTLE,
    "nt": ox.RdfFormat.N_TRIPLES,
    "jsonld": ox.RdfFormat.JSON_LD,
    "rdfxml": ox.RdfFormat.RDF_XML,
}
_DATASET_PARAMS = ("default-graph-uri", "named-graph-uri")
_FORM = "application/x-www-form-urlencoded"


class ProtocolError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _ranges(accept: str) -> Iterator[tuple[str, float]]:
    for part in accept.split(","):
        media, *params = part.split(";")
        media = media.strip().lower()
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media:
            yield media, quality


def negotiate(accept: str | None, offers: Sequence[str]) -> str | None:
    """The offer the Accept header prefers most (the first offer on a tie or no header)."""
    if not accept or not accept.strip():
        return offers[0]
    ranges = list(_ranges(accept))
    best, best_q = None, 0.0
    for offer in offers:
        kind = offer.split("/")[0]
        quality, specificity = None, -1
        for media, q in ranges:
            level = 2 if media == offer else 1 if media == f"{kind}/*" else 0 if media in ("*/*", "*") else -1
            if level > specificity:
                quality, specificity = q, level
        if quality is not None and quality > best_q:
            best, best_q = offer, quality
    return best


def _content_type(media: str) -> str:
    return f"{media}; charset=utf-8" if media.startswith("text/") else media


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 past `limit` bytes without reading the rest. (A body
    that does not arrive in time is answered 408 by the connection layer, kbq.serve.http.)"""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ProtocolError(413, f"request body of {declared} bytes is over this server's limit of {limit}")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise ProtocolError(413, f"request body is over this server's limit of {limit} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        raise ProtocolError(400, "the client went away before sending its whole request") from None
    return b"".join(chunks)


def _decode(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(400, "the request body is not UTF-8") from None


def _only(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name, [])
    if len(values) > 1:
        raise ProtocolError(400, f"more than one '{name}' parameter")
    return values[0] if values else None


async def read_query(request: Request, max_length: int) -> str | None:
    """The query text of a protocol request, None when there is none (service description)."""
    params = parse_qs(request.url.query, keep_blank_values=True)
    if request.method == "POST":
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media == "application/sparql-update":
            raise ProtocolError(400, "SPARQL Update is refused: this endpoint is read-only")
        if media not in (_FORM, "application/sparql-query"):
            raise ProtocolError(415, f"unsupported Content-Type '{media or '(none)'}': use {_FORM} or application/sparql-query")
        body = _decode(await read_body(request, 3 * max_length + 4096))
        if media == _FORM:
            params = parse_qs(body, keep_blank_values=True)
        elif "query" in params:
            raise ProtocolError(400, "a query both in the URL and in an application/sparql-query body")
        else:
            params["query"] = [body]
    if "update" in params:
        raise ProtocolError(400, "SPARQL Update is refused: this endpoint is read-only")
    for name in _DATASET_PARAMS:
        if name in params:
            raise ProtocolError(
                400,
                f"'{name}' is not supported: this endpoint always queries its own graphs (default graph: the union of "
                f"<{ASSERTED_GRAPH}> and <{INFERRED_GRAPH}>); name them with FROM / FROM NAMED or GRAPH in the query",
            )
    query = _only(params, "query")
    if query is not None and len(query) > max_length:
        raise ProtocolError(413, f"query of {len(query)} characters is over this server's limit of {max_length}")
    return query


def service_description(state: ServerState, endpoint: str, fmt: str) -> bytes:
    """SPARQL 1.1 Service Description of this endpoint (sd: vocabulary)."""
    sd, fm = "http://www.w3.org/ns/sparql-service-description#", "http://www.w3.org/ns/formats/"
    rdf_type, void = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), "http://rdfs.org/ns/void#"
    service, dataset, default = ox.BlankNode(), ox.BlankNode(), ox.BlankNode()
    info = state.info

    def n(iri: str) -> ox.NamedNode:
        return ox.NamedNode(iri)

    def count(value: int) -> ox.Literal:
        return ox.Literal(str(value), datatype=n("http://www.w3.org/2001/XMLSchema#integer"))

    triples = [
        ox.Triple(service, rdf_type, n(sd + "Service")),
        ox.Triple(service, n(sd + "endpoint"), n(endpoint)),
        ox.Triple(service, n(sd + "supportedLanguage"), n(sd + "SPARQL11Query")),
        ox.Triple(service, n(sd + "feature"), n(sd + "UnionDefaultGraph")),
        ox.Triple(service, n(sd + "defaultEntailmentRegime"), n("http://www.w3.org/ns/entailment/Simple")),
        ox.Triple(service, n(sd + "defaultSupportedEntailmentProfile"), n("http://www.w3.org/ns/owl-profile/RL")),
        ox.Triple(service, n("http://purl.org/dc/terms/title"), ox.Literal("kbq: deep-learning workloads and GPUs (read-only)")),
        ox.Triple(service, n(sd + "defaultDataset"), dataset),
        ox.Triple(dataset, rdf_type, n(sd + "Dataset")),
        ox.Triple(dataset, n(sd + "defaultGraph"), default),
        ox.Triple(default, rdf_type, n(sd + "Graph")),
        ox.Triple(default, n(void + "triples"), count(info.asserted + info.inferred)),
    ]
    for name in (
        "SPARQL_Results_JSON",
        "SPARQL_Results_XML",
        "SPARQL_Results_CSV",
        "SPARQL_Results_TSV",
        "Turtle",
        "N-Triples",
        "JSON-LD",
        "RDF_XML",
    ):
        triples.append(ox.Triple(service, n(sd + "resultFormat"), n(fm + name)))
    for iri, size in ((ASSERTED_GRAPH, info.asserted), (INFERRED_GRAPH, info.inferred)):
        named, graph = ox.BlankNode(), ox.BlankNode()
        triples += [
            ox.Triple(dataset, n(sd + "namedGraph"), named),
            ox.Triple(named, rdf_type, n(sd + "NamedGraph")),
            ox.Triple(named, n(sd + "name"), n(iri)),
            ox.Triple(named, n(sd + "graph"), graph),
            ox.Triple(graph, rdf_type, n(sd + "Graph")),
            ox.Triple(graph, n(void + "triples"), count(size)),
        ]
    prefixes = {"sd": sd, "formats": fm, "void": void} if fmt in ("ttl", "rdfxml") else None
    return ox.serialize(triples, format=_RDF_FORMATS[fmt], prefixes=prefixes) or b""


_check_small = functools.lru_cache(maxsize=1024)(check_query)
_big_checks = asyncio.Semaphore(2)  # guard passes over long queries run in at most two threads


async def guard(query: str, served: frozenset[str]) -> Checked:
    """The guard's verdict: cached for short queries (clients repeat them), and off the event
    loop for long ones (linear, but up to a few hundred ms for 100 KB)."""
    if len(query) <= 8192:
        return _check_small(query, served)
    async with _big_checks:
        return await asyncio.to_thread(check_query, query, served)


async def sparql_endpoint(request: Request) -> Response:
    """The query operation (GET or POST), or the service description when there is no query."""
    state: ServerState = request.app.state.kbq
    try:
        query = await read_query(request, state.config.max_query_length)
    except ProtocolError as exc:
        return failure(exc.status, exc.message, as_json=False)
    accept = request.headers.get("accept")
    if query is None:
        graph_media = ["text/turtle", "application/n-triples", "application/ld+json", "application/rdf+xml"]
        rdf = negotiate(accept, graph_media) or "text/turtle"
        body = service_description(state, str(request.url.replace(query="")), GRAPH_TYPES[rdf])
        return Response(body, media_type=_content_type(rdf), headers={"Vary": "Accept"})
    try:
        checked = await guard(query, state.served_graphs)
    except RefusedQuery as exc:
        return failure(400, str(exc), as_json=False)
    offers = RESULT_TYPES if checked.form in ("SELECT", "ASK") else GRAPH_TYPES
    media = negotiate(accept, list(offers))
    if media is None:
        return failure(406, f"cannot answer a {checked.form} query as '{accept}': offered " + ", ".join(offers), as_json=False)
    key = ("sparql", query, offers[media])
    headers = {"Vary": "Accept"}
    if (cached := state.cache.get(key)) is not None:
        return answer(state, cached, _content_type(media), headers, client=_client(request))
    job = {"op": "sparql", "query": query, "format": offers[media]}
    reply = await run_job(state, job, as_json=False)
    if isinstance(reply, Response):
        return reply
    if reply.status != 200:
        return failure(reply.status, str((reply.error or {}).get("error", "query failed")), as_json=False)
    state.cache.put(key, reply.body)
    return answer(state, reply.body, _content_type(media), headers, client=_client(request))
