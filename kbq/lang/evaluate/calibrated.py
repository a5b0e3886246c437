"""Calibrated constants: an efficiency that holds for a range (backend, GPU memory type, tensor
cores or not, weight bits, compute precision, model size, GPU architecture), fitted on the
calibration set (kb/calibrated.ttl) and chosen per scenario: of the kbq:CalibratedConstant
entries of a name whose every condition holds, the one with the most conditions wins; with none,
the general kbq:Constant of that name (kb/arithmetic.ttl) applies. The chosen one carries its
label, what it was fitted on and its source, which the answer shows.

Also the backend a question names ('using vllm') or the KB's default backend for its form."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context
from kbq.lang.workload import facts

BACKEND = "https://kbq.dev/ontology#Backend"


class Situation(NamedTuple):
    """What the conditions of a calibrated constant are checked against."""

    backend: str | None = None  # the backend's IRI
    gpu: str | None = None  # the GPU's IRI (memory type, architecture, tensor cores read from it)
    tensor: bool | None = None  # the GPU has a tensor (matrix) rate above zero
    bits: float | None = None  # the weights' bits per weight
    compute: str | None = None  # the compute precision's IRI
    params: float | None = None  # active parameters
    model: str | None = None  # the model's IRI (kbq:forModelClass: its classes, itself and what it is a variant of)


class Chosen(NamedTuple):
    value: float
    label: str
    fitted_on: str  # '' for a general constant
    source: str

    def describe(self) -> str:
        return self.label + (f" (fitted on {self.fitted_on})" if self.fitted_on else "")


def _gpu_facts(ctx: Context, gpu: str | None) -> tuple[str | None, str | None]:
    if not gpu:  # no card, or a memory budget ('on 24gb'): no IRI, so no memory type or architecture
        return None, None
    rows = ctx.rows(
        f"SELECT ?type ?arch WHERE {{ OPTIONAL {{ {terms.iri(gpu)} kbq:memoryType ?type }}"
        f" OPTIONAL {{ {terms.iri(gpu)} kbq:architecture ?arch }} }} LIMIT 1"
    )
    if not rows:
        return None, None
    mem_type, arch = rows[0]
    return (str(mem_type) if mem_type else None), (str(arch) if arch else None)


def _families(ctx: Context, model: str | None) -> set[str]:
    """The model, what it is a variant of and its classes (kbq:CNN ...): what kbq:forModelClass names."""
    if model is None:
        return set()
    rows = ctx.rows(f"SELECT ?f WHERE {{ {{ {terms.iri(model)} kbq:variantOf* ?f }} UNION {{ {terms.iri(model)} a ?f }} }}")
    return {str(f) for (f,) in rows} | {model}


def choose(ctx: Context, name: str, s: Situation) -> Chosen | None:
    """The most specific calibrated constant `name` for situation `s`, else the general constant."""
    rows = ctx.rows(
        "SELECT ?c ?v ?label ?fit ?backend ?mem ?tensor ?minb ?maxb ?compute ?minp ?maxp ?arch ?fam WHERE {"
        f" ?c a kbq:CalibratedConstant ; kbq:constantName {terms.string(name)} ; kbq:value ?v ; rdfs:label ?label ."
        " OPTIONAL { ?c kbq:fittedOn ?fit } OPTIONAL { ?c kbq:forBackend ?backend } OPTIONAL { ?c kbq:forMemoryType ?mem }"
        " OPTIONAL { ?c kbq:forTensorCores ?tensor } OPTIONAL { ?c kbq:forMinBits ?minb } OPTIONAL { ?c kbq:forMaxBits ?maxb }"
        " OPTIONAL { ?c kbq:forComputePrecision ?compute } OPTIONAL { ?c kbq:forMinParams ?minp }"
        " OPTIONAL { ?c kbq:forMaxParams ?maxp } OPTIONAL { ?c kbq:forArchitecture ?arch }"
        " OPTIONAL { ?c kbq:forModelClass ?fam } } ORDER BY ?c"
    )
    mem_type, arch = _gpu_facts(ctx, s.gpu)
    families = _families(ctx, s.model) if any(row[-1] is not None for row in rows) else set()
    best_score, best = -1, None
    for row in rows:
        c, v, label, fit, backend, mem, tensor, minb, maxb, compute, minp, maxp, garch, fam = row
        checks = [
            backend is None or str(backend) == s.backend,
            mem is None or (mem_type is not None and mem_type.upper().startswith(str(mem).upper())),
            tensor is None or (s.tensor is not None and (str(tensor).lower() in ("true", "1")) == s.tensor),
            minb is None or (s.bits is not None and s.bits >= float(minb)),
            maxb is None or (s.bits is not None and s.bits < float(maxb)),
            compute is None or str(compute) == s.compute,
            minp is None or (s.params is not None and s.params >= float(minp)),
            maxp is None or (s.params is not None and s.params < float(maxp)),
            garch is None or str(garch) == arch,
            fam is None or str(fam) in families,
        ]
        if not all(checks):
            continue
        score = sum(x is not None for x in (backend, mem, tensor, minb, maxb, compute, minp, maxp, garch, fam))
        if score > best_score:
            best_score, best = score, row
    if best is not None:
        c, v, label, fit = best[:4]
        return Chosen(float(str(v)), str(label), str(fit or ""), facts.source_labels(ctx, str(c)))
    general = facts.constants(ctx).get(name)
    return Chosen(general.value, general.label, "", general.source) if general else None


def backend(ctx: Context, named: Term | None, form: str) -> Term | None:
    """The backend a question named, else the KB's default for this question form (None: none)."""
    if named is not None:
        return named
    rows = ctx.rows(
        f"SELECT ?b ?l WHERE {{ ?b a kbq:Backend ; kbq:defaultBackendFor {terms.string(form)} ; rdfs:label ?l }}"
        " ORDER BY ?b LIMIT 1"
    )
    return Term(str(rows[0][0]), str(rows[0][1]), frozenset()) if rows else None


def splits_layers(ctx: Context, backend_term: Term | None) -> bool:
    if backend_term is None:
        return False
    rows = ctx.rows(f"SELECT ?s WHERE {{ {terms.iri(backend_term.iri)} kbq:splitsLayers ?s }} LIMIT 1")
    return bool(rows) and str(rows[0][0]).lower() in ("true", "1")
