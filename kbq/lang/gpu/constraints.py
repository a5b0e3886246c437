"""Conditions on GPUs: where-expressions, qualifiers, placement (chassis, cards, cooling,
airflow, power), dates, precision support and price ceilings. Each is a self-contained SPARQL
expression over ?gpu, with its words for explanations; figures that are not sourced make a row
'unverified' (a Status) rather than removing it."""

from __future__ import annotations

import datetime
import re

from kbq.lang import ast, sparql, terms
from kbq.lang.catalog import Key, Term
from kbq.lang.context import Constraint, Context, Status
from kbq.lang.gpu.columns import CURRENT_PRICE, price_test
from kbq.lang.words import GPU, GPU_FAMILY, Ceiling, Chassis

_TRUE = {"yes", "true", "y", "1"}
_FALSE = {"no", "false", "n", "0"}
NAME_KEY = "name"  # `where name in (a100, h100)`: GPUs by their names


double = sparql.double  # kept under its old name for the modules that cast through constraints


# --- dates -------------------------------------------------------------------------------------


def date_bounds(ctx: Context, text: str, column: int) -> tuple[str, str]:
    """[first day, first day after] of a year, month or day (years 1000-9998)."""
    try:
        if re.fullmatch(r"\d{4}", text):
            year = int(text)
            if not 1000 <= year <= 9998:
                raise ValueError
            return f"{year:04d}-01-01", f"{year + 1:04d}-01-01"
        if re.fullmatch(r"\d{4}-\d{2}", text):
            start = datetime.date.fromisoformat(text + "-01")
            if start.year > 9998:
                raise ValueError
            nxt = (start.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)
            return start.isoformat(), nxt.isoformat()
        day = datetime.date.fromisoformat(text)
        if day.year > 9998:
            raise ValueError
        return day.isoformat(), (day + datetime.timedelta(days=1)).isoformat()
    except (ValueError, OverflowError):
        raise ctx.error(f"'{text}' is not a date kbq can use (YYYY, YYYY-MM or YYYY-MM-DD, years 1000-9998)", column) from None


def as_of(ctx: Context, text: str, column: int) -> tuple[Constraint, str]:
    _first, after = date_bounds(ctx, text, column)
    return (
        # Written as 'no release date on or after', which equals 'released before' since a GPU has exactly one
        # release date (shapes.ttl): Virtuoso 7.2 drops an EXISTS whose inner FILTER compares dates when the
        # candidates' pattern is repeated in the ranking's aggregate subselect (seen on the 1,000-model KB).
        Constraint(
            f"as of {text}: released before {after}",
            f"NOT EXISTS {{ ?gpu kbq:releaseDate ?x FILTER(?x >= {terms.date(after)}) }}",
        ),
        after,
    )


# --- where ---------------------------------------------------------------------------------------


def where(ctx: Context, node: ast.Expr) -> list[Constraint]:
    """Top-level conjuncts become separate constraints (so --explain can say which removed what)."""
    if isinstance(node, ast.And):
        return [c for item in node.items for c in where(ctx, item)]
    test, words = expr(ctx, node)
    return [Constraint(words, test)]


def expr(ctx: Context, node: ast.Expr) -> tuple[str, str]:
    if isinstance(node, ast.Comparison):
        return comparison(ctx, node.left, node.op, node.value), f"{node.left.text} {node.op} {node.value.text}"
    if isinstance(node, ast.Membership):
        words = f"{node.key.text} {'not in' if node.negated else 'in'} ({', '.join(v.text for v in node.values)})"
        ratio = ast.Ratio(node.key)
        parts = [comparison(ctx, ratio, "=", v) for v in node.values]
        joined = "(" + " || ".join(parts) + ")"
        return (f"!{joined}" if node.negated else joined), words
    if isinstance(node, ast.Not):
        inner, words = expr(ctx, node.expr)
        return f"!({inner})", f"not ({words})"
    items = [expr(ctx, i) for i in node.items]
    glue, word = (" && ", " and ") if isinstance(node, ast.And) else (" || ", " or ")
    return "(" + glue.join(s for s, _ in items) + ")", word.join(w for _, w in items)


def gpu_names(ctx: Context, value: ast.Phrase) -> list[Term]:
    """A GPU or a GPU family ('a100' = every A100 variant)."""
    term = ctx.words.name(value, (GPU, GPU_FAMILY), "GPU")
    if term.is_a(GPU):
        return [term]
    rows = ctx.rows(f"SELECT ?g ?l WHERE {{ ?g kbq:gpuFamily {terms.iri(term.iri)} ; rdfs:label ?l }} ORDER BY ?l")
    return [Term(str(g), str(label), frozenset({GPU})) for g, label in rows]


def comparison(ctx: Context, ratio: ast.Ratio, op: str, value: ast.Phrase) -> str:
    if ratio.per is None and ratio.key.text.lower() == NAME_KEY:
        if op not in ("=", "!="):
            raise ctx.error("name can only be compared with = or != (or: name in (...))", value.column)
        found = gpu_names(ctx, value)
        test = "(" + " || ".join(f"?gpu = {terms.iri(t.iri)}" for t in found) + ")"
        return test if op == "=" else f"!{test}"
    key = ctx.cat.key(ratio.key.text, query=ctx.text, column=ratio.key.column)
    if ratio.per is not None:
        per = ctx.cat.key(ratio.per.text, query=ctx.text, column=ratio.per.column)
        if key.is_object or per.is_object:
            raise ctx.error(f"{ratio.text}: both sides of a ratio must be numbers", ratio.column)
        number = ctx.words.quantity(value.words, None, ratio.text).value
        return (
            f"EXISTS {{ ?gpu {terms.iri(key.iri)} ?a ; {terms.iri(per.iri)} ?b "
            f"FILTER(?b != 0 && {double('?a')} / {double('?b')} {op} {terms.double(number)}) }}"
        )
    return compare_key(ctx, key, op, value)


def compare_key(ctx: Context, key: Key, op: str, value: ast.Phrase, subject: str = "?gpu") -> str:
    """A SPARQL test that `subject` (a GPU, or a cloud instance) meets 'key op value'."""
    prop = terms.iri(key.iri)
    if key.is_object:
        target = ctx.words.name(value, (key.range or "",), f"{key.key} value")
        if op == "=":
            return f"EXISTS {{ {subject} {prop} {terms.iri(target.iri)} }}"
        if op == "!=":
            return f"NOT EXISTS {{ {subject} {prop} {terms.iri(target.iri)} }}"
        raise ctx.error(f"{key.key} can only be compared with = or !=", value.column)
    rng = key.range or ""
    if rng.endswith("#boolean"):
        word = value.text.strip().lower()
        if word not in _TRUE | _FALSE or op not in ("=", "!="):
            raise ctx.error(f"{key.key} is yes or no (= or !=)", value.column)
        flag = (word in _TRUE) == (op == "=")
        return f"EXISTS {{ {subject} {prop} {terms.boolean(flag)} }}"
    if rng.endswith("#date"):
        first, after = date_bounds(ctx, value.text.strip(), value.column)
        cond = {
            "=": f"?x >= {terms.date(first)} && ?x < {terms.date(after)}",
            "!=": f"?x < {terms.date(first)} || ?x >= {terms.date(after)}",
            "<": f"?x < {terms.date(first)}",
            "<=": f"?x < {terms.date(after)}",
            ">": f"?x >= {terms.date(after)}",
            ">=": f"?x >= {terms.date(first)}",
        }[op]
        return f"EXISTS {{ {subject} {prop} ?x FILTER({cond}) }}"
    if rng.endswith("#string"):
        if op not in ("=", "!="):
            raise ctx.error(f"{key.key} is text: compare with = or !=", value.column)
        return f"EXISTS {{ {subject} {prop} ?x FILTER(LCASE(STR(?x)) {op} {terms.string(value.text.strip().lower())}) }}"
    number = ctx.words.quantity(value.words, key.dimension, key.key).value / key.factor
    return numeric_test(key, f"{double('?x')} {op} {terms.double(number)}", ctx.as_of, subject)


def numeric_test(key: Key, condition: str, as_of: str | None, subject: str = "?gpu") -> str:
    """A GPU whose figure ?x meets `condition`; a price is the one the price rule gives at the
    question's date (kbq.lang.gpu.columns.price_test), so a filter and the price column agree."""
    if as_of is not None and key.iri == CURRENT_PRICE:
        return price_test(subject, as_of, condition)
    return f"EXISTS {{ {subject} {terms.iri(key.iri)} ?x FILTER({condition}) }}"


def keys_in(node: ast.Expr | None) -> list[ast.Word]:
    if node is None:
        return []
    if isinstance(node, ast.Comparison):
        return [node.left.key] + ([node.left.per] if node.left.per else [])
    if isinstance(node, ast.Membership):
        return [node.key]
    if isinstance(node, ast.Not):
        return keys_in(node.expr)
    return [key for i in node.items for key in keys_in(i)]


# --- qualifiers, ceilings ------------------------------------------------------------------------


def qualifier(key: Key, term: Term) -> Constraint:
    return Constraint(f"{key.key} = {term.label}", f"EXISTS {{ ?gpu {terms.iri(key.iri)} {terms.iri(term.iri)} }}")


def ceiling(c: Ceiling, as_of: str | None = None) -> Constraint:
    dated = f", the price as of {as_of}" if as_of is not None and c.key.iri == CURRENT_PRICE else ""
    return Constraint(
        f"under {c.text} ({c.key.key} <= {c.value:g} {c.key.unit_symbol}{dated})".rstrip(),
        numeric_test(c.key, f"{double('?x')} <= {terms.double(c.value)}", as_of),
    )


def relation(ctx: Context, key: Key, target: ast.Phrase) -> Constraint:
    """'gpus supported by rocm 6.2': the subject's relation to a named thing."""
    term = ctx.words.name(target, (key.range or "",), f"{key.label} value")
    return Constraint(f"{key.label} {term.label}", f"EXISTS {{ ?gpu {terms.iri(key.iri)} {terms.iri(term.iri)} }}")


# --- placement -----------------------------------------------------------------------------------


def placement(ctx: Context, chassis: Chassis) -> tuple[list[Constraint], list[Status], list[str]]:
    """A chassis kind with a card count: the form factors it takes, the airflow passive boards need,
    dense-suited cooling for dense machines, and the sourced cards-per-chassis figure (verified
    when a source states at least N, removed when a source states fewer, unverified otherwise)."""
    threshold = int(ctx.cat.config["dense_threshold"])  # type: ignore[call-overload]
    cards = chassis.cards or 1
    dense = chassis.dense or cards >= threshold
    kind = terms.iri(chassis.kind.iri)
    cooling = "?c kbq:suitsDenseChassis true ." if dense else ""
    airflow = f"FILTER NOT EXISTS {{ ?c kbq:needsForcedAirflow true . FILTER NOT EXISTS {{ {kind} kbq:forcedAirflow true }} }}"
    design = (
        f"?gpu kbq:formFactor ?ff . {kind} kbq:acceptsFormFactor ?ff . ?gpu kbq:boardDesign ?d . "
        f"OPTIONAL {{ ?d kbq:cooling ?c0 }} BIND(COALESCE(?c0, kb:UnknownCooling) AS ?c) {cooling} {airflow}"
    )
    words = chassis.text
    how = []
    if dense:
        how.append("a board whose cooling suits dense installation (blower, passive or liquid)")
    how.append(f"a form factor a {chassis.kind.label} takes")
    if chassis.kind.iri.endswith("Workstation"):
        how.append("no passive board (it needs server airflow)")
    constraints = [
        Constraint(f"{words}: " + ", ".join(how), f"EXISTS {{ {design} }}"),
    ]
    statuses: list[Status] = []
    notes: list[str] = []
    airflow_known = (
        f"EXISTS {{ ?gpu kbq:boardDesign ?dk . ?dk kbq:cooling ?ck . FILTER NOT EXISTS {{ ?ck kbq:needsForcedAirflow true .\n"
        f" FILTER NOT EXISTS {{ {kind} kbq:forcedAirflow true }} }} }}"
    )
    statuses.append(
        Status(
            f"no board's cooling is sourced (a passive board would need a {chassis.kind.label} with server airflow)",
            airflow_known,
        )
    )
    if cards > 1:
        count = terms.integer(cards)
        constraints.append(
            Constraint(
                f"{words}: no source says fewer than {cards} of its boards fit one machine",
                f"EXISTS {{ {design} FILTER NOT EXISTS {{ ?d kbq:maxCardsPerChassis ?m FILTER(?m < {count}) }} }}",
            )
        )
        statuses.append(
            Status(
                f"no source states that {cards} fit one {chassis.kind.label}",
                f"EXISTS {{ {design} ?d kbq:maxCardsPerChassis ?m FILTER(?m >= {count}) }}",
            )
        )
        notes.append(
            f"placement: a GPU is verified for {cards} cards when a source states at least {cards} of one of its boards fit one "
            "machine; otherwise it is shown as unverified, not dropped"
        )
    return constraints, statuses, notes


def power(ctx: Context, psu_watts: float, cards: int, limit: float | None = None) -> tuple[Constraint, Status, list[str]]:
    """N cards' board power plus the sourced host allowance within the PSU's usable share; with a
    per-card power limit ('at 280 w per card') each card draws the lower of its board power and
    the limit, and the maker's recommended system power (stated for stock power) is not used."""
    rows = ctx.rows(
        "SELECT ?host ?share ?src WHERE { ?b a kbq:PowerBudget ; kbq:hostAllowance ?host ; kbq:psuUsableShare ?share ."
        " OPTIONAL { ?b dcterms:source ?src } } ORDER BY ?b ?src LIMIT 1"  # ordered: LIMIT 1 alone picks any row
    )
    host, share = (float(rows[0][0]), float(rows[0][1])) if rows else (0.0, 1.0)  # type: ignore[arg-type]
    budget = psu_watts * share - host
    notes = [
        f"power: {cards} x board power <= {psu_watts:g} W x {share:g} (usable share) - {host:g} W (host allowance) = {budget:g} W"
        + (f" (source: {ctx.cat.label(rows[0][2])})" if rows and rows[0][2] else "")
    ]
    if not rows:
        notes.append("power: no sourced host allowance in the KB; only the cards' board power is counted")
    per_card = terms.double(budget / cards)
    if limit is not None:
        draw = f"IF({double('?w')} > {terms.double(limit)}, {terms.double(limit)}, {double('?w')})"
        notes.append(
            f"power: each card limited to {limit:g} W draws the lower of its board power and {limit:g} W; the makers'"
            " recommended system power is for stock power, so the formula above applies to every card"
        )
        return (
            Constraint(
                f"a {psu_watts:g} W power supply for {cards} card(s) at {limit:g} W per card",
                f"NOT EXISTS {{ ?gpu kbq:tdp ?w FILTER({draw} > {per_card}) }}",
            ),
            Status("no sourced board power (TDP)", "EXISTS { ?gpu kbq:tdp ?w }"),
            notes,
        )
    notes.append(
        f"power: where the GPU's maker recommends a system power for one card, that is the first card's need instead:"
        f" recommended + {cards - 1} more x board power <= {psu_watts:g} W"
    )
    # the maker's figure when the KB has one, the formula when it has none (sparql.none_with_fallback:
    # the form Virtuoso 7.2 answers right)
    with_rsp = f"{double('?rsp')} + {terms.double(float(cards - 1))} * {double('?w')} > {terms.double(psu_watts)}"
    return (
        Constraint(
            f"a {psu_watts:g} W power supply for {cards} card(s)",
            sparql.none_with_fallback(
                "?gpu kbq:tdp ?w .", "?gpu kbq:recommendedSystemPower ?rsp .", with_rsp, f"{double('?w')} > {per_card}"
            ),
        ),
        Status("no sourced board power (TDP)", "EXISTS { ?gpu kbq:tdp ?w }"),
        notes,
    )


# --- precision -----------------------------------------------------------------------------------


def precision(ctx: Context, term: Term, gpu: str = "?gpu") -> tuple[Constraint, list[str], str | None]:
    """GPUs that run the format natively, or through a sourced weight-only path; the note says which.

    Returns the constraint, notes, and the SPARQL expression of the row's path note, both about the
    GPU variable `gpu` (a cloud instance's GPU is another variable)."""
    compute = ctx.rows(f"SELECT ?c WHERE {{ {terms.iri(term.iri)} kbq:computePrecision ?c }} LIMIT 1")
    needed = str(compute[0][0]) if compute else term.iri
    paths = ctx.rows(
        f"""SELECT ?path ?label ?cc ?comment WHERE {{
  ?path a kbq:WeightOnlyPath ; kbq:forPrecision {terms.iri(needed)} ; rdfs:label ?label ; kbq:minComputeCapability ?cc .
  OPTIONAL {{ ?path rdfs:comment ?comment }} }} ORDER BY ?cc"""
    )
    native = f"EXISTS {{ {gpu} kbq:nativePrecision {terms.iri(needed)} }}"
    label = ctx.cat.label(needed)
    notes = [f"precision: {term.label} computes in {label}; GPUs that run {label} natively are kept"]
    test = native
    path_note = None
    if paths:
        cc = min(float(p[2]) for p in paths)  # type: ignore[arg-type]
        weight_only = f"EXISTS {{ {gpu} kbq:computeCapability ?cc FILTER(?cc >= {terms.double(cc)}) }}"
        test = f"({native} || {weight_only})"
        names = "; ".join(f"{p[1]} (compute capability {float(p[2]):g}+)" for p in paths)  # type: ignore[arg-type]
        notes.append(f"precision: without native {label}, a weight-only path is accepted: {names}")
        path_note = f'IF({native}, "native {label}", "weight-only {label} (dequantised; computes at FP16 rates)")'
    return (
        Constraint(f"runs {label} (natively or by a weight-only path)" if paths else f"runs {label} natively", test),
        notes,
        path_note,
    )
