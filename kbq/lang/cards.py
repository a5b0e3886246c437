"""One card as a buyer reads it: `describe GPU` with units and the essentials first (memory,
bandwidth, tensor rates, price with kind and date, power: kbq:describeOrder), measured results
grouped at the end; and what `compare` adds to its table (ratios, prices with kind and date,
measured results). Prices follow the one price rule (kbq.lang.evaluate.cost.PRICE_RULE)."""

from __future__ import annotations

from typing import Any

from kbq.lang import terms
from kbq.lang.catalog import PREFIXES, Catalog, Key, Run
from kbq.store.executor import Value

MEASURED = "(is accelerator of)"  # describe's label for the results measured on a card
PRICE_KEYS = {"price": False, "used_price": True}  # key -> used?
HIDDEN_KEYS = ("price_date",)  # shown inside the price line


def prices(run: Run, gpus: list[str], before: str | None = None) -> dict[tuple[str, bool], dict[str, Any]]:
    """(GPU, used?) -> its price by the one price rule (the latest observation before `before`,
    the lowest that day), new and used apart: {usd, kind, date, source}."""
    if not gpus:
        return {}
    values = " ".join(terms.iri(g) for g in gpus)
    dated = f"FILTER(?date < {terms.date(before)})" if before else ""
    rows = run(
        PREFIXES
        + f"""SELECT ?gpu ?used ?usd ?kind ?date ?source WHERE {{ VALUES ?gpu {{ {values} }}
  ?po kbq:priceOf ?gpu ; kbq:priceKind ?k ; kbq:priceUsd ?usd ; kbq:observedOn ?date . ?k rdfs:label ?kind .
  OPTIONAL {{ ?po dcterms:source ?source }}
  BIND(?k = kb:UsedPrice AS ?used) {dated}
}} ORDER BY ?gpu ?used DESC(?date) ?usd ?source"""
    ).rows
    out: dict[tuple[str, bool], dict[str, Any]] = {}
    for gpu, used, usd, kind, date, source in rows:
        key = (str(gpu), bool(used))
        if key not in out and isinstance(usd, (int, float)):
            out[key] = {"usd": float(usd), "kind": str(kind), "date": str(date), "source": str(source) if source else None}
    return out


def price_text(price: dict[str, Any] | None) -> str | None:
    """'$2,200 street price 2026-02-01'."""
    if not price:
        return None
    return f"${price['usd']:,.0f} {price['kind']} {price['date']}"


def _essentials(run: Run) -> dict[str, int]:
    rows = run(PREFIXES + "SELECT ?key ?order WHERE { ?p kbq:queryKey ?key ; kbq:describeOrder ?order }").rows
    return {str(k): int(o) for k, o in rows if isinstance(o, (int, float))}


def _key_values(run: Run, gpu: str, catalog: Catalog) -> dict[str, list[Value]]:
    rows = run(
        PREFIXES + f"SELECT ?p ?value ?label WHERE {{ {terms.iri(gpu)} ?p ?value . OPTIONAL {{ ?value rdfs:label ?label }} }}"
    ).rows
    found: dict[str, list[Value]] = {}
    for p, value, label in rows:
        key = catalog.keys_by_iri.get(str(p))
        if key is not None:
            shown = label if label is not None else value
            if shown not in found.setdefault(key.key, []):
                found[key.key].append(shown)
    return found


def _one(values: list[Value]) -> Value:
    ordered = sorted(values, key=str)
    return ordered[0] if len(ordered) == 1 else ", ".join(map(str, ordered))


def ordered_keys(catalog: Catalog, present: set[str], run: Run) -> list[Key]:
    """The GPU keys present, essentials first (kbq:describeOrder), then by display order."""
    first = _essentials(run)
    keys = [k for k in catalog.gpu_keys() if k.key in present and k.key not in HIDDEN_KEYS]
    return sorted(keys, key=lambda k: (0, first[k.key]) if k.key in first else (1, 0))


def describe_gpu(gpu: str, generic: list[list[Value]], catalog: Catalog, run: Run) -> tuple[list[list[Value]], str]:
    """Rows [attribute, value, unit] of one GPU, and its one-line summary (the headline)."""
    values = _key_values(run, gpu, catalog)
    priced = prices(run, [gpu])
    rows: list[list[Value]] = []
    summary: list[str] = []
    essentials = _essentials(run)
    for key in ordered_keys(catalog, set(values), run):
        if key.key in PRICE_KEYS:
            text = price_text(priced.get((gpu, PRICE_KEYS[key.key])))
            rows.append([key.label, text or _one(values[key.key]), "" if text else key.unit_symbol])
        else:
            rows.append([key.label, _one(values[key.key]), key.unit_symbol])
        if key.key in essentials and key.key in ("memory", "bandwidth", "tensor", "price", "tdp"):
            value, unit = rows[-1][1], rows[-1][2]
            summary.append(f"{value}{' ' + str(unit) if unit else ''}" + (" tensor" if key.key == "tensor" else ""))
    labels = {k.label for k in catalog.gpu_keys()}
    measured = [r for r in generic if r[0] == MEASURED]
    rows += [[r[0], r[1], ""] for r in generic if r[0] != MEASURED and r[0] not in labels]
    rows += [["measured", r[1], ""] for r in measured]
    return rows, f"{catalog.label(gpu)}: " + ", ".join(summary)


def compare_ratios(rows: list[list[Value]], n: int) -> list[list[Value]]:
    """With two GPUs, a 'ratio' column (first / second) on every row of a quantity with a unit."""
    if n != 2:
        return rows
    out = []
    for row in rows:
        a, b = row[1], row[2]
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
        numeric = numeric and str(row[0]).endswith(")")  # a quantity with a unit, not a version or a count of kinds
        ratio = round(a / b, 2) if numeric and b else None  # type: ignore[operator]
        out.append([*row, ratio])
    return out


def compare_prices(gpus: list[str], run: Run) -> list[list[Value]]:
    """Rows 'price (kind, date)' and 'used price (kind, date)' for the GPUs compared."""
    found = prices(run, gpus)
    rows: list[list[Value]] = []
    for label, used in (("price (kind, date)", False), ("used price (kind, date)", True)):
        cells: list[Value] = [price_text(found.get((g, used))) for g in gpus]
        if any(cells):
            rows.append([label, *cells])
    return rows


def compare_measured(gpus: list[str], run: Run) -> list[list[Value]]:
    """How many measured results each GPU has in the KB (describe lists them)."""
    values = " ".join(terms.iri(g) for g in gpus)
    found = run(
        PREFIXES + f"SELECT ?gpu (COUNT(DISTINCT ?r) AS ?n) WHERE {{ VALUES ?gpu {{ {values} }} ?r kbq:accelerator ?gpu }}"
        " GROUP BY ?gpu"
    ).rows
    counts: dict[str, Value] = {str(g): n for g, n in found}
    return [["measured results", *[counts.get(g, 0) for g in gpus]]]
