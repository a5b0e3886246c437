"""Write a synthetic KB N times the shipped one: every kb/ file copied N-1 more times with its
kb: IRIs (and blank nodes) renamed per copy, over the same ontology. Used by bench_build.py.

Run: python bench/make_synthetic.py 100 /tmp/kbq-synthetic.nt
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyoxigraph as ox

from kbq.store import resources

KBQ = resources.KBQ_NS
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
# Entities that a bigger KB has more of; shared vocabulary (units, profiles, recipes,
# vendors, cooling types ...) is not copied, as a real KB would not repeat it. SDK releases are
# not copied either: ontology/rules/cuda-support.rq relates every release to every GPU in its
# compute-capability range, so copying both would grow that rule's output with the square of the
# factor (1.2 million triples at 10x, about 120 million at 100x) and measure that rule, not the build.
COPIED = {KBQ + c for c in ("GPU", "BoardDesign", "Model", "Application", "Framework", "SDK", "Platform")}


def _rename(term: object, copy: int, entities: set[str]) -> object:
    if isinstance(term, ox.NamedNode) and term.value in entities:
        return ox.NamedNode(f"{term.value}-syn{copy}")
    if isinstance(term, ox.BlankNode):
        return ox.BlankNode(f"{term.value}syn{copy}")
    return term


def write_parts(factor: int, out: Path, copies_per_file: int = 40) -> tuple[list[Path], int]:
    """`write` in files of at most `copies_per_file` copies each (an overlay file has a size limit,
    kbq.store.snapshot.MAX_OVERLAY_BYTES; a copy's blank nodes stay in its file): the files, the triples."""
    files, total = [], 0
    for n, first in enumerate(range(1, factor, copies_per_file)):
        part = out.with_name(f"{out.stem}-{n}{out.suffix}")
        total += write(min(first + copies_per_file, factor), part, first=first)
        files.append(part)
    return files, total


def write(factor: int, out: Path, first: int = 1) -> int:
    """Write factor-1 renamed copies of every entity's triples (the shipped KB is the first);
    `first`: start at that copy (a part of a larger KB)."""
    files = [f for f in resources.knowledge_files() if f.parent.name == "kb"]
    triples = [t for f in files for t in ox.parse(path=str(f), format=ox.RdfFormat.TURTLE)]
    entities = {t.subject.value for t in triples if t.predicate.value == RDF_TYPE and t.object.value in COPIED}
    owned = {t.object for t in triples if isinstance(t.object, ox.BlankNode) and t.subject.value in entities}
    chosen = [t for t in triples if t.subject.value in entities or t.subject in owned]
    copies = []
    for copy in range(first, factor):
        copies += [
            ox.Triple(_rename(t.subject, copy, entities), t.predicate, _rename(t.object, copy, entities))  # type: ignore[arg-type]
            for t in chosen
        ]
    out.write_bytes(ox.serialize(copies, format=ox.RdfFormat.N_TRIPLES) or b"")
    return len(copies)


def write_gpus(count: int, out: Path) -> int:
    """Write an overlay of `count` new GPUs: copies of the shipped GPUs' own triples (blank nodes
    included) under new IRIs; their board designs, vendors and sources stay the shipped ones."""
    files = [f for f in resources.knowledge_files() if f.parent.name == "kb"]
    triples = [t for f in files for t in ox.parse(path=str(f), format=ox.RdfFormat.TURTLE)]
    gpus = sorted({t.subject.value for t in triples if t.predicate.value == RDF_TYPE and t.object.value == KBQ + "GPU"})
    owned = {t.object for t in triples if isinstance(t.object, ox.BlankNode) and t.subject.value in gpus}
    by_gpu: dict[str, list[ox.Triple]] = {g: [] for g in gpus}
    for t in triples:
        if t.subject.value in by_gpu:
            by_gpu[t.subject.value].append(t)
    blank = [t for t in triples if t.subject in owned]
    out_triples = []
    for n in range(count):
        gpu = gpus[n % len(gpus)]
        mine = {gpu}
        for t in by_gpu[gpu] + [b for b in blank if b.subject in {x.object for x in by_gpu[gpu]}]:
            out_triples.append(ox.Triple(_rename(t.subject, n, mine), t.predicate, _rename(t.object, n, mine)))  # type: ignore[arg-type]
    out.write_bytes(ox.serialize(out_triples, format=ox.RdfFormat.N_TRIPLES) or b"")
    return len(out_triples)


if __name__ == "__main__":
    n = write(int(sys.argv[1]), Path(sys.argv[2]))
    print(f"wrote {n} extra triples to {sys.argv[2]}")
