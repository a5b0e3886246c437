"""Write tests/data/tiny_kb/kb/: the tests' tiny knowledge base, a subset of the shipped kb/.

A few GPUs and models (SEEDS) with everything they state and everything that states something about
them and nothing else (benchmark results, prices, calibration points, cloud instances of those GPUs
and models only), plus every other kb/ file's subjects that are no GPU or model (vendors, families,
sources, the language's words and settings, defaults, precisions, ...), each file under its shipped
name. Every triple is a shipped one, so every number keeps its source; the ontology, shapes and rules
are not copied (KBQ_DATA_DIR without ontology/ uses the shipped ones). Run it again when the shipped
KB changes shape: `python scripts/gen_tiny_kb.py` (tests/test_tiny_kb.py builds the result).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "tiny_kb" / "kb"
KB = "https://kbq.dev/kb/"
KBQ = "https://kbq.dev/ontology#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")

# The GPUs and models the tests ask about (the golden questions' Titan RTX, Quadro RTX 8000, RTX 2080 Ti,
# one card per later generation, BERT, ResNet-50, GNMT, two Llamas), and those that make every rule of
# ontology/rules/ derive something, as the hand-written KB does (tests/test_tiny_kb.py checks it): a card
# without tensor cores, unified memory, an AMD card, a diffusion model.
SEEDS = {
    "GPU": [
        *("TitanRTX", "QuadroRTX8000", "RTX2080Ti", "RTX3090", "RTX4090", "A100SXM80GB", "H100SXM"),
        *("GTX1080Ti", "AppleM2Ultra", "MI300X"),
    ],
    "Model": ["BERT", "BERTBase", "BERTLarge", "ResNet50", "GNMT", "Llama3_8B", "Llama3_70B", "StableDiffusionXL"],
}
# Files of GPUs, models and what is stated about them: only what concerns the seeds is kept.
CONTENT = (
    "gpus_",
    "models_",
    "benchmarks_",
    "measurements",
    "calibration.",
    "cloud",
    "prices",
    "training_runs",
    "software_support",
    "rocm_support",
    "vision_compute",
)
PREFIXES = {
    "kbq": KBQ,
    "kb": KB,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "dcterms": "http://purl.org/dc/terms/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "prov": "http://www.w3.org/ns/prov#",
}


def entities() -> dict[str, str]:
    """IRI -> 'GPU' or 'Model' for every GPU and model of the shipped KB (from its reasoned snapshot)."""
    sys.path.insert(0, str(ROOT))
    from kbq import KnowledgeBase

    kb = KnowledgeBase.default()
    found: dict[str, str] = {}
    for kind in SEEDS:
        for (iri,) in kb.table(f"SELECT ?s WHERE {{ ?s a <{KBQ}{kind}> }}").rows:
            found[str(iri)] = kind
    return found


def main() -> None:
    kinds = entities()
    seeds = {KB + name for names in SEEDS.values() for name in names}
    assert seeds <= kinds.keys(), sorted(seeds - kinds.keys())
    by_file: dict[str, list[ox.Triple]] = {}
    about: dict[ox.NamedNode | ox.BlankNode, list[ox.Triple]] = defaultdict(list)
    for path in sorted((ROOT / "kb").glob("*.ttl")):
        triples = [q.triple for q in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)]
        by_file[path.name] = triples
        for t in triples:
            about[t.subject].append(t)

    def refs(node: ox.NamedNode | ox.BlankNode) -> set[ox.NamedNode | ox.BlankNode]:
        """IRIs and blank nodes `node` states something about, through its blank nodes."""
        out: set[ox.NamedNode | ox.BlankNode] = set()
        todo, seen = [node], {node}
        while todo:
            for t in about.get(todo.pop(), ()):
                o = t.object
                if isinstance(o, ox.BlankNode) and o not in seen:
                    seen.add(o)
                    todo.append(o)
                elif isinstance(o, ox.NamedNode) and t.predicate != RDF_TYPE:
                    out.add(o)
        return out

    def allowed(node: ox.NamedNode | ox.BlankNode) -> bool:
        return not (isinstance(node, ox.NamedNode) and node.value in kinds and node.value not in seeds)

    content = {name for name in by_file if name.startswith(CONTENT)}
    home = {t.subject: name for name, triples in by_file.items() for t in triples}
    named = [s for s in about if isinstance(s, ox.NamedNode)]
    keep: set[ox.NamedNode | ox.BlankNode] = {s for s in named if s.value in seeds}
    keep |= {s for s in named if s.value not in kinds and home[s] not in content}  # vendors, words, settings, ...
    attached = {s for s in named if s.value in seeds}
    while True:  # a content file's statements about the seeds (a result, a price), and about those (a calibration point)
        more = {
            s
            for s in named
            if s not in attached
            and s.value not in kinds
            and home[s] in content
            and (links := refs(s)) & attached
            and all(allowed(r) for r in links)
        }
        if not more:
            break
        attached |= more
    keep |= attached

    def reaches_an_entity(node: ox.NamedNode) -> bool:
        todo, seen = [node], {node}
        while todo:
            for r in refs(todo.pop()):
                if r.value in kinds:
                    return True
                if r in about and r not in seen:
                    seen.add(r)
                    todo.append(r)
        return False

    # sources, citations and calibration points (questions about the shipped KB's models) only when referred to
    data = {ox.NamedNode(KBQ + c) for c in ("Source", "Citation", "CalibrationPoint")}
    owned = {r for s in named if s.value in kinds and s.value not in seeds for r in refs(s)}  # other GPUs' board designs
    keep |= {  # a content file's own vocabulary (the unified-memory share rules, calibration kinds, suites)
        s
        for s in named
        if s.value not in kinds
        and home[s] in content
        and s not in owned
        and not any(t.predicate == RDF_TYPE and t.object in data for t in about[s])
        and not reaches_an_entity(s)
    }
    while True:  # what the kept subjects refer to (a seed's board design, family, sources)
        more = {r for s in keep for r in refs(s) if r in about and r not in keep and allowed(r)}
        if not more:
            break
        keep |= more
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.ttl"):
        old.unlink()
    for name, triples in by_file.items():
        subjects = {t.subject for t in triples if isinstance(t.subject, ox.NamedNode) and t.subject in keep}
        chosen = _with_blank_nodes(triples, subjects, about)
        chosen = [t for t in chosen if not isinstance(t.object, ox.NamedNode) or allowed(t.object)]
        if chosen:
            data = ox.Dataset(ox.Quad(t.subject, t.predicate, t.object) for t in chosen)
            data.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)  # blank node labels stable from run to run
            ordered = sorted((q.triple for q in data), key=str)
            body = ox.serialize(ordered, format=ox.RdfFormat.TURTLE, prefixes=PREFIXES)
            head = f"# A subset of the shipped kb/{name}, written by scripts/gen_tiny_kb.py: do not edit.\n"
            (OUT / name).write_bytes(head.encode() + body)
    print(f"{OUT}: {sum(1 for _ in OUT.glob('*.ttl'))} files, {len(keep)} subjects")


def _with_blank_nodes(
    triples: list[ox.Triple],
    subjects: set[ox.NamedNode | ox.BlankNode],
    about: dict[ox.NamedNode | ox.BlankNode, list[ox.Triple]],
) -> list[ox.Triple]:
    chosen: list[ox.Triple] = []
    todo = list(subjects)
    seen = set(subjects)
    mine = set(triples)
    while todo:
        for t in about.get(todo.pop(), ()):
            if t in mine:
                chosen.append(t)
                if isinstance(t.object, ox.BlankNode) and t.object not in seen:
                    seen.add(t.object)
                    todo.append(t.object)
    return chosen


if __name__ == "__main__":
    main()
