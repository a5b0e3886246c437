"""What the compiler knows of the KB: names (labels and alternative labels), query keys,
units, kinds. Read once per process through the executor, so it works the same on the
embedded snapshot and on a remote endpoint."""

from __future__ import annotations

import marshal
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from kbq.errors import AmbiguousTermError, UnknownTermError
from kbq.store.executor import Table, Value
from kbq.store.names import normalise
from kbq.store.resources import KB_NS, KBQ_NS

Run = Callable[[str], Table]
CATALOG = "kbq-catalog.marshal"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIXES = f"""PREFIX kbq: <{KBQ_NS}>
PREFIX kb: <{KB_NS}>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX owl: <http://www.w3.org/2002/07/owl#>
PREFIX xsd: <{XSD}>
PREFIX dcterms: <http://purl.org/dc/terms/>
"""

# Kinds of named things, by the class that makes them so (families are subclasses of Algorithm).
KIND_CLASSES = {
    "gpu": "GPU",
    "model": "Model",
    "application": "Application",
    "area": "ApplicationArea",
    "process": "Process",
    "framework": "Framework",
    "sdk": "SDK",
    "release": "SdkRelease",
    "platform": "Platform",
    "vendor": "Vendor",
    "architecture": "Architecture",
    "cooling": "CoolingType",
    "form": "FormFactor",
    "precision": "Precision",
    "authority": "ProfileAuthority",
    "unit": "Unit",
    "profile": "RequirementProfile",
    "recipe": "MemoryRecipe",
    "design": "BoardDesign",
    "source": "Source",
    "chassis": "ChassisKind",
}
WORKLOAD_KINDS = frozenset({"family", "model", "application", "area", "process"})



class Term(NamedTuple):
    iri: str
    label: str
    kinds: frozenset[str]


class Key(NamedTuple):
    """A query key: a property the ontology marks with kbq:queryKey."""

    iri: str
    key: str
    label: str
    range: str | None
    unit: str | None = None
    unit_symbol: str = ""
    dimension: str | None = None
    factor: float = 1.0
    higher_is_better: bool = True
    order: int = 100
    domain: str | None = None

    @property
    def var(self) -> str:
        return "v_" + re.sub(r"\W", "_", self.key)

    @property
    def is_object(self) -> bool:
        return self.range is not None and not self.range.startswith(XSD)


class Unit(NamedTuple):
    iri: str
    symbol: str
    dimension: str
    factor: float


class Catalog:
    """Names, keys and units of one KB (a plain class: cheap to define on the query path)."""

    def __init__(self) -> None:
        self.terms: dict[str, Term] = {}
        self.by_name: dict[str, set[str]] = defaultdict(set)
        self.keys: dict[str, Key] = {}  # normalised key or alias -> Key
        self.keys_by_iri: dict[str, Key] = {}
        self.units: dict[str, Unit] = {}  # normalised name -> Unit
        self.dense_threshold = 8
        self.default_authority: str | None = None

    # --- reading ---------------------------------------------------------------------------

    @classmethod
    def read(cls, run: Run) -> Catalog:
        cat = cls()
        kinds: dict[str, set[str]] = defaultdict(set)
        class_to_kind = {KBQ_NS + c: k for k, c in KIND_CLASSES.items()}
        types = run(
            PREFIXES
            + "SELECT ?s ?t WHERE { { ?s a ?t } UNION { ?s rdfs:subClassOf kbq:Algorithm BIND(kbq:Algorithm AS ?t) }"
            + " UNION { BIND(kbq:Algorithm AS ?s) BIND(kbq:Algorithm AS ?t) } }"
        )
        for s, t in types.rows:
            if t == KBQ_NS + "Algorithm":
                kinds[str(s)].add("family")
            elif (kind := class_to_kind.get(str(t))) is not None:
                kinds[str(s)].add(kind)
        names = run(PREFIXES + "SELECT ?s ?l ?p WHERE { ?s ?p ?l . VALUES ?p { rdfs:label skos:altLabel kbq:symbol } }")
        labels: dict[str, str] = {}
        for s, label, p in names.rows:
            s, label = str(s), str(label)
            if p == "http://www.w3.org/2000/01/rdf-schema#label":
                labels.setdefault(s, label)
            if s in kinds:
                cat.by_name[normalise(label)].add(s)
        for s, k in kinds.items():
            cat.terms[s] = Term(s, labels.get(s, s.rsplit("/", 1)[-1].rsplit("#", 1)[-1]), frozenset(k))
        cat._read_units(run)
        cat._read_keys(run)
        threshold = run(PREFIXES + "SELECT ?n WHERE { kb:DenseChassis kbq:minCards ?n }").rows
        if threshold:
            cat.dense_threshold = int(threshold[0][0])  # type: ignore[arg-type]
        default = run(PREFIXES + "SELECT ?a WHERE { ?a kbq:isDefaultAuthority true } ORDER BY ?a LIMIT 1").rows
        cat.default_authority = str(default[0][0]) if default else None
        return cat

    def _read_units(self, run: Run) -> None:
        rows = run(
            PREFIXES + "SELECT ?u ?name ?sym ?dim ?f WHERE { ?u a kbq:Unit ; kbq:symbol ?sym ; kbq:dimension ?dim ;"
            " kbq:factorToBase ?f . { ?u rdfs:label ?name } UNION { ?u skos:altLabel ?name }"
            " UNION { ?u kbq:symbol ?name } }"
        ).rows
        for u, name, sym, dim, f in rows:
            self.units[normalise(str(name))] = Unit(str(u), str(sym), str(dim), float(f))  # type: ignore[arg-type]

    def _read_keys(self, run: Run) -> None:
        rows = run(
            PREFIXES
            + """SELECT ?p ?key ?label ?range ?unit ?higher ?order ?domain WHERE {
  ?p kbq:queryKey ?key ; rdfs:label ?label .
  OPTIONAL { ?p rdfs:range ?range FILTER(?range != rdfs:Resource && ?range != owl:Thing) }
  OPTIONAL { ?p kbq:unit ?unit }
  OPTIONAL { ?p kbq:higherIsBetter ?higher }
  OPTIONAL { ?p kbq:displayOrder ?order }
  OPTIONAL { ?p rdfs:domain ?domain FILTER(?domain != owl:Thing) }
} ORDER BY ?p"""
        ).rows
        unit_by_iri = {u.iri: u for u in self.units.values()}
        for p, key, label, rng, unit, higher, order, domain in rows:
            if str(p) in self.keys_by_iri:
                continue
            u = unit_by_iri.get(str(unit)) if unit else None
            k = Key(
                iri=str(p),
                key=str(key),
                label=str(label),
                range=str(rng) if rng else None,
                unit=u.iri if u else None,
                unit_symbol=u.symbol if u else "",
                dimension=u.dimension if u else None,
                factor=u.factor if u else 1.0,
                higher_is_better=higher is not False,
                order=int(order) if order is not None else 100,
                domain=str(domain) if domain else None,
            )
            self.keys_by_iri[k.iri] = k
            self.keys[normalise(k.key)] = k
        aliases = run(PREFIXES + "SELECT ?p ?alt WHERE { ?p kbq:queryKey ?k ; skos:altLabel ?alt }").rows
        for p, alt in aliases:
            if (aliased := self.keys_by_iri.get(str(p))) is not None:
                self.keys.setdefault(normalise(str(alt)), aliased)

    # --- a cached copy beside the snapshot (the catalog is derived from it) ------------------

    def dump(self, path: Path) -> None:
        data = {
            "terms": [[t.iri, t.label, sorted(t.kinds)] for t in self.terms.values()],
            "by_name": {k: sorted(v) for k, v in self.by_name.items()},
            "keys": {k: v.iri for k, v in self.keys.items()},
            "keys_by_iri": [k._asdict() for k in self.keys_by_iri.values()],
            "units": {k: u._asdict() for k, u in self.units.items()},
            "dense_threshold": self.dense_threshold,
            "default_authority": self.default_authority,
        }
        path.write_bytes(marshal.dumps(data))  # marshal: no import cost on the query path

    @classmethod
    def cached(cls, folder: str | None, run: Run) -> Catalog:
        """The catalog of a snapshot, read once and cached beside it (best effort)."""
        if folder is None:
            return cls.read(run)
        path = Path(folder) / CATALOG
        try:
            return cls.load(path)
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            pass
        cat = cls.read(run)
        try:
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            cat.dump(tmp)
            os.replace(tmp, path)
        except OSError:
            pass
        return cat

    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        with open(path, "rb") as handle:
            data = marshal.load(handle)
        cat = cls()
        cat.terms = {iri: Term(iri, label, frozenset(kinds)) for iri, label, kinds in data["terms"]}
        cat.by_name = defaultdict(set, {k: set(v) for k, v in data["by_name"].items()})
        cat.keys_by_iri = {k["iri"]: Key(**k) for k in data["keys_by_iri"]}
        cat.keys = {k: cat.keys_by_iri[iri] for k, iri in data["keys"].items()}
        cat.units = {k: Unit(**u) for k, u in data["units"].items()}
        cat.dense_threshold = data["dense_threshold"]
        cat.default_authority = data["default_authority"]
        return cat

    # --- lookup ----------------------------------------------------------------------------

    def label(self, iri: Value) -> str:
        term = self.terms.get(str(iri))
        return term.label if term else str(iri)

    def candidates(self, text: str, kinds: Iterable[str] | None = None) -> list[Term]:
        wanted = set(kinds) if kinds is not None else None
        found = [self.terms[i] for i in sorted(self.by_name.get(normalise(text), ())) if i in self.terms]
        return [t for t in found if wanted is None or t.kinds & wanted]

    def suggest(self, text: str, kinds: Iterable[str] | None = None, *, limit: int = 3) -> list[str]:
        wanted = set(kinds) if kinds is not None else None
        pool: dict[str, str] = {}
        for norm, iris in self.by_name.items():
            for iri in iris:
                term = self.terms.get(iri)
                if term and (wanted is None or term.kinds & wanted):
                    pool.setdefault(norm, term.label)
        import difflib  # only on the error path

        close = difflib.get_close_matches(normalise(text), list(pool), n=limit, cutoff=0.6)
        return list(dict.fromkeys(pool[c] for c in close))

    def resolve(
        self, text: str, kinds: Iterable[str] | None = None, *, query: str = "", column: int | None = None, what: str = "name"
    ) -> Term:
        """The one term a name means, or a typed error with the column and suggestions."""
        kinds = list(kinds) if kinds is not None else None
        found = self.candidates(text, kinds)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            listing = ", ".join(f"{t.label} ({'/'.join(sorted(t.kinds))})" for t in found)
            raise AmbiguousTermError(f"'{text}' is ambiguous: {listing}", query=query, column=column)
        raise UnknownTermError(f"unknown {what} '{text}'", query=query, column=column, suggestions=self.suggest(text, kinds))

    def key(self, text: str, *, query: str = "", column: int | None = None) -> Key:
        found = self.keys.get(normalise(text))
        if found is not None:
            return found
        import difflib  # only on the error path

        close = difflib.get_close_matches(normalise(text), list(self.keys), n=3, cutoff=0.5)
        raise UnknownTermError(
            f"unknown key '{text}'",
            query=query,
            column=column,
            suggestions=list(dict.fromkeys(self.keys[c].key for c in close)),
        )

    def gpu_keys(self) -> list[Key]:
        keys = {k.iri: k for k in self.keys.values() if k.domain in (None, KBQ_NS + "GPU")}
        return sorted(keys.values(), key=lambda k: (k.order, k.key))

    # --- records for the library API --------------------------------------------------------

    def gpu_record(self, iri: str, run: Run) -> dict[str, object]:
        rows = run(PREFIXES + f"SELECT ?p ?v WHERE {{ <{iri}> ?p ?v }}").rows
        specs: dict[str, Value] = {}
        cooling, sources = [], []
        for p, v in rows:
            if p == "http://purl.org/dc/terms/source":
                sources.append(str(v))
            elif (k := self.keys_by_iri.get(str(p))) is not None:
                if k.iri == KBQ_NS + "availableCooling":
                    cooling.append(self.label(v))
                else:
                    specs[k.key] = self.label(v) if k.is_object else v
        units = {k.key: k.unit_symbol for k in self.gpu_keys() if k.unit_symbol and k.key in specs}
        return {
            "iri": iri,
            "name": self.label(iri),
            "specs": specs,
            "units": units,
            "cooling": sorted(cooling),
            "sources": sorted(sources),
        }

    def entity_record(self, iri: str, run: Run) -> dict[str, object]:
        term = self.terms[iri]
        rows = run(PREFIXES + f"SELECT ?p ?v WHERE {{ <{iri}> ?p ?v }} ORDER BY ?p ?v").rows
        props: dict[str, list[Value]] = defaultdict(list)
        comment, sources = None, []
        for p, v in rows:
            p = str(p)
            if p.endswith("#comment"):
                comment = comment or str(v)
            elif p == "http://purl.org/dc/terms/source":
                sources.append(str(v))
            else:
                name = p.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
                value = self.label(v) if isinstance(v, str) and v in self.terms else v
                if value not in props[name]:
                    props[name].append(value)
        return {
            "iri": iri,
            "name": term.label,
            "types": sorted(term.kinds),
            "comment": comment,
            "properties": dict(props),
            "sources": sorted(set(sources)),
        }
