"""The library API: KnowledgeBase.default() / .load(*overlays) / .remote(url).

The library never prints or exits; it raises the typed errors of kbq.errors.
"""

from __future__ import annotations

import contextlib
import os

from kbq.store import executor, snapshot
from kbq.store.executor import Table

TYPE_CHECKING = False  # typing costs a cold start; annotations are strings (PEP 563)
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
    from collections.abc import Callable, Iterator
    from pathlib import Path

    import pyoxigraph

    from kbq.lang.catalog import Catalog
    from kbq.lang.plan import Plan, PlanCache
    from kbq.lang.run import Result
    from kbq.models import GPU, Answer, Entity, Estimate, SparqlResult


class KnowledgeBase:
    """The inferred KB behind one executor (an embedded snapshot or a remote endpoint)."""

    def __init__(
        self,
        run: Callable[[str], Table],
        *,
        info: snapshot.SnapshotInfo | None = None,
        store: pyoxigraph.Store | None = None,
        endpoint: str | None = None,
    ) -> None:
        self._run = run
        self.info = info
        self.store = store
        self.endpoint = endpoint
        self._catalog: Catalog | None = None
        self._plans: PlanCache | None = None
        self._reopen: Callable[[], tuple[pyoxigraph.Store, snapshot.SnapshotInfo]] | None = None

    # --- construction -------------------------------------------------------------------

    @classmethod
    def default(cls, *, engine: str = snapshot.DEFAULT_ENGINE, progress: snapshot.Progress | None = None) -> KnowledgeBase:
        """The shipped KB (snapshot built on first use, then cached)."""
        return cls.load(engine=engine, progress=progress)

    @classmethod
    def load(
        cls,
        *overlays: str | Path,
        engine: str = snapshot.DEFAULT_ENGINE,
        rebuild: bool = False,
        progress: snapshot.Progress | None = None,
    ) -> KnowledgeBase:
        """The shipped KB with user Turtle overlays layered on top (no file is modified)."""
        from kbq.build import pipeline

        paths = [os.fspath(p) for p in overlays]
        store, info = pipeline.ensure(paths, engine=engine, rebuild=rebuild, progress=progress)
        kb = cls(lambda q: executor.select(store, q), info=info, store=store)
        kb._reopen = lambda: pipeline.ensure(paths, engine=engine, progress=progress)
        return kb

    def _healing(self, work: Callable[[], T]) -> T:
        """`work()`; when the engine finds the snapshot damaged (it is then marked so), the
        snapshot is rebuilt now and `work()` runs once more: a question heals the cache too (M-9)."""
        from kbq.errors import CacheError

        try:
            return work()
        except CacheError:
            if self._reopen is None:
                raise
            store, info = self._reopen()
            self.store, self.info, self._catalog, self._plans = store, info, None, None
            self._run = lambda q: executor.select(store, q)
            return work()

    @classmethod
    def remote(cls, url: str, *, timeout: float = 30.0) -> KnowledgeBase:
        """A KB served by an external SPARQL 1.1 endpoint holding `kbq export` output."""
        from kbq.store.remote import remote_select

        return cls(lambda q: remote_select(url, q, timeout=timeout), endpoint=url)

    # --- queries ------------------------------------------------------------------------

    def table(self, query: str, *, allow_service: bool = False, timeout: float | None = executor.QUERY_TIMEOUT) -> Table:
        """Raw SPARQL to a plain Table (no pydantic): the fast path the CLI uses.

        Checked first (kbq.store.guard): SERVICE, which sends the query to another endpoint,
        is refused unless `allow_service=True`; nesting and constructs longer than the engine
        survives are refused. Past `timeout` seconds (None: no limit) QueryTimeoutError: the
        engine cannot be stopped, so it finishes in a background thread."""
        from kbq.store.guard import check_query

        check_query(query, allow_service=allow_service)
        return self._healing(lambda: executor.within(timeout, lambda: self._run(query)))

    def sparql(self, query: str, *, allow_service: bool = False, timeout: float | None = executor.QUERY_TIMEOUT) -> SparqlResult:
        """Run a SPARQL 1.1 query over the asserted + inferred graph (SERVICE, timeout: see `table`)."""
        from kbq.models import SparqlResult

        table = self.table(query, allow_service=allow_service, timeout=timeout)
        # The executor already typed every value; construct without re-validating.
        return SparqlResult.model_construct(columns=table.columns, rows=table.rows)

    @property
    def catalog(self) -> Catalog:
        """Names, query keys and units read from the KB (loaded once)."""
        if self._catalog is None:
            from kbq.lang.catalog import Catalog

            with self._endpoint_data():
                self._catalog = Catalog.cached(self.info.path if self.info else None, self._run)
        return self._catalog

    @contextlib.contextmanager
    def _endpoint_data(self) -> Iterator[None]:
        """With a remote KB, data kbq cannot work with is the endpoint's fault, not a bug in kbq:
        an EndpointError naming it (issue 22, L-7), never an internal error."""
        if self.endpoint is None:
            yield
            return
        try:
            yield
        except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
            from kbq.store.remote import EndpointError

            raise EndpointError(
                f"the data from {self.endpoint} is not what kbq expects ({type(exc).__name__}: {str(exc)[:300]}); "
                "is it an endpoint holding `kbq export` output?"
            ) from None

    def plan(self, text: str) -> Plan:
        """The compiled question (cached beside an embedded snapshot: see kbq.lang.plan)."""
        cache = self._plan_cache()
        plan = cache.get(text) if cache else None
        if plan is None:
            from kbq.lang.sentence import compile_text

            with self._endpoint_data():
                plan = compile_text(text, self.catalog, self._run)
            if cache:
                cache.put(text, plan)
        return plan

    def answer(self, text: str, *, explain: bool = False) -> Result:
        """Compile and run a kbq question; the answer every door shares (see `ask` for pydantic)."""
        from kbq.lang.run import run_plan

        def work() -> Result:
            plan = self.plan(text)
            with self._endpoint_data():
                return run_plan(text, plan, self.catalog, self._run, explain=explain)

        return self._healing(work)

    def _plan_cache(self) -> PlanCache | None:
        if self.info is None or os.environ.get("KBQ_NO_PLAN_CACHE"):
            return None
        if self._plans is None:
            from kbq.lang.plan import PlanCache

            self._plans = PlanCache(os.path.join(self.info.path, "plans"))
        return self._plans

    def ask(self, text: str, *, explain: bool = False) -> Answer:
        """Answer a kbq question (e.g. 'gpu for lstm where cooling=blower'), units included."""
        from kbq.models import Answer

        result = self.answer(text, explain=explain)
        return Answer.model_validate(result, from_attributes=True)

    def compile(self, text: str) -> str:
        """The SPARQL a kbq question compiles to (for a computed answer, the look-ups it reads)."""
        return self.plan(text).shown_sparql()

    def gpus(
        self,
        *,
        where: str | None = None,
        order_by: str | None = None,
        descending: bool = True,
        limit: int | None = None,
        workload: str | None = None,
    ) -> list[GPU]:
        """GPUs matching a kbq condition (e.g. where='memory >= 24gb'), ranked for a workload.

        The question is built as structure (an AST), never by joining text: `workload` is a
        name, `where` a condition, `order_by` a key."""
        from kbq.lang import records
        from kbq.lang.run import run_plan
        from kbq.models import GPU

        text, plan = records.gpu_plan(
            self.catalog, self._run, where=where, order_by=order_by, descending=descending, limit=limit, workload=workload
        )
        answer = run_plan(text, plan, self.catalog, self._run)
        return [GPU.model_validate(records.gpu_record(self.catalog, self._run, str(row[0]))) for row in answer.rows]

    def _estimate(self, form: str, model: str, **options: object) -> Estimate:
        from kbq.lang.run import run_plan
        from kbq.lang.workload.library import workload_plan
        from kbq.models import Estimate, EstimateLine

        process, precision, gpu = (_optional_text(options.pop(name, None)) for name in ("process", "precision", "gpu"))
        gpus = int(options.pop("gpus", 1))  # type: ignore[call-overload]  # 0 or a negative count is an error, not 1
        text, plan = workload_plan(
            self.catalog,
            self._run,
            form,
            model,
            process=process,
            precision=precision,
            gpu=gpu,
            gpus=gpus,
            settings=options,
        )
        result = run_plan(text, plan, self.catalog, self._run)
        lines = []
        for row in result.rows:
            if form == "memory":
                per_gpu = row[2] if len(row) == 5 else None
                lines.append(
                    EstimateLine(
                        part=str(row[0]), value=row[1], unit="GB", per_gpu=per_gpu, formula=str(row[-2]), source=str(row[-1])
                    )
                )
            else:
                lines.append(
                    EstimateLine(
                        part=str(row[0]),
                        value=row[1],
                        unit=str(row[2]) if len(row) == 5 else "",
                        formula=str(row[-2]),
                        source=str(row[-1]),
                    )
                )
        chart = result.extra.get("chart", {})
        return Estimate.model_validate(
            {
                "question": text,
                "headline": result.headline,
                "kind": result.kind,
                "lines": lines,
                "explanation": result.explanation,
                "verdict": result.verdict,
                "numbers": result.numbers,
                "chart": chart if isinstance(chart, dict) else {},
            }
        )

    def memory(
        self,
        model: str,
        *,
        process: str | None = None,
        precision: str | None = None,
        context: int | None = None,
        batch: int | None = None,
        gpu: str | None = None,
        gpus: int = 1,
        zero_stage: int | None = None,
        offload: bool = False,
        lora_rank: int | None = None,
        kv_precision: str | None = None,
    ) -> Estimate:
        """Memory for a model (weights, KV cache, activations, gradients, optimizer, runtime).

        >>> kb.memory("llama 3.1 8b", precision="fp16", context=8192).lines[0].part  # doctest: +SKIP
        'weights'
        """
        kv = None
        if kv_precision is not None:
            kv = self.catalog.resolve(kv_precision, ["https://kbq.dev/ontology#Precision"])
        return self._estimate(
            "memory", model, process=process, precision=precision, gpu=gpu, gpus=gpus, context=context, batch=batch,
            zero_stage=zero_stage, offload=offload or None, lora_rank=lora_rank, kv_precision=kv,
        )  # fmt: skip

    def speed(
        self, model: str, *, gpu: str, gpus: int = 1, precision: str | None = None, context: int | None = None,
        batch: int | None = None, mfu: float | None = None, bandwidth_efficiency: float | None = None,
    ) -> Estimate:  # fmt: skip
        """Decode and prefill tokens/s on `gpus` x `gpu` (an estimate with its formula and constants)."""
        return self._estimate(
            "speed", model, process=None, precision=precision, gpu=gpu, gpus=gpus, context=context, batch=batch,
            mfu=mfu, bandwidth_efficiency=bandwidth_efficiency,
        )  # fmt: skip

    def train_time(self, model: str, *, tokens: float, gpu: str, gpus: int = 1, mfu: float | None = None) -> Estimate:
        """GPU-hours and days to train on `tokens` with `gpus` x `gpu` (6 x N x D / (GPUs x FLOPS x MFU))."""
        return self._estimate("time", model, process=None, precision=None, gpu=gpu, gpus=gpus, tokens=tokens, mfu=mfu)

    def entity(self, name: str) -> Entity:
        """Anything in the KB by label or alternative label."""
        from kbq.lang import records
        from kbq.models import Entity

        iri = self.catalog.resolve(name).iri
        return Entity.model_validate(records.entity_record(self.catalog, self._run, iri))


def _optional_text(value: object) -> str | None:
    return None if value is None else str(value)
