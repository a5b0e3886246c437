"""The hardware a scenario runs on: an accelerator record whose figures may be unknown.

A named GPU fills every figure the KB sources; a memory budget ('on a 24 gb gpu') is an
Accelerator with only `memory_gb` (iri None): evaluation reads what is there and says what is not.
Plain data (a NamedTuple of numbers and strings), so a cached plan can hold one."""

from __future__ import annotations

from typing import NamedTuple


class Price(NamedTuple):
    """The one price of a card at a date (see evaluate.cost.PRICE_RULE): value, kind and date."""

    usd: float
    kind: str  # the observation's kind label (e.g. 'launch MSRP', 'street price')
    date: str  # ISO date it was observed


class Accelerator(NamedTuple):
    label: str
    iri: str | None = None  # None: a memory budget, not a card in the KB
    memory_gb: float | None = None
    bandwidth_gbps: float | None = None
    rates: dict[str, float] = {}  # noqa: RUF012  # query key -> dense TFLOPS (tensor, fp8 ...)
    interconnect: str | None = None
    link_gbps: float | None = None
    tdp_w: float | None = None
    price: Price | None = None

    @property
    def is_budget(self) -> bool:
        return self.iri is None


def budget(memory_gb: float, label: str | None = None) -> Accelerator:
    """A memory budget as hardware: 'a 24 GB GPU', every other figure unknown."""
    return Accelerator(label or f"a {memory_gb:g} GB GPU", None, memory_gb)


# --- the memory a GPU's work may use: one rule for every form ----------------------------------
# A unified pool (Apple Silicon, Jetson) lets the GPU wire only part of it: the derived
# kbq:gpuUsableMemory (ontology/rules/unified-memory.rq); any other card offers its kbq:memory. Both
# are datasheet 'GB' (binary GiB): `work_memory_gb` turns them into the GB the arithmetic uses. The
# memory form (kbq.lang.workload.facts.gpu), a ranking's cards column, 'in N cards' and cloud
# instances all read this pattern, so a card holds a workload in every form or in none.


WORK_MEMORY_VAR = "fit_work_memory"  # the variable a ranking's rows carry it in (kbq.lang.gpu.evaluated)


def work_memory_pattern(gpu: str, var: str, *, pool: str | None = None, required: bool = False) -> str:
    """SPARQL binding ?var to the datasheet GB `gpu` (a variable or an IRI) may use for work.
    `pool`: a variable the query already binds to kbq:memory (one look-up fewer); `required`: only
    GPUs with a memory size match (a plain triple, cheaper than OPTIONAL inside an EXISTS)."""
    if pool is None:
        pool = f"?{var}_pool"
        memory = f"{gpu} kbq:memory {pool} ."
        head = memory if required else f"OPTIONAL {{ {memory} }}"
    else:
        head = ""
    return f"{head} OPTIONAL {{ {gpu} kbq:gpuUsableMemory ?{var}_gpu }} BIND(COALESCE(?{var}_gpu, {pool}) AS ?{var})".strip()


def work_memory_gb(datasheet_gb: float | None, memory_factor: float) -> float | None:
    """The work memory in the GB the arithmetic uses (datasheet 'GB' count binary GiB: gpu_memory_factor)."""
    return None if datasheet_gb is None else datasheet_gb * memory_factor
