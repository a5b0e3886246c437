"""What the compiler knows of the KB.

Two parts, so a cold question does not load the whole KB:
- a small catalog of the vocabulary the compiler needs whole (query keys, units, ranking modes,
  settings, defaults), read once from the store and cached beside the snapshot (its size does
  not grow with the number of GPUs or models);
- name look-ups through the store's name index (kbq:normalisedName, written by the build), one
  SPARQL query for all the word runs of a question. Both go through the executor, so they work
  the same on the embedded snapshot and on a remote endpoint holding `kbq export` output.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import NamedTuple

from kbq.bounded import BoundedDict
from kbq.errors import AmbiguousTermError, UnknownTermError
from kbq.lang import terms
from kbq.store.executor import Table, Value
from kbq.store.names import normalise
from kbq.store.resources import KB_NS, KBQ_NS

Run = Callable[[str], Table]
CATALOG = "kbq-catalog.marshal"
CATALOG_FORMAT = 4
XSD = "http://www.w3.org/2001/XMLSchema#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
OWL_CLASS = "http://www.w3.org/2002/07/owl#Class"
FAMILY = "family"  # the pseudo-type of algorithm families (subclasses of kbq:Algorithm)
MAX_REMEMBERED = 20_000
"""Names and labels a catalog remembers (least recently used out first)."""
PREFIXES = f"""PREFIX kbq: <{KBQ_NS}>
PREFIX kb: <{KB_NS}>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX owl: <http://www.w3.org/2002/07/owl#>
PREFIX xsd: <{XSD}>
PREFIX dcterms: <http://purl.org/dc/terms/>
"""


def k(name: str) -> str:
    """An IRI of the kbq ontology."""
    return KBQ_NS + name


class Term(NamedTuple):
    iri: str
    label: str
    types: frozenset[str]  # rdf:type IRIs, plus FAMILY for an algorithm family

    def is_a(self, *classes: str) -> bool:
        return any(c in self.types for c in classes)

    @property
    def kinds(self) -> str:
        """The term's types as short words, for messages."""
        words = sorted({t.rsplit("#", 1)[-1].rsplit("/", 1)[-1] for t in self.types if t != OWL_CLASS})
        return "/".join(words) or "class"


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
    precision: str | None = None  # kbq:ratePrecision: the number format whose rate it states

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


class Mode(NamedTuple):
    """A ranking mode ('best', 'top', 'cheapest', 'best value')."""

    iri: str
    label: str
    strategy: str
    takes_number: bool
    limit: int | None
    runners_up: bool


class Setting(NamedTuple):
    iri: str
    label: str
    name: str
    dimension: str | None
    flag: bool


class Catalog:
    """The vocabulary of one KB (a plain class: cheap to define on the query path)."""

    def __init__(self, run: Run | None = None) -> None:
        self.run = run
        self.keys: dict[str, Key] = {}  # normalised key, label or alias -> Key (GPU keys, the language's default)
        self.domain_keys: dict[str, dict[str, Key]] = {}  # domain class -> its own keys (cloud instances ...)
        self.keys_by_iri: dict[str, Key] = {}
        self.units: dict[str, list[Unit]] = defaultdict(list)  # normalised name -> units (any dimension)
        self.modes: dict[str, Mode] = {}  # normalised label -> mode
        self.settings: dict[str, Setting] = {}  # normalised label -> setting
        self.fillers: set[str] = set()
        self.config: dict[str, object] = {}
        # Remembered look-ups, bounded: a server asked distinct questions must not grow (M-5).
        self._labels: BoundedDict[str, str] = BoundedDict(MAX_REMEMBERED)
        self._lookups: BoundedDict[str, list[Term]] = BoundedDict(MAX_REMEMBERED)

    # --- reading the vocabulary --------------------------------------------------------------

    @classmethod
    def read(cls, run: Run) -> Catalog:
        cat = cls(run)
        cat._read_units(run)
        cat._read_keys(run)
        cat._read_words(run)
        cat._read_config(run)
        return cat

    def _read_units(self, run: Run) -> None:
        rows = run(
            PREFIXES + "SELECT ?u ?name ?sym ?dim ?f WHERE { ?u a kbq:Unit ; kbq:symbol ?sym ; kbq:dimension ?dim ;"
            " kbq:factorToBase ?f . { ?u rdfs:label ?name } UNION { ?u skos:altLabel ?name }"
            " UNION { ?u kbq:symbol ?name } } ORDER BY ?u ?name"
        ).rows
        for u, name, sym, dim, f in rows:
            unit = Unit(str(u), str(sym), str(dim), float(f))  # type: ignore[arg-type]
            bucket = self.units[normalise(str(name))]
            if unit not in bucket:
                bucket.append(unit)

    def _read_keys(self, run: Run) -> None:
        rows = run(
            PREFIXES
            + """SELECT ?p ?key ?label ?range ?unit ?higher ?order ?domain ?prec WHERE {
  ?p kbq:queryKey ?key ; rdfs:label ?label .
  OPTIONAL { ?p rdfs:range ?range FILTER(?range != rdfs:Resource && ?range != owl:Thing) }
  OPTIONAL { ?p kbq:unit ?unit }
  OPTIONAL { ?p kbq:higherIsBetter ?higher }
  OPTIONAL { ?p kbq:displayOrder ?order }
  OPTIONAL { ?p rdfs:domain ?domain FILTER(?domain != owl:Thing) }
  OPTIONAL { ?p kbq:ratePrecision ?prec }
} ORDER BY ?p ?domain"""
        ).rows
        unit_by_iri = {u.iri: u for bucket in self.units.values() for u in bucket}
        for p, key, label, rng, unit, higher, order, domain, prec in rows:
            if str(p) in self.keys_by_iri:
                continue
            u = unit_by_iri.get(str(unit)) if unit else None
            entry = Key(
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
                precision=str(prec) if prec else None,
            )
            self.keys_by_iri[entry.iri] = entry
            self._place(normalise(entry.key), entry, first=True)
        aliases = run(
            PREFIXES + "SELECT ?p ?alt WHERE { ?p kbq:queryKey ?k . { ?p skos:altLabel ?alt } UNION { ?p rdfs:label ?alt } }"
        )
        for p, alt in aliases.rows:
            if (aliased := self.keys_by_iri.get(str(p))) is not None:
                self._place(normalise(str(alt)), aliased, first=False)

    def _place(self, name: str, key: Key, *, first: bool) -> None:
        """GPU keys (domain GPU or none) in `keys`; other domains' keys in their own table."""
        table = self.keys if key.domain in (None, KBQ_NS + "GPU") else self.domain_keys.setdefault(key.domain or "", {})
        if first:
            table[name] = key
        else:
            table.setdefault(name, key)

    def _read_words(self, run: Run) -> None:
        modes = run(
            PREFIXES
            + """SELECT ?m ?label ?name ?strategy ?number ?limit ?runners WHERE {
  ?m a kbq:RankingMode ; rdfs:label ?label ; kbq:rankStrategy ?strategy .
  { ?m rdfs:label ?name } UNION { ?m skos:altLabel ?name }
  OPTIONAL { ?m kbq:takesNumber ?number } OPTIONAL { ?m kbq:resultLimit ?limit } OPTIONAL { ?m kbq:showsRunnersUp ?runners }
} ORDER BY ?m ?name"""
        ).rows
        for m, label, name, strategy, number, limit, runners in modes:
            self.modes[normalise(str(name))] = Mode(
                str(m),
                str(label),
                str(strategy),
                number is True,
                int(limit) if limit is not None else None,
                runners is True,
            )
        settings = run(
            PREFIXES
            + """SELECT ?s ?label ?name ?key ?dim ?flag WHERE {
  ?s a kbq:Setting ; rdfs:label ?label ; kbq:settingName ?key .
  { ?s rdfs:label ?name } UNION { ?s skos:altLabel ?name }
  OPTIONAL { ?s kbq:settingDimension ?dim } OPTIONAL { ?s kbq:isFlag ?flag }
} ORDER BY ?s ?name"""
        ).rows
        for s, label, name, key, dim, flag in settings:
            self.settings[normalise(str(name))] = Setting(str(s), str(label), str(key), str(dim) if dim else None, flag is True)
        fillers = run(PREFIXES + "SELECT ?w WHERE { ?f a kbq:FillerWord . { ?f rdfs:label ?w } UNION { ?f skos:altLabel ?w } }")
        self.fillers = {normalise(str(w)) for (w,) in fillers.rows}

    def _read_config(self, run: Run) -> None:
        dense = run(PREFIXES + "SELECT ?n WHERE { kb:DenseChassis kbq:minCards ?n }").rows
        default = run(PREFIXES + "SELECT ?a WHERE { ?a kbq:isDefaultAuthority true } ORDER BY ?a LIMIT 1").rows
        decay = run(PREFIXES + "SELECT ?d WHERE { ?x a kbq:Defaults ; kbq:rankDecay ?d } LIMIT 1").rows
        columns = run(
            PREFIXES + "SELECT ?kind ?p WHERE { ?x a kbq:Defaults . { ?x kbq:defaultColumn ?p BIND('default' AS ?kind) }"
            " UNION { ?x kbq:alwaysColumn ?p BIND('always' AS ?kind) } } ORDER BY ?kind ?p"
        ).rows
        self.config = {
            "dense_threshold": int(dense[0][0]) if dense else 8,  # type: ignore[arg-type]
            "default_authority": str(default[0][0]) if default else None,
            "rank_decay": float(decay[0][0]) if decay else 0.5,  # type: ignore[arg-type]
            "default_columns": [str(p) for kind, p in columns if kind == "default"],
            "always_columns": [str(p) for kind, p in columns if kind == "always"],
        }

    # --- a cached copy beside the snapshot -----------------------------------------------------

    def _data(self) -> dict[str, object]:
        return {
            "format": CATALOG_FORMAT,
            "code": _code_stamp(),
            "keys": {k: v.iri for k, v in self.keys.items()},
            "domain_keys": {d: {k: v.iri for k, v in t.items()} for d, t in self.domain_keys.items()},
            "keys_by_iri": [tuple(k) for k in self.keys_by_iri.values()],
            "units": {k: [tuple(u) for u in us] for k, us in self.units.items()},
            "modes": {k: tuple(m) for k, m in self.modes.items()},
            "settings": {k: tuple(s) for k, s in self.settings.items()},
            "fillers": sorted(self.fillers),
            "config": self.config,
        }

    @classmethod
    def _from_data(cls, data: dict, run: Run | None) -> Catalog:
        if data.get("format") != CATALOG_FORMAT or data.get("code") != _code_stamp():
            raise ValueError("a catalog written by other code")
        cat = cls(run)
        cat.keys_by_iri = {k[0]: Key(*k) for k in data["keys_by_iri"]}
        cat.keys = {name: cat.keys_by_iri[iri] for name, iri in data["keys"].items()}
        cat.domain_keys = {d: {n: cat.keys_by_iri[i] for n, i in t.items()} for d, t in data["domain_keys"].items()}
        cat.units = defaultdict(list, {k: [Unit(*u) for u in us] for k, us in data["units"].items()})
        cat.modes = {k: Mode(*m) for k, m in data["modes"].items()}
        cat.settings = {k: Setting(*s) for k, s in data["settings"].items()}
        cat.fillers = set(data["fillers"])
        cat.config = data["config"]
        return cat

    @classmethod
    def cached(cls, folder: str | None, run: Run) -> Catalog:
        """The catalog of a snapshot, read once and cached beside it with a checksum.

        A missing, corrupt or tampered copy is read again from the store (never trusted)."""
        if folder is None:
            return cls.read(run)
        path = os.path.join(folder, CATALOG)
        try:
            with open(path, "rb") as handle:
                blob = handle.read()
            digest, payload = blob[:32], blob[32:]
            if hashlib.sha256(payload).digest() != digest:
                raise ValueError("catalog checksum mismatch")
            return cls._from_data(marshal.loads(payload), run)
        except (OSError, ValueError, KeyError, TypeError, EOFError, IndexError):
            pass
        cat = cls.read(run)
        payload = marshal.dumps(cat._data())
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as handle:
                handle.write(hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except OSError:  # a read-only cache: the catalog is simply not kept
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return cat

    # --- names ---------------------------------------------------------------------------------

    def lookup(self, texts: Iterable[str]) -> dict[str, list[Term]]:
        """Every KB term each text names (after normalising), in one query for all texts."""
        wanted = {normalise(t) for t in texts} - {""}
        known = {n: self._lookups[n] for n in wanted if n in self._lookups}
        missing = sorted(wanted - known.keys())
        if missing and self.run is not None:
            values = " ".join(terms.string(n) for n in missing)
            rows = self.run(
                PREFIXES
                + f"""SELECT ?n ?s ?label ?type WHERE {{
  VALUES ?n {{ {values} }}
  ?s kbq:normalisedName ?n .
  OPTIONAL {{ ?s rdfs:label ?label }}
  {{ ?s a ?type }} UNION {{ ?s rdfs:subClassOf kbq:Algorithm BIND("{FAMILY}" AS ?type) }}
  UNION {{ VALUES (?s ?type) {{ (kbq:Algorithm "{FAMILY}") }} }}
}}"""
            ).rows
            found: dict[str, dict[str, tuple[str, set[str]]]] = defaultdict(dict)
            for n, s, label, typ in rows:
                iri = str(s)
                entry = found[str(n)].setdefault(iri, (str(label) if label is not None else _local(iri), set()))
                if label is not None and entry[0] == _local(iri):
                    found[str(n)][iri] = entry = (str(label), entry[1])
                entry[1].add(str(typ))
            for n in missing:
                known[n] = [Term(iri, lab, frozenset(types)) for iri, (lab, types) in sorted(found.get(n, {}).items())]
                self._lookups[n] = known[n]
                for t in known[n]:
                    self._labels.setdefault(t.iri, t.label)
        return {n: known.get(n, []) for n in wanted}

    def candidates(self, text: str, classes: Iterable[str] | None = None) -> list[Term]:
        found = self.lookup([text]).get(normalise(text), [])
        wanted = set(classes) if classes is not None else None
        return [t for t in found if wanted is None or t.types & wanted]

    def suggest(self, text: str, classes: Iterable[str] | None = None, *, limit: int = 3) -> list[str]:
        """Close names of the wanted kinds (the error path: reads every name of those kinds)."""
        import difflib

        if self.run is None:
            return []
        kinds = [c for c in (classes or []) if c != FAMILY]
        filter_ = ""
        if classes is not None:
            parts = [f"{{ ?s a {terms.iri(c)} }}" for c in kinds]
            if FAMILY in (classes or []):
                parts.append("{ ?s rdfs:subClassOf kbq:Algorithm }")
            filter_ = " UNION ".join(parts) if parts else ""
        from kbq.bounded import BoundedDict

        asked = (normalise(text), filter_, limit)
        suggested: BoundedDict[tuple[str, str, int], list[str]] = self.__dict__.setdefault("_suggested", BoundedDict(512))
        if asked in suggested:  # the sentence reader tries many texts that fail the same way
            return list(suggested[asked])
        pools: BoundedDict[str, dict[str, str]] = self.__dict__.setdefault("_name_pools", BoundedDict(16))
        pool = pools.get(filter_)
        if pool is None:  # every name of those kinds, read once per KB
            rows = self.run(
                PREFIXES + f"SELECT DISTINCT ?n ?label WHERE {{ {filter_} ?s kbq:normalisedName ?n ; rdfs:label ?label }}"
            ).rows
            pool = {}
            for n, label in rows:
                pool.setdefault(str(n), str(label))
            pools[filter_] = pool
        close = difflib.get_close_matches(normalise(text), list(pool), n=limit, cutoff=0.6)
        suggested[asked] = list(dict.fromkeys(pool[c] for c in close))
        return list(suggested[asked])

    def resolve(
        self,
        text: str,
        classes: Iterable[str] | None = None,
        *,
        query: str = "",
        column: int | None = None,
        what: str = "name",
    ) -> Term:
        """The one term a name means, or a typed error with the column and suggestions."""
        classes = list(classes) if classes is not None else None
        found = self.candidates(text, classes)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            listing = ", ".join(f"{t.label} ({t.kinds})" for t in found)
            raise AmbiguousTermError(f"'{text}' is ambiguous: {listing}", query=query, column=column)
        raise UnknownTermError(f"unknown {what} '{text}'", query=query, column=column, suggestions=self.suggest(text, classes))

    def label(self, iri: Value) -> str:
        """The label of an IRI (looked up once, then remembered)."""
        text = str(iri)
        if text not in self._labels and self.run is not None and text.startswith(("http://", "https://")):
            rows = self.run(PREFIXES + f"SELECT ?l WHERE {{ {terms.iri(text)} rdfs:label ?l }} LIMIT 1").rows
            self._labels[text] = found = str(rows[0][0]) if rows else _local(text)
            return found
        return self._labels.get(text) or text

    def labels(self, iris: Iterable[Value]) -> dict[str, str]:
        """Labels of many IRIs in one query."""
        wanted = sorted(
            {str(i) for i in iris if isinstance(i, str) and i.startswith(("http://", "https://"))} - self._labels.keys()
        )
        if wanted and self.run is not None:
            values = " ".join(terms.iri(i) for i in wanted)
            rows = self.run(PREFIXES + f"SELECT ?s ?l WHERE {{ VALUES ?s {{ {values} }} ?s rdfs:label ?l }}").rows
            fresh: dict[str, str] = {}
            for s, label in rows:
                fresh.setdefault(str(s), str(label))
            for i in wanted:
                fresh.setdefault(i, _local(i))
                self._labels[i] = fresh[i]
        else:
            fresh = {}
        return {str(i): fresh.get(str(i)) or self._labels.get(str(i)) or str(i) for i in iris}

    # --- keys and units ------------------------------------------------------------------------

    def key(self, text: str, *, query: str = "", column: int | None = None, domain: str | None = None) -> Key:
        """A query key by name: the domain's own keys first (e.g. cloud instances), then GPU keys."""
        table = {**self.keys, **self.domain_keys.get(domain or "", {})}
        found = table.get(normalise(text))
        if found is not None:
            return found
        import difflib  # only on the error path

        close = difflib.get_close_matches(normalise(text), list(table), n=3, cutoff=0.5)
        raise UnknownTermError(
            f"unknown key '{text}' (`kbq keys` lists them)",
            query=query,
            column=column,
            suggestions=list(dict.fromkeys(table[c].key for c in close)),
        )

    def unit(self, text: str, dimension: str | None) -> Unit | None:
        for unit in self.units.get(normalise(text), []):
            if dimension is None or unit.dimension == dimension:
                return unit
        return None

    def unit_symbols(self, dimension: str | None) -> list[str]:
        return sorted({u.symbol for us in self.units.values() for u in us if u.dimension == dimension and u.symbol})

    def gpu_keys(self) -> list[Key]:
        keys = {k.iri: k for k in self.keys.values() if k.domain in (None, KBQ_NS + "GPU")}
        return sorted(keys.values(), key=lambda k: (k.order, k.key))

    def keys_for_range(self, types: Iterable[str]) -> list[Key]:
        """Object-valued GPU keys whose range is one of these types (a qualifier's key)."""
        types = set(types)
        return [k for k in self.gpu_keys() if k.is_object and k.range in types]


def _code_stamp() -> str:
    """Size and mtime of this module: a catalog cached by other code is read again."""
    st = os.stat(__file__)
    return f"{st.st_size}:{st.st_mtime_ns}"


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
