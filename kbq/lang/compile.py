"""AST -> SPARQL. Names, keys and units are resolved through the catalog; every term is
emitted by kbq.lang.terms. Small look-ups the compiler needs (a workload's profiles, a
model's memory need) are SPARQL queries through the same executor."""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, NamedTuple

from kbq.errors import QueryError, UnknownTermError
from kbq.lang import ast, terms
from kbq.lang.catalog import KBQ_NS, PREFIXES, WORKLOAD_KINDS, Catalog, Key, Run, Term, normalise

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_QUANTITY = re.compile(r"^\$?\s*(\d+(?:\.\d+)?)\s*(.*)$")
_TRUE = {"yes", "true", "y", "1"}
_FALSE = {"no", "false", "n", "0"}

if TYPE_CHECKING:
    # A plan as plain tuples, lists and strings for the plan cache (marshal refuses NamedTuples)
    KeyData = tuple[str, str, str, str | None, str | None, str, str | None, float, bool, int, str | None]
    ProfileData = tuple[str, str, str, str, str, str, str, str, str, tuple[tuple[KeyData, ...], ...]]
    PlanData = tuple[
        str, str, list[str], dict[str, str], list[str], list[tuple[str, str]],
        ProfileData | None, tuple[str, str, float, float] | None,
        str | None, list[str], int | None, str | None,
    ]  # fmt: skip


class Constraint(NamedTuple):
    """A condition on ?gpu, as a self-contained SPARQL expression, with its words."""

    text: str
    sparql: str


class Profile(NamedTuple):
    iri: str
    label: str
    authority: str
    authority_label: str
    family: str
    summary: str
    reason: str
    multi_gpu: str
    source: str
    groups: tuple[tuple[Key, ...], ...]


class MemoryFit(NamedTuple):
    model: str
    recipe: str
    params: float
    needed_gb: float


class Plan:
    """A compiled question: the SPARQL, what its columns mean, and how it was derived."""

    def __init__(
        self,
        kind: str,
        sparql: str,
        columns: list[str],
        units: dict[str, str] | None = None,
        explanation: list[str] | None = None,
        constraints: list[Constraint] | None = None,
        profile: Profile | None = None,
        fit: MemoryFit | None = None,
        *,
        subject: str | None = None,  # describe / why: the IRI asked about
        compare: list[str] | None = None,
        limit: int | None = None,
        workload: str | None = None,
    ) -> None:
        self.kind, self.sparql, self.columns = kind, sparql, columns
        self.units = units or {}
        self.explanation = explanation or []
        self.constraints = constraints or []
        self.profile, self.fit = profile, fit
        self.subject, self.compare, self.limit, self.workload = subject, compare or [], limit, workload

    def to_data(self) -> PlanData:
        """Plain tuples, lists and strings (marshal-able) for the plan cache; (*x,) is x as a plain tuple."""
        profile: ProfileData | None = None
        if self.profile is not None:
            groups = tuple(tuple((*k,) for k in g) for g in self.profile.groups)
            profile = (*self.profile[:-1], groups)
        return (
            self.kind, self.sparql, self.columns, self.units, self.explanation,
            [(*c,) for c in self.constraints], profile, (*self.fit,) if self.fit else None,
            self.subject, self.compare, self.limit, self.workload,
        )  # fmt: skip

    @classmethod
    def from_data(cls, data: PlanData) -> Plan:
        kind, sparql, columns, units, explanation, constraints, profile, fit, subject, compare, limit, workload = data
        prof = None
        if profile is not None:
            prof = Profile(*profile[:-1], groups=tuple(tuple(Key(*k) for k in g) for g in profile[-1]))
        return cls(
            kind, sparql, columns, units, explanation,
            [Constraint(*c) for c in constraints],
            prof, MemoryFit(*fit) if fit else None,
            subject=subject, compare=compare, limit=limit, workload=workload,
        )  # fmt: skip


class Compiler:
    def __init__(self, catalog: Catalog, run: Run, text: str) -> None:
        self.cat = catalog
        self.run = run
        self.text = text

    # --- helpers ----------------------------------------------------------------------------

    def resolve(self, name: ast.Name, kinds: set[str] | frozenset[str] | None, what: str = "name") -> Term:
        return self.cat.resolve(name.text, kinds, query=self.text, column=name.column, what=what)

    def error(self, message: str, column: int | None) -> QueryError:
        return QueryError(message, query=self.text, column=column)

    def workload(self, w: ast.Workload) -> tuple[Term | None, Term | None]:
        """(workload term, process term) from 'bert', 'bert inference', 'inference of bert'."""
        if w.of is not None:
            process = self.resolve(w.name, {"process"}, "process")
            return self.resolve(w.of, WORKLOAD_KINDS - {"process"}, "workload"), process
        found = self.cat.candidates(w.name.text, WORKLOAD_KINDS)
        if found:
            term = self.resolve(w.name, WORKLOAD_KINDS, "workload")
            return (None, term) if term.kinds == {"process"} else (term, None)
        words = w.name.text.split(" ")
        for cut in range(len(words) - 1, 0, -1):  # 'resnet-50 training', then 'training resnet-50'
            for head, tail in ((words[:cut], words[cut:]), (words[len(words) - cut :], words[: len(words) - cut])):
                if self.cat.candidates(" ".join(tail), {"process"}) and self.cat.candidates(" ".join(head), WORKLOAD_KINDS):
                    process = self.cat.resolve(" ".join(tail), {"process"})
                    return self.cat.resolve(" ".join(head), WORKLOAD_KINDS, query=self.text, column=w.name.column), process
        self.resolve(w.name, WORKLOAD_KINDS, "workload")  # raises with suggestions
        raise AssertionError("unreachable")

    def profiles(self, workload: Term | None) -> list[dict[str, object]]:
        subject = terms.iri(workload.iri) if workload else "kbq:Algorithm"
        rows = self.run(
            PREFIXES
            + f"""SELECT ?p ?label ?auth ?authLabel ?family ?summary ?reason ?multi ?source ?primary WHERE {{
  {subject} kbq:hasProfile ?p .
  ?p rdfs:label ?label ; kbq:authority ?auth ; kbq:profileOf ?family .
  ?auth rdfs:label ?authLabel .
  OPTIONAL {{ ?p kbq:summary ?summary }}
  OPTIONAL {{ ?p kbq:reason ?reason }}
  OPTIONAL {{ ?p kbq:multiGpu/rdfs:label ?multi }}
  OPTIONAL {{ ?p dcterms:source ?source }}
  OPTIONAL {{ {subject} kbq:primaryAlgorithm ?prim . BIND(?prim = ?family AS ?primary) }}
  FILTER NOT EXISTS {{
    {subject} kbq:hasProfile ?q . ?q kbq:authority ?auth ; kbq:profileOf ?qf .
    ?qf rdfs:subClassOf ?family . FILTER(?qf != ?family)
  }}
}} ORDER BY ?p"""
        ).rows
        keys = ["iri", "label", "authority", "authority_label", "family", "summary", "reason", "multi_gpu", "source", "primary"]
        seen: dict[str, dict[str, object]] = {}
        for row in rows:
            seen.setdefault(str(row[0]), dict(zip(keys, row, strict=True)))
        return list(seen.values())

    def choose_profile(self, workload: Term | None, using: ast.Name | None) -> tuple[Profile | None, list[str]]:
        notes: list[str] = []
        found = self.profiles(workload)
        wanted = self.resolve(using, {"authority"}, "profile authority").iri if using else self.cat.default_authority
        pick = [p for p in found if p["authority"] == wanted]
        what = workload.label if workload else "deep learning in general"
        if not pick:
            if using is not None:
                others = sorted({str(p["authority_label"]) for p in found})
                raise self.error(
                    f"{self.cat.label(wanted)} has no requirement profile for {what}"
                    + (f" (available: {', '.join(others)})" if others else ""),
                    using.column,
                )
            if found:
                notes.append(
                    f"the {self.cat.label(wanted)} source has no profile for {what}; using {found[0]['authority_label']}"
                )
                pick = [p for p in found if p["authority"] == found[0]["authority"]]
            else:
                return None, [f"no requirement profile applies to {what}"]
        if len(pick) > 1:
            primary = [p for p in pick if p["primary"] is True]
            chosen = primary[0] if primary else pick[0]
            also = ", ".join(str(p["label"]) for p in pick if p is not chosen)
            notes.append(f"{what} uses several families; ranked by {chosen['label']} (also applies: {also})")
        else:
            chosen = pick[0]
        return self.profile(chosen), notes

    def profile(self, row: dict[str, object]) -> Profile:
        prio = self.run(
            PREFIXES + f"SELECT ?rank ?attr WHERE {{ {terms.iri(str(row['iri']))} kbq:priority ?s ."
            " ?s kbq:rank ?rank ; kbq:attribute ?attr } ORDER BY ?rank ?attr"
        ).rows
        groups: dict[int, list[Key]] = {}
        for rank, attr in prio:
            key = self.cat.keys_by_iri.get(str(attr))
            if key is not None:
                groups.setdefault(int(rank), []).append(key)  # type: ignore[arg-type]
        return Profile(
            iri=str(row["iri"]),
            label=str(row["label"]),
            authority=str(row["authority"]),
            authority_label=str(row["authority_label"]),
            family=str(row["family"]),
            summary=str(row["summary"] or ""),
            reason=str(row["reason"] or ""),
            multi_gpu=str(row["multi_gpu"] or ""),
            source=str(row["source"] or ""),
            groups=tuple(tuple(g) for _, g in sorted(groups.items())),
        )

    # --- values -----------------------------------------------------------------------------

    def quantity(self, key: Key, value: ast.Name) -> float:
        match = _QUANTITY.match(value.text.strip())
        if not match:
            raise self.error(f"'{value.text}' is not a number for {key.key}", value.column)
        number, unit_text = float(match.group(1)), match.group(2).strip()
        if not unit_text:
            return number
        unit = self.cat.units.get(normalise(unit_text))
        if unit is None or (key.dimension is not None and unit.dimension != key.dimension):
            same = sorted({u.symbol for u in self.cat.units.values() if u.dimension == key.dimension and u.symbol})
            hint = f"; {key.key} takes {', '.join(same)}" if same else f"; {key.key} takes a plain number"
            raise UnknownTermError(f"unknown unit '{unit_text}' for {key.key}{hint}", query=self.text, column=value.column)
        return number * unit.factor / key.factor

    def date_bounds(self, value: ast.Name) -> tuple[str, str]:
        """[first day, first day after] of a year, month or day."""
        text = value.text.strip()
        try:
            if re.fullmatch(r"\d{4}", text):
                year = int(text)
                return f"{year:04d}-01-01", f"{year + 1:04d}-01-01"
            if re.fullmatch(r"\d{4}-\d{2}", text):
                start = datetime.date.fromisoformat(text + "-01")
                nxt = (start.replace(day=28) + datetime.timedelta(days=4)).replace(day=1)
                return start.isoformat(), nxt.isoformat()
            day = datetime.date.fromisoformat(text)
            return day.isoformat(), (day + datetime.timedelta(days=1)).isoformat()
        except ValueError:
            raise self.error(f"'{text}' is not a date (YYYY, YYYY-MM or YYYY-MM-DD)", value.column) from None

    def comparison(self, key: Key, op: str, value: ast.Name) -> str:
        prop = terms.iri(key.iri)
        if key.is_object:
            allowed = {k for k, c in _KIND_BY_CLASS.items() if c == key.range} or None
            target = terms.iri(self.resolve(value, allowed, f"{key.key} value").iri)
            if op == "=":
                return f"EXISTS {{ ?gpu {prop} {target} }}"
            if op == "!=":
                return f"NOT EXISTS {{ ?gpu {prop} {target} }}"
            raise self.error(f"{key.key} can only be compared with = or !=", value.column)
        rng = key.range or ""
        if rng.endswith("#boolean"):
            word = value.text.strip().lower()
            if word not in _TRUE | _FALSE or op not in ("=", "!="):
                raise self.error(f"{key.key} is yes or no (= or !=)", value.column)
            flag = (word in _TRUE) == (op == "=")
            return f"EXISTS {{ ?gpu {prop} {terms.boolean(flag)} }}"
        if rng.endswith("#date"):
            first, after = self.date_bounds(value)
            cond = {
                "=": f"?x >= {terms.date(first)} && ?x < {terms.date(after)}",
                "!=": f"?x < {terms.date(first)} || ?x >= {terms.date(after)}",
                "<": f"?x < {terms.date(first)}",
                "<=": f"?x < {terms.date(after)}",
                ">": f"?x >= {terms.date(after)}",
                ">=": f"?x >= {terms.date(first)}",
            }[op]
            return f"EXISTS {{ ?gpu {prop} ?x FILTER({cond}) }}"
        if rng.endswith("#string"):
            if op not in ("=", "!="):
                raise self.error(f"{key.key} is text: compare with = or !=", value.column)
            return f"EXISTS {{ ?gpu {prop} ?x FILTER(LCASE(STR(?x)) {op} {terms.string(value.text.strip().lower())}) }}"
        number = self.quantity(key, value)
        return f"EXISTS {{ ?gpu {prop} ?x FILTER(?x {op} {terms.decimal(number)}) }}"

    def expr(self, node: ast.Expr) -> tuple[str, str]:
        """(SPARQL expression, words) for a where-expression."""
        if isinstance(node, ast.Comparison):
            key = self.cat.key(node.key.text, query=self.text, column=node.key.column)
            return self.comparison(key, node.op, node.value), f"{key.key} {node.op} {node.value.text}"
        if isinstance(node, ast.Membership):
            key = self.cat.key(node.key.text, query=self.text, column=node.key.column)
            parts = [self.comparison(key, "=", v) for v in node.values]
            words = f"{key.key} {'not in' if node.negated else 'in'} ({', '.join(v.text for v in node.values)})"
            joined = "(" + " || ".join(parts) + ")"
            return (f"!{joined}" if node.negated else joined), words
        if isinstance(node, ast.Not):
            inner, words = self.expr(node.expr)
            return f"!({inner})", f"not ({words})"
        items = [self.expr(i) for i in node.items]
        glue = " && " if isinstance(node, ast.And) else " || "
        word = " and " if isinstance(node, ast.And) else " or "
        return "(" + glue.join(s for s, _ in items) + ")", word.join(w for _, w in items)

    def top_constraints(self, node: ast.Expr) -> list[Constraint]:
        if isinstance(node, ast.And):
            return [c for item in node.items for c in self.top_constraints(item)]
        sparql, words = self.expr(node)
        return [Constraint(words, sparql)]

    def placement(self, p: ast.Placement) -> Constraint:
        dense = p.dense or (p.cards is not None and p.cards >= self.cat.dense_threshold)
        cards = p.cards if p.cards is not None else (self.cat.dense_threshold if dense else 1)
        prop = "kbq:denseCards" if dense else "kbq:maxCards"
        words = f"{'dense ' if p.dense else ''}{p.cards or ''}{'-card ' if p.cards else ''}{p.chassis}".strip()
        how = (
            f"a design with dense-suited cooling (blower, passive, liquid) sourced at >= {cards} cards per chassis"
            if dense
            else f"a design sourced at >= {cards} cards per chassis"
        )
        kind = self.cat.resolve(p.chassis, {"chassis"}, query=self.text, column=p.column, what="chassis")
        return Constraint(
            f"{words}: {how}, in a form factor a {kind.label} takes",
            f"EXISTS {{ ?gpu {prop} ?n FILTER(?n >= {terms.integer(cards)}) }}"
            f" && EXISTS {{ ?gpu kbq:formFactor ?ff . {terms.iri(kind.iri)} kbq:acceptsFormFactor ?ff }}",
        )

    def memory_fit(
        self, workload: Term | None, process: Term | None, precision: ast.Name | None
    ) -> tuple[MemoryFit | None, list[str]]:
        if workload is None or "model" not in workload.kinds:
            if precision is not None:
                raise self.error("'at PRECISION' needs a model with a parameter count", precision.column)
            return None, []
        proc = process.iri if process else KBQ_NS.replace("ontology#", "kb/") + "Training"
        rows = self.run(
            PREFIXES
            + f"""SELECT ?r ?rl ?prec ?default ?gb ?params WHERE {{
  {terms.iri(workload.iri)} kbq:parameterCount ?params ; kbq:memoryNeed ?need .
  ?need kbq:recipe ?r ; kbq:neededMemory ?gb .
  ?r kbq:forProcess {terms.iri(proc)} ; rdfs:label ?rl ; kbq:atPrecision ?prec .
  OPTIONAL {{ ?r kbq:isDefaultRecipe ?default }}
}} ORDER BY ?r"""
        ).rows
        if not rows:
            return None, [f"no parameter count is sourced for {workload.label}: no memory-fit figures"]
        if precision is not None:
            prec = self.resolve(precision, {"precision"}, "precision").iri
            rows = [r for r in rows if r[2] == prec]
            if not rows:
                raise self.error(f"no memory recipe for {self.cat.label(proc)} at {precision.text}", precision.column)
        else:
            rows = [r for r in rows if r[3] is True] or rows
        _recipe, label, _prec, _default, gb, params = rows[0]
        fit = MemoryFit(workload.label, str(label), float(params), float(gb))  # type: ignore[arg-type]
        return fit, [
            f"memory: {fit.model} has {fit.params:,.0f} parameters; {fit.recipe} needs {fit.needed_gb:g} GB"
            " (activations and KV cache not counted); cards_needed = ceil(needed / memory)"
        ]

    # --- questions --------------------------------------------------------------------------

    def gpu_question(self, q: ast.GpuQuestion) -> Plan:
        workload, process = self.workload(q.workload) if q.workload else (None, None)
        explanation: list[str] = []
        profile, notes = self.choose_profile(workload, q.using) if (workload or process or q.using) else (None, [])
        fit, fit_notes = self.memory_fit(workload, process, q.precision)
        constraints: list[Constraint] = []
        if q.where is not None:
            constraints += self.top_constraints(q.where)
        if q.placement is not None:
            constraints.append(self.placement(q.placement))
            if fit is not None and q.placement.cards:
                need = terms.decimal(fit.needed_gb)
                constraints.append(
                    Constraint(
                        f"{fit.model} fits in {q.placement.cards} cards",
                        f"EXISTS {{ ?gpu kbq:memory ?m FILTER(CEIL({need} / ?m) <= {terms.integer(q.placement.cards)}) }}",
                    )
                )
        if q.as_of is not None:
            _first, after = self.date_bounds(q.as_of)
            constraints.append(
                Constraint(
                    f"as of {q.as_of.text}: released before {after}",
                    f"EXISTS {{ ?gpu kbq:releaseDate ?x FILTER(?x < {terms.date(after)}) }}",
                )
            )
        # columns: profile attributes, then keys the question mentions, then release and cooling
        shown: list[Key] = [k for g in (profile.groups if profile else ()) for k in g]
        for name in _keys_in(q.where):
            key = self.cat.key(name.text, query=self.text, column=name.column)
            if key not in shown and key.iri != KBQ_NS + "availableCooling":
                shown.append(key)
        order_key = self.cat.key(q.order.key.text, query=self.text, column=q.order.key.column) if q.order else None
        if order_key is not None and order_key.is_object:
            raise self.error(f"cannot order by {order_key.key}: it is not a number or date", q.order.key.column)  # type: ignore[union-attr]
        extra = [order_key] if order_key else []
        if q.placement is not None:
            extra.append(
                self.cat.keys[
                    normalise(
                        "dense_cards" if q.placement.dense or (q.placement.cards or 0) >= self.cat.dense_threshold else "cards"
                    )
                ]
            )
        if not profile:
            extra += [self.cat.keys["memory"], self.cat.keys["bandwidth"]]
        extra.append(self.cat.keys["released"])
        for key in extra:
            if key not in shown:
                shown.append(key)
        select = ["?gpu", "?name"] + [f"?{k.var}" for k in shown] + ["?cooling"]
        body = ["?gpu a kbq:GPU ; rdfs:label ?name ."]
        body += [f"OPTIONAL {{ ?gpu {terms.iri(k.iri)} ?{k.var} }}" for k in shown]
        body.append(
            'OPTIONAL { SELECT ?gpu (GROUP_CONCAT(DISTINCT ?cl; separator=", ") AS ?cooling)'
            " WHERE { ?gpu kbq:availableCooling ?c . ?c rdfs:label ?cl } GROUP BY ?gpu }"
        )
        if constraints:
            body.append("FILTER (" + "\n     && ".join(c.sparql for c in constraints) + ")")
        if fit is not None:
            body.append(f"BIND ({terms.decimal(fit.needed_gb)} AS ?needed_gb)")
            body.append("BIND (CEIL(?needed_gb / ?v_memory) AS ?cards_needed)")
            select += ["?needed_gb", "?cards_needed"]
        order: list[str] = []
        if order_key is not None:
            descending = q.order.descending if q.order.descending is not None else order_key.higher_is_better  # type: ignore[union-attr]
            # a missing figure sorts last either way (SPARQL puts unbound values first in ASC)
            order.append(f"DESC(?{order_key.var})" if descending else f"ASC(COALESCE(?{order_key.var}, 1e30))")
        maxes: list[Key] = []
        if profile is not None:
            for group in profile.groups:
                if len(group) == 1:
                    k = group[0]
                    order.append(f"DESC(COALESCE(?{k.var}, -1))" if k.higher_is_better else f"ASC(COALESCE(?{k.var}, 1e30))")
                else:
                    parts = []
                    for k in group:
                        maxes.append(k)
                        ratio = f"COALESCE(?{k.var} / ?max_{k.var}, 0)"
                        parts.append(ratio if k.higher_is_better else f"(1 - {ratio})")
                    order.append("DESC(" + " + ".join(parts) + ")")
        if maxes:
            inner = ["?gpu a kbq:GPU ."]
            inner += [f"OPTIONAL {{ ?gpu {terms.iri(k.iri)} ?m_{k.var} }}" for k in maxes]
            if constraints:
                inner.append("FILTER (" + " && ".join(c.sparql for c in constraints) + ")")
            aggs = " ".join(f"(MAX(?m_{k.var}) AS ?max_{k.var})" for k in maxes)
            body.append("{ SELECT " + aggs + " WHERE {\n    " + "\n    ".join(inner) + "\n  } }")
        order.append("ASC(?name)")
        limit = 1 if q.best else (q.top or q.limit)
        if q.limit is not None:
            limit = q.limit
        sparql = (
            PREFIXES
            + "SELECT "
            + " ".join(select)
            + "\nWHERE {\n  "
            + "\n  ".join(body)
            + "\n}\nORDER BY "
            + " ".join(order)
            + (f"\nLIMIT {int(limit)}" if limit else "")
        )
        columns = ["gpu", "name"] + [k.key for k in shown] + ["cooling"] + (["needed_gb", "cards_needed"] if fit else [])
        units = {k.key: k.unit_symbol for k in shown if k.unit_symbol}
        if fit:
            units["needed_gb"] = "GB"
        if workload or process:
            what = " ".join(x for x in ((process.label if process else ""), (workload.label if workload else "")) if x)
            kinds = "/".join(sorted(workload.kinds)) if workload else "process"
            explanation.append(f"workload: {what} ({kinds})")
        if profile is not None:
            inherited = (
                "" if workload and profile.family == workload.iri else f", inherited from {self.cat.label(profile.family)}"
            )
            explanation.append(f"profile: {profile.label} ({profile.authority_label}{inherited}): {profile.summary}")
            explanation.append(
                "method: GPUs meeting every constraint, ordered by the profile's ranks in turn; attributes sharing a "
                "rank are compared by the sum of each value divided by the largest among the candidates; a missing "
                "figure ranks last; ties by name" + (f"; first by {order_key.key}" if order_key else "")
            )
            if profile.multi_gpu:
                explanation.append(f"multi-GPU scaling: {profile.multi_gpu}")
            explanation.append(f"source: {self.cat.label(profile.source)}")
        elif order_key is None:
            explanation.append("method: no workload named, so GPUs are listed by name")
        explanation += notes + fit_notes
        for c in constraints:
            explanation.append(f"constraint: {c.text}")
        return Plan(
            "gpus",
            sparql,
            columns,
            units,
            explanation,
            constraints,
            profile,
            fit,
            limit=limit,
            workload=workload.iri if workload else None,
        )

    def list_question(self, q: ast.ListQuestion) -> Plan:
        kind = _LIST_KINDS.get(q.kind)
        if kind is None:
            raise self.error(f"cannot list {q.kind}", 1)
        target = self.resolve(q.target, None) if q.target else None
        pattern, extra_cols = _list_pattern(kind, target)
        if pattern is None:
            raise self.error(
                f"{q.kind} for {target.label if target else ''} is not a question kbq can answer",
                q.target.column if q.target else 1,
            )
        sparql = (
            PREFIXES
            + "SELECT DISTINCT ?item ?name"
            + "".join(f" ?{c}" for c in extra_cols)
            + " WHERE {\n  "
            + pattern
            + "\n  ?item rdfs:label ?name .\n} ORDER BY ?name"
        )
        explanation = [f"{q.kind} " + (f"for {target.label} ({'/'.join(sorted(target.kinds))})" if target else "(all)")]
        return Plan(
            "list", sparql, ["item", "name", *extra_cols], explanation=explanation, subject=target.iri if target else None
        )

    def requirements(self, q: ast.RequirementsQuestion) -> Plan:
        workload, process = self.workload(q.workload)
        what = workload or process
        found = self.profiles(workload)
        if q.using is not None:
            auth = self.resolve(q.using, {"authority"}, "profile authority").iri
            found = [p for p in found if p["authority"] == auth]
        if not found:
            raise self.error(f"no requirement profile applies to {what.label if what else 'that'}", q.workload.name.column)
        values = " ".join(terms.iri(str(p["iri"])) for p in found)
        sparql = (
            PREFIXES
            + f"""SELECT ?profile ?authority ?rank ?key ?attribute WHERE {{
  VALUES ?p {{ {values} }}
  ?p rdfs:label ?profile ; kbq:authority/rdfs:label ?authority ; kbq:priority ?s .
  ?s kbq:rank ?rank ; kbq:attribute ?a .
  ?a rdfs:label ?attribute . OPTIONAL {{ ?a kbq:queryKey ?key }}
}} ORDER BY ?authority ?profile ?rank ?key"""
        )
        explanation = []
        for p in found:
            prof = self.profile(p)
            inherited = "" if workload and prof.family == workload.iri else f" (inherited from {self.cat.label(prof.family)})"
            explanation.append(f"{prof.label}{inherited}: {prof.summary}")
            if prof.reason:
                explanation.append(f"  why: {prof.reason}")
            if prof.multi_gpu:
                explanation.append(f"  multi-GPU scaling: {prof.multi_gpu}")
            explanation.append(f"  source: {self.cat.label(prof.source)}")
        return Plan(
            "requirements",
            sparql,
            ["profile", "authority", "rank", "key", "attribute"],
            explanation=explanation,
            subject=what.iri if what else None,
        )

    def describe(self, q: ast.DescribeQuestion) -> Plan:
        term = self.resolve(q.name, None)
        sparql = (
            PREFIXES
            + f"""SELECT ?property ?value ?valueLabel WHERE {{
  {terms.iri(term.iri)} ?p ?value .
  OPTIONAL {{ ?p rdfs:label ?pl }}
  OPTIONAL {{ ?value rdfs:label ?vl }}
  BIND (COALESCE(?pl, STR(?p)) AS ?property)
  BIND (COALESCE(?vl, ?value) AS ?valueLabel)
  FILTER (?p NOT IN (owl:sameAs))
}} ORDER BY ?property ?valueLabel"""
        )
        return Plan(
            "describe",
            sparql,
            ["property", "value", "valueLabel"],
            subject=term.iri,
            explanation=[f"{term.label}: {'/'.join(sorted(term.kinds))}"],
        )

    def compare(self, q: ast.CompareQuestion) -> Plan:
        gpus = [self.resolve(n, {"gpu"}, "GPU") for n in q.names]
        values = " ".join(terms.iri(g.iri) for g in gpus)
        sparql = (
            PREFIXES
            + f"""SELECT ?gpu ?p ?value ?valueLabel WHERE {{
  VALUES ?gpu {{ {values} }}
  ?gpu ?p ?value .
  OPTIONAL {{ ?value rdfs:label ?vl }}
  BIND (COALESCE(?vl, ?value) AS ?valueLabel)
}}"""
        )
        return Plan(
            "compare",
            sparql,
            ["attribute", *[g.label for g in gpus]],
            compare=[g.iri for g in gpus],
            explanation=[f"compare: {', '.join(g.label for g in gpus)}"],
        )

    def why(self, q: ast.WhyQuestion) -> Plan:
        gpu = self.resolve(q.gpu, {"gpu"}, "GPU")
        if q.question.workload is None:
            raise self.error("'why GPU for WORKLOAD' needs a workload", q.gpu.column)
        plan = self.gpu_question(q.question._replace(best=False, top=None, limit=None))
        plan.kind, plan.subject = "why", gpu.iri
        return plan

    def compile(self, question: ast.Question) -> Plan:
        if isinstance(question, ast.GpuQuestion):
            return self.gpu_question(question)
        if isinstance(question, ast.ListQuestion):
            return self.list_question(question)
        if isinstance(question, ast.RequirementsQuestion):
            return self.requirements(question)
        if isinstance(question, ast.DescribeQuestion):
            return self.describe(question)
        if isinstance(question, ast.CompareQuestion):
            return self.compare(question)
        return self.why(question)


_KIND_BY_CLASS = {
    "cooling": KBQ_NS + "CoolingType",
    "vendor": KBQ_NS + "Vendor",
    "architecture": KBQ_NS + "Architecture",
    "form": KBQ_NS + "FormFactor",
}

_LIST_KINDS = {
    "frameworks": "framework",
    "framework": "framework",
    "sdks": "sdk",
    "sdk": "sdk",
    "applications": "application",
    "application": "application",
    "apps": "application",
    "algorithms": "family",
    "algorithm": "family",
    "models": "model",
    "platforms": "platform",
    "vendors": "vendor",
    "architectures": "architecture",
    "keys": "key",
    "units": "unit",
}


def _families(target: Term) -> str:
    """A SPARQL pattern binding ?f to the algorithm families a target involves."""
    t = terms.iri(target.iri)
    if "family" in target.kinds:
        return f"{{ BIND({t} AS ?f) }} UNION {{ {t} rdfs:subClassOf ?f . ?f rdfs:subClassOf kbq:Algorithm }}"
    if "model" in target.kinds:
        return f"{t} a ?f . ?f rdfs:subClassOf kbq:Algorithm ."
    if "application" in target.kinds:
        return (
            f"{t} kbq:usesAlgorithm ?f0 . {{ BIND(?f0 AS ?f) }}"
            " UNION { ?f0 rdfs:subClassOf ?f . ?f rdfs:subClassOf kbq:Algorithm }"
        )
    if "area" in target.kinds:
        return f"?app kbq:inArea {t} ; kbq:usesAlgorithm ?f ."
    return ""


def _list_pattern(kind: str, target: Term | None) -> tuple[str | None, list[str]]:
    if kind == "key":
        return "?item kbq:queryKey ?key . OPTIONAL { ?item kbq:unit/kbq:symbol ?unit }", ["key", "unit"]
    if kind == "unit":
        return "?item a kbq:Unit ; kbq:symbol ?symbol ; kbq:dimension/rdfs:label ?dimension .", ["symbol", "dimension"]
    if target is None:
        cls = {"family": "?item rdfs:subClassOf kbq:Algorithm .", "model": "?item a kbq:Model ."}.get(kind)
        if cls is None:
            from kbq.lang.catalog import KIND_CLASSES

            cls = f"?item a kbq:{KIND_CLASSES[kind]} ."
        return cls, []
    t = terms.iri(target.iri)
    if kind == "framework":
        fam = _families(target)
        return (f"{fam}\n  ?item a kbq:Framework ; kbq:supportsAlgorithm ?f ." if fam else None), []
    if kind == "sdk":
        if "process" in target.kinds:
            return f"?item a kbq:SDK ; kbq:forProcess {t} . OPTIONAL {{ ?item kbq:role/rdfs:label ?role }}", ["role"]
        fam = _families(target)
        return (f"{fam}\n  ?f kbq:usesSdk ?item ." if fam else None), []
    if kind == "application":
        if "area" in target.kinds:
            return f"?item kbq:inArea {t} .", []
        fam = _families(target)
        if not fam:
            return None, []
        sub = f"UNION {{ ?f0 rdfs:subClassOf {t} . ?item kbq:usesAlgorithm ?f0 }}" if "family" in target.kinds else ""
        return f"{{ {fam}\n  ?item kbq:usesAlgorithm ?f . }} {sub}", []
    if kind == "family":
        if "application" in target.kinds:
            return (f"{t} kbq:usesAlgorithm ?item . BIND(EXISTS {{ {t} kbq:primaryAlgorithm ?item }} AS ?primary)", ["primary"])
        if "area" in target.kinds:
            return f"?app kbq:inArea {t} ; kbq:usesAlgorithm ?item .", []
        if "model" in target.kinds:
            return f"{t} a ?item . ?item rdfs:subClassOf kbq:Algorithm .", []
        if "family" in target.kinds:
            return f"?item rdfs:subClassOf {t} . FILTER(?item != {t})", []
        return None, []
    if kind == "model":
        if "family" in target.kinds:
            return f"?item a kbq:Model , {t} . OPTIONAL {{ ?item kbq:parameterCount ?params }}", ["params"]
        return None, []
    return None, []


def _keys_in(node: ast.Expr | None) -> list[ast.Name]:
    if node is None:
        return []
    if isinstance(node, (ast.Comparison, ast.Membership)):
        return [node.key]
    if isinstance(node, ast.Not):
        return _keys_in(node.expr)
    return [k for i in node.items for k in _keys_in(i)]
