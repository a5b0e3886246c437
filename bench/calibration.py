"""The calibration set (kb/calibration.ttl and the measurements it marks) against kbq's answers.

Each row pairs a published measurement with kbq's estimate of it; `rows(kb)` returns them all and
`summary(rows)` the per-kind table (n, rows kbq could answer, median ratio, share within target),
fitted and held-out rows apart. bench/compare_estimates.py writes the report; tests/test_calibration.py
fails when a kind's share falls below the floor recorded in kb/calibration.ttl.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from kbq import KnowledgeBase
from kbq.lang.run import run_plan
from kbq.lang.workload.library import workload_plan

PREFIXES = (
    "PREFIX kbq: <https://kbq.dev/ontology#> PREFIX kb: <https://kbq.dev/kb/> "
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX dcterms: <http://purl.org/dc/terms/> "
)


@dataclass
class Row:
    kind: str  # the kind's local name (CalDecode, ...)
    what: str
    question: str
    published: float
    unit: str
    estimate: float | None  # None: kbq could not answer
    held_out: bool
    source: str
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.estimate is None or not self.published:
            return None
        return self.estimate / self.published


@dataclass
class Kind:
    name: str
    label: str
    tolerance: float
    factor: bool
    floor: float

    def within(self, ratio: float | None) -> bool:
        if ratio is None:
            return False
        if self.factor:
            return 1 / self.tolerance <= ratio <= self.tolerance
        return abs(ratio - 1) <= self.tolerance

    @property
    def target(self) -> str:
        return f"{self.tolerance:g}x" if self.factor else f"{self.tolerance:.0%}"


def _rows(kb: KnowledgeBase, query: str) -> list[list[object]]:
    return kb.table(PREFIXES + query).rows


def kinds(kb: KnowledgeBase) -> dict[str, Kind]:
    out = {}
    for k, label, tol, fac, floor in _rows(
        kb,
        "SELECT ?k ?l ?t ?f ?floor WHERE { ?k a kbq:CalibrationKind ; rdfs:label ?l ; kbq:tolerance ?t ;"
        " kbq:toleranceIsFactor ?f ; kbq:shareFloor ?floor }",
    ):
        name = str(k).rsplit("/", 1)[-1]
        out[name] = Kind(name, str(label), float(tol), str(fac).lower() in ("true", "1"), float(floor))  # type: ignore[arg-type]
    return out


def _unit_factors(kb: KnowledgeBase) -> dict[str, float]:
    return {
        str(s): float(f)  # type: ignore[arg-type]
        for s, f in _rows(
            kb, "SELECT ?s ?f WHERE { ?u a kbq:Unit ; kbq:symbol ?s ; kbq:factorToBase ?f ; kbq:dimension kb:DataSize }"
        )
    }


def answer_value(kb: KnowledgeBase, question: str, quantity: str) -> tuple[float | None, str]:
    """The named quantity of kbq's answer to `question`, or None and why not. A question whose
    `using BACKEND` clause kbq refuses is asked again without it (the note says so), so that the
    formulas are measured even where the backend cannot be named."""
    note = ""
    try:
        result = kb.answer(question)
    except Exception as exc:  # noqa: BLE001 - a question kbq cannot answer is a miss, reported with its reason
        if " using " not in question:
            return None, f"not askable: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:100]}"
        value, why = answer_value(kb, question.split(" using ")[0], quantity)
        return value, f"asked without 'using': {why}"
    for row in result.rows:
        if str(row[0]) == quantity:
            try:
                return float(row[1]), note  # type: ignore[arg-type]
            except (TypeError, ValueError):
                return None, f"'{quantity}' is not a number"
    return None, f"no '{quantity}' in the answer"


def point_rows(kb: KnowledgeBase) -> list[Row]:
    factors = _unit_factors(kb)
    out = []
    for _cal, kind, label, question, quantity, value, unit, meas, held, source in _rows(
        kb,
        "SELECT ?c ?k ?l ?q ?qty ?v ?u ?m ?h ?src WHERE { ?c a kbq:CalibrationPoint ; kbq:calibrationKind ?k ;"
        " kbq:calibrationQuestion ?q ; kbq:answerQuantity ?qty ; kbq:heldOut ?h ."
        " OPTIONAL { ?c rdfs:label ?cl } OPTIONAL { ?c kbq:publishedValue ?v ; kbq:publishedUnit ?u }"
        " OPTIONAL { ?c kbq:measurement ?m . OPTIONAL { ?m rdfs:label ?ml } }"
        " OPTIONAL { ?c dcterms:source ?src } BIND(COALESCE(?cl, ?ml) AS ?l) } ORDER BY ?c",
    ):
        if meas is not None and value is None:
            got = _rows(
                kb,
                f"SELECT ?v ?u ?src WHERE {{ <{meas}> kbq:perAccelerator|kbq:resultValue|kbq:gpuHours ?v ."
                f" OPTIONAL {{ <{meas}> kbq:perAcceleratorUnit|kbq:resultUnit ?u }}"
                f" OPTIONAL {{ <{meas}> dcterms:source ?src }} }} LIMIT 1",
            )
            value, unit, source = got[0][0], got[0][1] or "", source or got[0][2]
        published = float(value)  # type: ignore[arg-type]
        unit = str(unit)
        if unit in factors:  # a data size: compare in GB, kbq's unit (the published figure stays in the label)
            published *= factors[unit]
            unit = "GB"
        estimate, note = answer_value(kb, str(question), str(quantity))
        out.append(
            Row(
                str(kind).rsplit("/", 1)[-1],
                str(label),
                str(question),
                published,
                unit,
                estimate,
                str(held).lower() in ("true", "1"),
                str(source or ""),
                note,
            )
        )
    return out


def _total(kb: KnowledgeBase, model: str, **settings: object) -> float:
    process = settings.pop("process", None)
    precision = settings.pop("precision", None)
    text, plan = workload_plan(
        kb.catalog, kb.table, "memory", model, process=process, precision=precision, gpu=None, gpus=1, settings=settings
    )  # type: ignore[arg-type]
    result = run_plan(text, plan, kb.catalog, kb.table)
    return float(next(r[1] for r in result.rows if r[0] == "total"))  # type: ignore[arg-type]


def bert_rows(kb: KnowledgeBase) -> list[Row]:
    """The BERT authors' largest batch on a 12 GB Titan X (12 GiB of GDDR5X) against the largest batch
    whose training memory kbq puts within it, asked as the authors ran it ('using tensorflow': TensorFlow
    1.11, FP32, Adam). Rows with a published batch of 0 measure nothing and are left out."""
    out = []
    capacity = 12 * _unit_factors(kb).get("GiB", 1.0)
    for _r, model, scenario, batch, held in _rows(
        kb,
        "SELECT ?r ?model ?s ?v ?h WHERE { ?r kbq:suite kb:BERTMaxBatchTable ; kbq:benchmarkModel/rdfs:label ?model ;"
        " kbq:scenario ?s ; kbq:resultValue ?v ; kbq:heldOut ?h } ORDER BY ?r",
    ):
        published = int(batch)  # type: ignore[call-overload]
        if not published:
            continue
        seq = int(str(scenario).split()[1].rstrip(","))
        question = f"memory for {model} training at fp32 with {seq} context batch {{b}} using tensorflow"
        low, high = 0, 512  # the largest batch whose total fits: binary search on kbq's answer
        while low < high:
            mid = (low + high + 1) // 2
            total, _note = answer_value(kb, question.format(b=mid), "total")
            if total is not None and total <= capacity:
                low = mid
            else:
                high = mid - 1
        out.append(
            Row("CalFineTuneMemory", f"{model} fine-tuning, seq {seq}: largest batch in 12 GiB", question.format(b="B"),
                float(published), "batch", float(low), str(held).lower() in ("true", "1"),
                "https://github.com/google-research/bert/blob/master/README.md")
        )  # fmt: skip
    return out


def kv_budget_rows(kb: KnowledgeBase) -> list[Row]:
    blocks = {
        str(u): float(v)  # type: ignore[arg-type]
        for u, v in _rows(kb, "SELECT ?u ?v WHERE { ?r kbq:suite kb:VLLMStartupLog ; kbq:resultUnit ?u ; kbq:resultValue ?v }")
    }
    if not blocks:
        return []
    per_request = blocks["GiB reserved for the KV cache"] * 2**30 / blocks["concurrent 8192-token requests"] / 1e9
    question = "memory for llama 3 8b inference at fp16 with 8192 context"
    estimate, note = answer_value(kb, question, "KV cache")
    return [
        Row(
            "CalMemory",
            "Llama 3 8B KV cache per 8,192-token request (vLLM budget / concurrency)",
            question,
            per_request,
            "GB",
            estimate,
            False,
            "https://github.com/vllm-project/vllm/issues/12330",
            note,
        )
    ]


def serving_rows(kb: KnowledgeBase) -> list[Row]:
    """TensorRT-LLM's maximum-load output tokens/s at fixed input/output lengths, paired with kbq's
    continuous-batching estimate as the speed answer itself pairs them."""
    held = {
        str(r): str(h).lower() in ("true", "1")
        for r, h in _rows(kb, "SELECT ?r ?h WHERE { ?r kbq:suite kb:TensorRTLLMPerfOverview ; kbq:heldOut ?h }")
    }
    labels = {
        str(lab): str(r) for r, lab in _rows(kb, "SELECT ?r ?l WHERE { ?r kbq:suite kb:TensorRTLLMPerfOverview ; rdfs:label ?l }")
    }
    out = []
    groups = _rows(
        kb,
        "SELECT DISTINCT ?model ?gpu ?p ?tp WHERE { ?r kbq:suite kb:TensorRTLLMPerfOverview ;"
        " kbq:benchmarkModel/rdfs:label ?model ; kbq:accelerator/rdfs:label ?gpu ; kbq:measuredPrecision/rdfs:label ?p ;"
        " kbq:tensorParallel ?tp } ORDER BY ?model ?gpu ?tp",
    )
    for model, gpu, precision, tp in groups:
        # the ModelOpt FP8/FP4 checkpoints are assumed to carry an FP8 KV cache (the page does not state it)
        question = f"speed of {model} inference at {str(precision).lower()} on {tp} x {gpu} with fp8 kv cache using tensorrt-llm"
        try:
            answer = kb.answer(question)
        except Exception:  # noqa: BLE001 - a kbq that cannot name the backend is asked without it
            answer = kb.answer(question.split(" using ")[0])
        for measured, compared in zip(answer.rows, answer.rows[1:], strict=False):
            if not (str(measured[0]).startswith("measured: ") and str(compared[0]).startswith("estimate / measured (serving")):
                continue
            label = str(measured[0]).removeprefix("measured: ")
            what = label.split(": ")[0]
            published = float(measured[1])  # type: ignore[arg-type]
            estimate = published * float(compared[1])  # type: ignore[arg-type]
            out.append(
                Row(
                    "CalServing",
                    what,
                    question,
                    published,
                    "tokens/s per GPU",
                    estimate,
                    held.get(labels.get(label, ""), False),
                    "TensorRT-LLM perf overview",
                )
            )
    return out


def training_rows(kb: KnowledgeBase) -> list[Row]:
    out = []
    for model, gpu, hours, tokens, held, source, precision in _rows(
        kb,
        "SELECT ?model ?gpu ?h ?t ?held (SAMPLE(?s) AS ?src) (SAMPLE(?pl) AS ?prec) WHERE { ?r a kbq:TrainingRun ;"
        " kbq:trainedModel/rdfs:label ?model ; kbq:gpuHours ?h ;"
        " kbq:trainingTokens ?t ; kbq:trainingGpu/rdfs:label ?gpu ; kbq:heldOut ?held ."
        " OPTIONAL { ?r dcterms:source ?s } OPTIONAL { ?r kbq:trainingPrecision/rdfs:label ?pl } }"
        " GROUP BY ?model ?gpu ?h ?t ?held ORDER BY ?model",
    ):
        at = f" at {str(precision).lower()}" if precision else ""  # the run's own precision
        question = f"time to train {model}{at} on {float(tokens) / 1e9:g}b tokens with 1 x {gpu}"  # type: ignore[arg-type]
        estimate, note = answer_value(kb, question, "GPU-hours")
        out.append(
            Row(
                "CalTraining",
                f"{model}, {float(tokens):.3g} tokens",
                question,
                float(hours),
                "GPU-h",  # type: ignore[arg-type]
                estimate,
                str(held).lower() in ("true", "1"),
                str(source or "model card / paper"),
                note,
            )
        )
    return out


def rows(kb: KnowledgeBase) -> list[Row]:
    return point_rows(kb) + kv_budget_rows(kb) + bert_rows(kb) + serving_rows(kb) + training_rows(kb)


@dataclass
class Stats:
    n: int
    asked: int
    median: float | None
    within: int

    @property
    def share(self) -> float:
        return self.within / self.n if self.n else 0.0


def stats(kind: Kind, subset: list[Row]) -> Stats:
    ratios = [r.ratio for r in subset if r.ratio is not None]
    return Stats(
        len(subset), len(ratios), statistics.median(ratios) if ratios else None, sum(kind.within(r.ratio) for r in subset)
    )


def summary(all_rows: list[Row], all_kinds: dict[str, Kind]) -> dict[str, tuple[Stats, Stats, Stats]]:
    """Per kind: (all rows, fitted rows, held-out rows)."""
    out = {}
    for name, kind in all_kinds.items():
        mine = [r for r in all_rows if r.kind == name]
        out[name] = (
            stats(kind, mine),
            stats(kind, [r for r in mine if not r.held_out]),
            stats(kind, [r for r in mine if r.held_out]),
        )
    return out
