// The kbq page: ask /ask (kbq language) or /sparql (SPARQL), show the answer as a chart (charts.js)
// and a table.
// Plain DOM, no framework; every value is written with textContent (never as HTML).
"use strict";

// The questions people ask first (can my GPU run X, how much memory, how fast, cheapest, best
// value), then the rest of the language.
const EXAMPLES = [
  "does llama 3.1 8b fit on rtx 4090",
  "memory for llama 3.1 70b inference at fp8 with 128k context batch 4 on 4 x h100 sxm5",
  "how fast is llama 3.1 8b on rtx 4090",
  "cheapest gpu to run llama 3.1 8b",
  "best value gpu for resnet-50 training under $2000",
  "gpu for llama 3.1 8b inference",
  "is rtx 3090 good for llama 3.1 8b inference",
  "compare rtx 4090 vs rtx 3090",
  "how many h100 sxm5 for llama 3.1 405b inference",
  "best gpu for bert on dense 9-card chassis as of 2020-03",
  "gpus order by tensor / price desc limit 10",
  "gpu for lstm where cooling=blower",
  "gpus where memory >= 24gb and nvlink = yes order by bandwidth desc limit 5",
  "gpu for llama 3.1 70b inference at int4 in an 8-card server",
  "gpu for resnet-50 training on a 4-gpu workstation",
  "compare rtx 2080 ti and titan rtx",
  "describe quadro rtx 8000",
  "why quadro rtx 8000 for bert",
  "frameworks for rnn",
  "sdks for inference",
  "applications of gan",
  "requirements for lstm",
  "keys",
  "SELECT ?name ?memory WHERE { ?g a <https://kbq.dev/ontology#GPU> ; " +
    "<http://www.w3.org/2000/01/rdf-schema#label> ?name ; <https://kbq.dev/ontology#memory> ?memory } " +
    "ORDER BY DESC(?memory) LIMIT 5",
];
const HIDDEN = new Set(["gpu", "item"]); // IRI columns: the name column says the same
// SPARQL starts with a keyword; `describe NAME` is kbq, `DESCRIBE <iri>` / `?x` / `p:x` is SPARQL.
const SPARQL_START = /^\s*(?:#[^\n]*\n\s*)*(?:(?:PREFIX|BASE|SELECT|ASK|CONSTRUCT)\b|DESCRIBE\s+(?:[<?$*]|[\w.-]*:))/i;

const $ = (id) => document.getElementById(id);

function el(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function describeLink(name) {
  const question = "describe " + name;
  const a = el("a", name, { href: "?q=" + encodeURIComponent(question), class: "describe" });
  a.dataset.q = question;
  return a;
}

function cellText(value) {
  if (value === null || value === undefined) return "-";
  if (value === true) return "yes";
  if (value === false) return "no";
  return String(value);
}

// Text with its URLs as links (http and https only; every piece written as text, never as HTML).
function linked(tag, text) {
  const node = el(tag);
  let last = 0;
  for (const match of String(text).matchAll(/https?:\/\/[^\s,;)\]]+/g)) {
    node.append(document.createTextNode(text.slice(last, match.index)));
    node.append(el("a", match[0], { href: match[0], rel: "noreferrer noopener", target: "_blank" }));
    last = match.index + match[0].length;
  }
  node.append(document.createTextNode(text.slice(last)));
  return node;
}

// Click a column head to sort by it (numbers as numbers, unknown last); again to reverse.
function sortable(table) {
  table.tHead.querySelectorAll("th").forEach((th, column) => {
    th.classList.add("sortable");
    th.setAttribute("aria-sort", "none");
    th.addEventListener("click", (event) => {
      if (event.target.closest("a")) return;
      const up = th.getAttribute("aria-sort") !== "ascending";
      table.tHead.querySelectorAll("th").forEach((h) => h.setAttribute("aria-sort", "none"));
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      const body = table.tBodies[0];
      const key = (tr) => {
        const text = tr.children[column].textContent.trim();
        const n = Number(text.replace(/,/g, ""));
        return text === "-" || text === "" ? null : Number.isFinite(n) ? n : text.toLowerCase();
      };
      const rows = [...body.rows].map((tr, i) => [key(tr), i, tr]);
      rows.sort((a, b) => {
        if (a[0] === null || b[0] === null) return a[0] === b[0] ? a[1] - b[1] : a[0] === null ? 1 : -1;
        const order = typeof a[0] === "number" && typeof b[0] === "number" ? a[0] - b[0] : String(a[0]).localeCompare(String(b[0]));
        return (up ? order : -order) || a[1] - b[1];
      });
      body.append(...rows.map((r) => r[2]));
    });
  });
}

function reset() {
  for (const id of ["error", "message", "answer", "graph"]) $(id).hidden = true;
  $("headline").textContent = "";
  $("tiers").replaceChildren();
  $("error").textContent = "";
  $("message").textContent = "";
  $("graph").textContent = "";
  $("explanation").replaceChildren();
  $("sparql").textContent = "";
  $("sparql-box").hidden = false;
  $("chart").replaceChildren();
  $("results").tHead.replaceChildren();
  $("results").tBodies[0].replaceChildren();
}

function showError(payload) {
  const box = $("error");
  const parts = [payload.detail || payload.error || "the query failed"];
  if (!payload.detail && payload.expected && payload.expected.length) parts.push("expected: " + payload.expected.join(", "));
  if (!payload.detail && payload.suggestions && payload.suggestions.length) {
    parts.push("did you mean " + payload.suggestions.join(" or ") + "?");
  }
  box.textContent = parts.join("\n");
  box.hidden = false;
}

function fillTable(headers, rows, linkColumn, linkHeaders) {
  const head = el("tr");
  headers.forEach((h, i) => {
    const th = el("th");
    if (linkHeaders && i > 0) th.append(describeLink(h)); else th.textContent = h;
    head.append(th);
  });
  $("results").tHead.replaceChildren(head);
  const body = $("results").tBodies[0];
  for (const row of rows) {
    const tr = el("tr");
    row.forEach((value, i) => {
      const td = el("td");
      if (i === linkColumn && value !== null) td.append(describeLink(String(value)));
      else td.textContent = cellText(value);
      if (typeof value === "number") td.className = "num";
      tr.append(td);
    });
    body.append(tr);
  }
  sortable($("results"));
  $("answer").hidden = false;
}

function showAnswer(data) {
  const keep = data.columns.map((c, i) => i).filter((i) => !HIDDEN.has(data.columns[i]));
  const shown = keep.length ? keep : data.columns.map((c, i) => i);
  const units = data.units || {};
  const headers = shown.map((i) => data.columns[i] + (units[data.columns[i]] ? ` (${units[data.columns[i]]})` : ""));
  const hasGpu = data.columns.includes("gpu");
  const linkColumn = hasGpu ? shown.indexOf(data.columns.indexOf("name")) : -1;
  fillTable(headers, data.rows.map((r) => shown.map((i) => r[i])), linkColumn, data.kind === "compare");
  const chart = KbqCharts.draw(data); // charts.js: the answer's chart spec drawn as SVG, if it has one
  if (chart) $("chart").append(chart);
  for (const line of data.explanation || []) {
    if (line !== data.headline) $("explanation").append(linked("li", line));
  }
  if (data.tiers && data.tiers.length) {
    // the picks a buyer weighs, before the full ranking
    const table = el("table", null, { class: "tiers" });
    const head = el("tr");
    for (const h of ["tier", "GPU", "cards", "price", "why"]) head.append(el("th", h));
    table.append(el("thead")); table.tHead.append(head);
    const body = el("tbody");
    for (const t of data.tiers) {
      const tr = el("tr", null, { title: t.why });
      const amount = t.price && t.price.per === "hour" ? `$${t.price.usd.toFixed(2)}/h` : t.price ? `$${Math.round(t.price.usd).toLocaleString("en-US")}` : "";
      const price = t.price ? `${amount} ${t.price.kind} ${String(t.price.date || "").slice(0, 7)}` : "-";
      tr.append(el("td", t.tier));
      const gpu = el("td"); gpu.append(describeLink(t.gpu)); tr.append(gpu);
      tr.append(el("td", cellText(t.count), { class: "num" }));
      tr.append(el("td", price));
      tr.append(el("td", t.why));
      body.append(tr);
    }
    table.append(body);
    $("tiers").append(table);
  }
  if (data.headline) {
    // the answer first: the headline above the chart, scrolled to, the examples folded away
    $("headline").textContent = data.headline;
    $("headline").className = "headline" + (data.verdict ? " verdict-" + String(data.verdict.status).replace(/\s+/g, "-") : "");
    $("examples").open = false;
    $("headline").scrollIntoView({ block: "start" });
  }
  $("sparql").textContent = data.sparql || "";
  if (data.message) {
    $("message").textContent = "No result: " + data.message;
    $("message").hidden = false;
  }
}

function termText(term) {
  if (!term) return null;
  if (term.type === "bnode") return "_:" + term.value;
  return term.value;
}

function showSparqlResults(data, query) {
  $("sparql").textContent = query;
  if (typeof data.boolean === "boolean") {
    fillTable(["answer"], [[data.boolean]], -1, false);
    return;
  }
  const vars = data.head.vars || [];
  const rows = data.results.bindings.map((b) => vars.map((v) => termText(b[v])));
  fillTable(vars, rows, -1, false);
}

async function readError(response) {
  const type = response.headers.get("content-type") || "";
  if (type.includes("json")) {
    try { return await response.json(); } catch (e) { /* fall through to text */ }
  }
  const text = await response.text();
  return { error: text.trim() || `${response.status} ${response.statusText}` };
}

async function run(text) {
  reset();
  const query = text.trim();
  if (!query) return;
  $("status").textContent = "running…";
  const started = performance.now();
  try {
    let response;
    if (SPARQL_START.test(query)) {
      response = await fetch("sparql", {
        method: "POST",
        headers: { "Content-Type": "application/sparql-query", Accept: "application/sparql-results+json, text/turtle;q=0.9" },
        body: query,
      });
      if (!response.ok) { showError(await readError(response)); return; }
      if ((response.headers.get("content-type") || "").includes("json")) showSparqlResults(await response.json(), query);
      else { $("graph").textContent = await response.text(); $("graph").hidden = false; }
    } else {
      response = await fetch("ask?q=" + encodeURIComponent(query), { headers: { Accept: "application/json" } });
      if (!response.ok) { showError(await readError(response)); return; }
      showAnswer(await response.json());
    }
  } catch (err) {
    showError({ error: "cannot reach the kbq server: " + err });
  } finally {
    $("status").textContent = `${Math.round(performance.now() - started)} ms`;
  }
}

function go(text) {
  $("q").value = text;
  history.pushState(null, "", "?q=" + encodeURIComponent(text));
  run(text);
}

function fromLocation() {
  const q = new URLSearchParams(location.search).get("q");
  if (q) { $("q").value = q; run(q); }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const example of EXAMPLES) {
    const a = el("a", example.length > 60 ? example.slice(0, 57) + "…" : example, { href: "?q=" + encodeURIComponent(example), title: example });
    a.addEventListener("click", (event) => { event.preventDefault(); go(example); });
    const item = el("li");
    item.append(a);
    $("example-list").append(item);
  }
  $("ask-form").addEventListener("submit", (event) => { event.preventDefault(); go($("q").value); });
  $("q").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); go($("q").value); }
  });
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a.describe");
    if (link) { event.preventDefault(); go(link.dataset.q); }
  });
  window.addEventListener("popstate", fromLocation);
  fromLocation();
});
