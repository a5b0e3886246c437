"""`kbq serve` as a real process on 127.0.0.1, through SPARQLWrapper and raw HTTP (httpx).

The `limited` server runs without the workers' network sandbox, so the SERVICE/LOAD/FROM
tests prove that the guard alone stops the traffic; it has small limits (2 s, 2 workers,
2000 rows, 5000 characters, 6 queries admitted) so the limit tests are quick.
"""

from __future__ import annotations

import csv
import io
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pyoxigraph as ox
import pytest
from conftest import TINY_KB
from server_helpers import ServerProcess, children, cli_json, kbq_env, shared_kbq, start_kbq
from SPARQLWrapper import CSV, JSON, TURTLE, XML, SPARQLWrapper

from kbq.store.resources import INFERRED_GRAPH

pytestmark = pytest.mark.server

KBQ = "https://kbq.dev/ontology#"
COUNT_GPUS = f"SELECT (COUNT(?g) AS ?n) WHERE {{ ?g a <{KBQ}GPU> }}"
NAMES = f"SELECT ?g ?name WHERE {{ ?g a <{KBQ}GPU> ; <http://www.w3.org/2000/01/rdf-schema#label> ?name }} ORDER BY ?name"
CARTESIAN = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
LIMITED = (
    "--no-sandbox",
    "--timeout",
    "2",
    "--workers",
    "2",
    "--max-results",
    "2000",
    "--max-query-length",
    "5000",
    "--max-concurrent",
    "6",
    "--cors-origin",
    "http://allowed.example",
)


@pytest.fixture(scope="module")
def limited() -> ServerProcess:
    return shared_kbq(*LIMITED)


@pytest.fixture(scope="module")
def default() -> ServerProcess:
    return shared_kbq()


@pytest.fixture(scope="module")
def http(limited: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=limited.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def gpu_count() -> int:
    from kbq.api import KnowledgeBase

    kbq_env()
    return int(KnowledgeBase.default().table(COUNT_GPUS).rows[0][0])  # type: ignore[arg-type]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A socket on 127.0.0.1 that records whether anything connected to it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.settimeout(0.3)
        yield sock


def nothing_connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except TimeoutError:
        return True
    conn.close()
    return False


# --- protocol -----------------------------------------------------------------------------


def test_health(http: httpx.Client) -> None:
    body = http.get("/health").json()
    assert body["status"] == "ok" and body["workers"] == 2 and body["triples"] > 1000


def test_sparqlwrapper_json_xml_csv(limited: ServerProcess, gpu_count: int) -> None:
    for fmt in (JSON, XML, CSV):
        client = SPARQLWrapper(limited.url + "/sparql")
        client.setQuery(COUNT_GPUS)
        client.setReturnFormat(fmt)
        result: Any = client.query().convert()
        if fmt == JSON:
            count = result["results"]["bindings"][0]["n"]["value"]
        elif fmt == XML:
            count = result.getElementsByTagName("literal")[0].firstChild.data
        else:
            count = list(csv.reader(io.StringIO(result.decode())))[1][0]
        assert int(count) == gpu_count


def test_sparqlwrapper_post_ask_and_construct(limited: ServerProcess) -> None:
    client = SPARQLWrapper(limited.url + "/sparql")
    client.setMethod("POST")
    client.setQuery(f"ASK {{ ?g a <{KBQ}GPU> }}")
    client.setReturnFormat(JSON)
    answer: Any = client.query().convert()
    assert answer["boolean"] is True
    client.setQuery("CONSTRUCT WHERE { <https://kbq.dev/kb/TitanRTX> ?p ?o }")
    client.setReturnFormat(TURTLE)
    graph: Any = client.query().convert()
    assert "TitanRTX" in graph.decode()


def test_default_clients_get_rdf_xml_graphs(limited: ServerProcess) -> None:
    """SPARQLWrapper's and rdflib SPARQLStore's defaults for CONSTRUCT/DESCRIBE ask for RDF/XML."""
    from rdflib import BNode, Graph, URIRef
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    titan = URIRef("https://kbq.dev/kb/TitanRTX")
    client = SPARQLWrapper(limited.url + "/sparql")
    client.setQuery(f"DESCRIBE <{titan}>")  # no return format set: the library default (RDF/XML)
    graph: Any = client.query().convert()
    assert isinstance(graph, Graph) and len(graph) > 5 and (titan, None, None) in graph
    store = SPARQLStore(limited.url + "/sparql")  # rdflib's default for graphs is returnFormat="xml"
    constructed = store.query(f"CONSTRUCT WHERE {{ <{titan}> ?p ?o }}")
    triples = list(constructed.graph)  # type: ignore[arg-type]
    assert len(triples) > 5 and {t[0] for t in triples} == {titan}
    named = {t for t in triples if not isinstance(t[2], BNode)}  # blank nodes differ between two answers
    assert named and named <= set(graph)  # DESCRIBE holds the CONSTRUCT's triples (and more)


def test_get_form_and_direct_post_agree(http: httpx.Client) -> None:
    accept = {"Accept": "application/sparql-results+json"}
    got = http.get("/sparql", params={"query": NAMES}, headers=accept)
    form = http.post("/sparql", data={"query": NAMES}, headers=accept)
    direct = http.post("/sparql", content=NAMES, headers={**accept, "Content-Type": "application/sparql-query"})
    assert got.status_code == form.status_code == direct.status_code == 200
    assert got.headers["content-type"] == "application/sparql-results+json"
    assert got.json() == form.json() == direct.json()
    assert got.json()["head"]["vars"] == ["g", "name"]


@pytest.mark.parametrize(
    "media", ["application/sparql-results+json", "application/sparql-results+xml", "text/csv", "text/tab-separated-values"]
)
def test_select_media_types(http: httpx.Client, media: str, gpu_count: int) -> None:
    response = http.post("/sparql", data={"query": NAMES}, headers={"Accept": media})
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] == media
    assert "Accept" in response.headers["vary"]
    if media == "text/csv":
        assert len(list(csv.reader(io.StringIO(response.text)))) == gpu_count + 1
    else:
        fmt = {"json": ox.QueryResultsFormat.JSON, "xml": ox.QueryResultsFormat.XML}.get(
            media.rsplit("+", 1)[-1], ox.QueryResultsFormat.TSV
        )
        assert len(list(ox.parse_query_results(response.content, format=fmt))) == gpu_count  # type: ignore[arg-type]


@pytest.mark.parametrize("media", ["text/turtle", "application/n-triples", "application/ld+json", "application/rdf+xml"])
def test_construct_media_types(http: httpx.Client, media: str) -> None:
    query = "CONSTRUCT WHERE { <https://kbq.dev/kb/TitanRTX> ?p ?o }"
    response = http.post("/sparql", data={"query": query}, headers={"Accept": media})
    assert response.status_code == 200 and response.headers["content-type"].split(";")[0] == media
    triples = list(ox.parse(response.content, format=ox.RdfFormat.from_media_type(media)))
    assert len(triples) > 5 and all(t.subject == ox.NamedNode("https://kbq.dev/kb/TitanRTX") for t in triples)


def test_ask_result(http: httpx.Client) -> None:
    response = http.get("/sparql", params={"query": "ASK { ?s ?p ?o }"})
    assert response.json() == {"head": {}, "boolean": True}


def test_service_description(http: httpx.Client, limited: ServerProcess) -> None:
    response = http.get("/sparql")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/turtle")
    store = ox.Store()
    store.load(response.content, format=ox.RdfFormat.TURTLE)
    sd = "http://www.w3.org/ns/sparql-service-description#"
    row: Any = list(
        store.query(
            f"SELECT ?e WHERE {{ ?s a <{sd}Service> ; <{sd}endpoint> ?e ; "  # type: ignore[arg-type]
            f"<{sd}supportedLanguage> <{sd}SPARQL11Query> }}"
        )
    )
    assert row[0]["e"] == ox.NamedNode(limited.url + "/sparql")
    found: Any = store.query(f"SELECT ?f WHERE {{ ?s <{sd}resultFormat> ?f }}")
    formats = {s["f"].value for s in found}
    assert "http://www.w3.org/ns/formats/SPARQL_Results_TSV" in formats
    assert INFERRED_GRAPH in response.text


def test_status_codes(http: httpx.Client) -> None:
    bad = http.get("/sparql", params={"query": "SELECT * WHERE { ?s ?p }"})
    assert bad.status_code == 400 and "syntax error" in bad.text
    assert http.get("/sparql", params={"query": NAMES}, headers={"Accept": "text/html"}).status_code == 406
    assert http.post("/sparql", content=NAMES, headers={"Content-Type": "text/plain"}).status_code == 415
    put = http.put("/sparql", content=NAMES)
    assert put.status_code == 405 and "POST" in put.headers.get("allow", "")
    assert http.delete("/sparql").status_code == 405
    both = http.post("/sparql?query=ASK%7B%7D", content="ASK {}", headers={"Content-Type": "application/sparql-query"})
    assert both.status_code == 400


@pytest.mark.parametrize("param", ["default-graph-uri", "named-graph-uri"])
def test_dataset_parameters_refused(http: httpx.Client, param: str) -> None:
    response = http.get("/sparql", params={"query": NAMES, param: INFERRED_GRAPH})
    assert response.status_code == 400 and "always queries its own graphs" in response.text


def test_updates_refused(http: httpx.Client) -> None:
    update = "INSERT DATA { <urn:a> <urn:b> <urn:c> }"
    for response in (
        http.post("/sparql", data={"update": update}),
        http.post("/sparql", content=update, headers={"Content-Type": "application/sparql-update"}),
        http.get("/sparql", params={"query": update}),
    ):
        assert response.status_code == 400 and "read-only" in response.text
    assert http.get("/sparql", params={"query": "ASK { <urn:a> <urn:b> <urn:c> }"}).json()["boolean"] is False


# --- no outbound traffic ------------------------------------------------------------------


def test_service_load_from_never_connect(http: httpx.Client, listener: socket.socket) -> None:
    target = f"http://127.0.0.1:{listener.getsockname()[1]}/sparql"
    queries = [
        f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ SERVICE SILENT <{target}> {{ ?s ?p ?o }} }}",
        f"select * where {{ bind(<{target}> as ?u) service ?u {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o }} # x\rSERVICE <{target}> {{ ?a ?b ?c }}",
        f"LOAD <{target}>",
        f"SELECT * FROM <{target}> WHERE {{ ?s ?p ?o }}",
        f"SELECT * FROM NAMED <{target}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
        "SELECT * FROM <file:///etc/passwd> WHERE { ?s ?p ?o }",
    ]
    for query in queries:
        response = http.post("/sparql", data={"query": query})
        assert response.status_code == 400, query
        assert "refused" in response.text
    assert nothing_connected(listener)


def test_listener_sees_an_unguarded_service_call(listener: socket.socket) -> None:
    """The control: pyoxigraph itself does connect to a SERVICE IRI, so the listener tests can fail."""
    target = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    listener.settimeout(10)
    query = f"SELECT * {{ SERVICE SILENT <{target}> {{ ?s ?p ?o }} }}"
    thread = threading.Thread(target=lambda: list(ox.Store().query(query)), daemon=True)  # type: ignore[arg-type]
    thread.start()
    assert not nothing_connected(listener)


def test_service_in_comment_or_string_is_not_refused(http: httpx.Client, listener: socket.socket) -> None:
    target = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    query = f'SELECT ?x WHERE {{ BIND("SERVICE <{target}> {{ }}" AS ?x) }} # SERVICE <{target}> {{ }}'
    response = http.post("/sparql", data={"query": query}, headers={"Accept": "application/sparql-results+json"})
    assert response.status_code == 200
    assert response.json()["results"]["bindings"][0]["x"]["value"].startswith("SERVICE")
    assert nothing_connected(listener)


def test_from_a_served_graph_selects_it(http: httpx.Client) -> None:
    query = f"SELECT (COUNT(*) AS ?n) FROM <{INFERRED_GRAPH}> WHERE {{ ?s ?p ?o }}"
    inferred = int(http.post("/sparql", data={"query": query}).json()["results"]["bindings"][0]["n"]["value"])
    everything = int(
        http.post("/sparql", data={"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"}).json()["results"]["bindings"][0]["n"][
            "value"
        ]
    )
    assert 0 < inferred < everything

    def count(graph: str) -> int:
        answer = http.post("/sparql", data={"query": query.replace("inferred", graph)}).json()
        return int(answer["results"]["bindings"][0]["n"]["value"])

    assert inferred == http.get("/health").json()["triples"] - count("asserted")


def test_worker_sandbox_has_no_network(listener: socket.socket) -> None:
    """Second line of defence: a worker enters an empty network namespace when the OS allows it."""
    port = listener.getsockname()[1]
    code = (
        "import socket, sys\nfrom kbq.serve.worker import _isolate_network\n"
        "if not _isolate_network(): sys.exit(3)\n"
        f"socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    if done.returncode == 3:
        pytest.skip("this OS refuses new network namespaces (no root, no unprivileged user namespaces)")
    assert done.returncode != 0 and ("unreachable" in done.stderr or "OSError" in done.stderr)
    assert nothing_connected(listener)


# --- limits -------------------------------------------------------------------------------


def test_cartesian_query_times_out_and_others_keep_answering(http: httpx.Client, limited: ServerProcess) -> None:
    before = children(limited.proc.pid)
    assert len(before) == 2
    slow: dict[str, object] = {}

    def run_slow() -> None:
        start = time.monotonic()
        response = httpx.post(limited.url + "/sparql", data={"query": CARTESIAN}, timeout=30)
        slow.update(status=response.status_code, text=response.text, seconds=time.monotonic() - start)

    thread = threading.Thread(target=run_slow)
    thread.start()
    time.sleep(0.3)
    start = time.monotonic()
    quick = http.post("/sparql", data={"query": COUNT_GPUS})
    assert quick.status_code == 200 and time.monotonic() - start < 1.5
    thread.join(30)
    assert slow["status"] == 503 and "2 s limit" in str(slow["text"])
    assert float(slow["seconds"]) < 5  # type: ignore[arg-type]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (len(children(limited.proc.pid)) != 2 or http.get("/health").json()["workers"] != 2):
        time.sleep(0.1)
    after = children(limited.proc.pid)
    assert len(after) == 2 and len(before - after) == 1  # the busy worker was killed and replaced
    assert http.post("/sparql", data={"query": COUNT_GPUS}).status_code == 200


def test_full_queue_gets_503_with_retry_after(limited: ServerProcess, http: httpx.Client) -> None:
    with ThreadPoolExecutor(10) as pool:
        responses = list(
            pool.map(lambda _: httpx.post(limited.url + "/sparql", data={"query": CARTESIAN}, timeout=30), range(10))
        )
    assert all(r.status_code == 503 for r in responses)
    busy = [r for r in responses if "busy" in r.text]
    assert len(busy) >= 4 and all(r.headers.get("retry-after") == "1" for r in busy)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and http.get("/health").json()["workers"] != 2:
        time.sleep(0.1)
    assert http.post("/sparql", data={"query": COUNT_GPUS}).status_code == 200


def test_query_length_limit(http: httpx.Client) -> None:
    huge = "SELECT * WHERE { ?s ?p ?o } #" + "x" * 6000
    assert http.get("/sparql", params={"query": huge}).status_code == 413
    assert http.post("/sparql", data={"query": huge}).status_code == 413
    assert http.post("/sparql", content="x" * 100_000, headers={"Content-Type": "application/sparql-query"}).status_code == 413
    assert http.get("/ask", params={"q": "gpu for lstm " + "x" * 6000}).status_code == 413


def test_result_size_limit(http: httpx.Client) -> None:
    response = http.post("/sparql", data={"query": "SELECT * WHERE { ?s ?p ?o }"})
    assert response.status_code == 400 and "more than 2000 rows" in response.text
    assert http.post("/sparql", data={"query": "CONSTRUCT WHERE { ?s ?p ?o }"}).status_code == 400
    assert http.post("/sparql", data={"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 2000"}).status_code == 200


# --- /ask ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question", ["best gpu for bert on dense 9-card chassis as of 2020-03", "compare rtx 2080 ti and titan rtx"]
)
def test_ask_matches_the_command(http: httpx.Client, question: str) -> None:
    expected = cli_json(question)
    assert http.get("/ask", params={"q": question}).json() == expected
    assert http.post("/ask", data={"q": question}).json() == expected
    assert http.post("/ask", json={"q": question}).json() == expected
    assert http.post("/ask", content=question, headers={"Content-Type": "text/plain"}).json() == expected
    assert list(expected) == [
        "question", "read_as", "headline", "kind", "columns", "rows", "units", "sparql", "explanation",
        "removed", "verdict", "recommended", "tiers", "numbers", "extra",
    ]  # fmt: skip
    assert expected["headline"] and expected["headline"] == http.get("/ask", params={"q": question}).json()["headline"]


def test_ask_carries_the_verdict(http: httpx.Client) -> None:
    body = http.get("/ask", params={"q": "does llama 3.1 70b fit on rtx 4090"}).json()
    assert body["verdict"]["status"] == "does not fit" and body["verdict"]["fits"] is False
    assert body["headline"].startswith("does not fit: ")


def test_ask_error_has_column_and_suggestions(http: httpx.Client) -> None:
    response = http.get("/ask", params={"q": "gpu for lstm where coolin=blower"})
    assert response.status_code == 400
    body = response.json()
    assert body["column"] == 20 and "cooling" in body["suggestions"] and "unknown key 'coolin'" in body["error"]
    assert "^" in body["detail"] and set(body) >= {"error", "column", "expected", "suggestions"}


def test_ask_no_result_is_200_with_a_message(http: httpx.Client) -> None:
    response = http.get("/ask", params={"q": "gpus where memory >= 2000gb"})
    assert response.status_code == 200
    body = response.json()
    assert body["rows"] == [] and body["kind"] == "gpus" and "no GPU meets every constraint" in body["message"]


def test_ask_bad_requests(http: httpx.Client) -> None:
    assert http.get("/ask").status_code == 400
    assert http.post("/ask", content="q=x", headers={"Content-Type": "image/png"}).status_code == 415
    assert http.post("/ask", content="[1]", headers={"Content-Type": "application/json"}).status_code == 400


# --- page, CORS, logs ---------------------------------------------------------------------


def test_page_and_assets_are_local(default: ServerProcess) -> None:
    page = httpx.get(default.url + "/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    assert "http://" not in page.text and "https://" not in page.text
    for asset, media in (("kbq.js", "javascript"), ("kbq.css", "text/css")):
        response = httpx.get(f"{default.url}/static/{asset}")
        assert response.status_code == 200 and media in response.headers["content-type"]


def test_cors_off_by_default(default: ServerProcess) -> None:
    response = httpx.get(default.url + "/sparql", params={"query": "ASK {}"}, headers={"Origin": "http://a.example"})
    assert response.status_code == 200 and "access-control-allow-origin" not in response.headers


def test_cors_listed_origin_only(http: httpx.Client) -> None:
    allowed = http.get("/sparql", params={"query": "ASK {}"}, headers={"Origin": "http://allowed.example"})
    assert allowed.headers.get("access-control-allow-origin") == "http://allowed.example"
    other = http.get("/sparql", params={"query": "ASK {}"}, headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    preflight = http.options("/sparql", headers={"Origin": "http://allowed.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 200


def test_access_log_has_query_time(default: ServerProcess) -> None:
    httpx.get(default.url + "/sparql", params={"query": "ASK {}"})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and '"GET /sparql" 200' not in default.log_text():
        time.sleep(0.05)
    line = next(x for x in default.log_text().splitlines() if '"GET /sparql" 200' in x)
    assert "kbq.access" in line and line.endswith("ms")


def test_serve_help_starts() -> None:
    done = subprocess.run([sys.executable, "-m", "kbq", "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--max-concurrent" in done.stdout and "--cors-origin" in done.stdout


# --- process lifecycle --------------------------------------------------------------------


def wait_gone(pids: set[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text() for pid in pids):
            return True
        time.sleep(0.05)
    return False


def test_sigterm_during_a_long_query_stops_everything() -> None:
    server = start_kbq("--workers", "1", "--timeout", "60", "--no-sandbox")
    try:
        workers = children(server.proc.pid)
        thread = threading.Thread(
            target=lambda: httpx.post(server.url + "/sparql", data={"query": CARTESIAN}, timeout=60), daemon=True
        )
        thread.start()
        time.sleep(0.5)
        start = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=15) is not None and time.monotonic() - start < 10
        assert wait_gone(workers, 5)
    finally:
        server.stop()


def test_workers_die_with_a_killed_server() -> None:
    server = start_kbq("--workers", "1", "--no-sandbox")
    workers = children(server.proc.pid)
    server.proc.kill()
    server.proc.wait()
    assert workers and wait_gone(workers, 5)


def test_overlay_is_served(tmp_path: Path, default: ServerProcess) -> None:
    overlay = tmp_path / "mine.ttl"
    overlay.write_text(
        "@prefix kb: <https://kbq.dev/kb/> .\n@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        'kb:TitanRTX skos:altLabel "the lab titan" .\n'
    )
    # over the tests' tiny KB (KBQ_DATA_DIR): the same overlay build, from a base of a second
    server = start_kbq("--kb", str(overlay), "--workers", "1", env={"KBQ_DATA_DIR": str(TINY_KB)})
    try:
        response = httpx.get(server.url + "/ask", params={"q": "describe the lab titan"}, timeout=30)
        assert response.status_code == 200 and response.json()["kind"] == "describe"
        assert httpx.get(default.url + "/ask", params={"q": "describe the lab titan"}).status_code == 400
    finally:
        server.stop()
