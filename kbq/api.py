"""The library API: KnowledgeBase.default() / .load(*overlays) / .remote(url).

The library never prints or exits; it raises the typed errors of kbq.errors.
"""

from __future__ import annotations

import os

from kbq.store import executor, snapshot
from kbq.store.executor import Table

TYPE_CHECKING = False  # typing costs a cold start; annotations are strings (PEP 563)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pyoxigraph

    from kbq.lang.catalog import Catalog
    from kbq.lang.plans import PlanCache
    from kbq.lang.run import Result
    from kbq.models import GPU, Answer, Entity, SparqlResult


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
        return cls(lambda q: executor.select(store, q), info=info, store=store)

    @classmethod
    def remote(cls, url: str, *, timeout: float = 30.0) -> KnowledgeBase:
        """A KB served by an external SPARQL 1.1 endpoint holding `kbq export` output."""
        from kbq.store.remote import remote_select

        return cls(lambda q: remote_select(url, q, timeout=timeout), endpoint=url)

    # --- queries ------------------------------------------------------------------------

    def table(self, query: str, *, allow_service: bool = False) -> Table:
        """Raw SPARQL to a plain Table (no pydantic): the fast path the CLI uses.

        Checked first (kbq.store.guard): SERVICE, which sends the query to another endpoint,
        is refused unless `allow_service=True`; nesting the engine cannot parse is refused."""
        from kbq.store.guard import check_query

        check_query(query, allow_service=allow_service)
        return self._run(query)

    def sparql(self, query: str, *, allow_service: bool = False) -> SparqlResult:
        """Run a SPARQL 1.1 query over the asserted + inferred graph (SERVICE: see `table`)."""
        from kbq.models import SparqlResult

        table = self.table(query, allow_service=allow_service)
        # The executor already typed every value; construct without re-validating.
        return SparqlResult.model_construct(columns=table.columns, rows=table.rows)

    @property
    def catalog(self) -> Catalog:
        """Names, query keys and units read from the KB (loaded once)."""
        if self._catalog is None:
            from kbq.lang.catalog import Catalog

            self._catalog = Catalog.cached(self.info.path if self.info else None, self._run)
        return self._catalog

    def answer(self, text: str, *, explain: bool = False) -> Result:
        """Compile and run a kbq question; returns the internal answer (see `ask`).

        Compiled questions are cached beside an embedded snapshot (kbq.lang.plans)."""
        from kbq.lang.run import compile_question, run_plan

        cache = self._plan_cache()
        plan = cache.get(text) if cache else None
        if plan is None:
            plan = compile_question(text, self.catalog, self._run)
            if cache:
                cache.put(text, plan)
        return run_plan(text, plan, self.catalog, self._run, explain=explain)

    def _plan_cache(self) -> PlanCache | None:
        if self.info is None or os.environ.get("KBQ_NO_PLAN_CACHE"):
            return None
        if self._plans is None:
            from kbq.lang.plans import PlanCache

            self._plans = PlanCache(os.path.join(self.info.path, "plans"))
        return self._plans

    def ask(self, text: str, *, explain: bool = False) -> Answer:
        """Answer a kbq question (e.g. 'gpu for lstm where cooling=blower')."""
        from kbq.models import Answer

        result = self.answer(text, explain=explain)
        return Answer.model_validate(result, from_attributes=True)

    def compile(self, text: str) -> str:
        """The SPARQL a kbq question compiles to."""
        from kbq.lang.run import compile_question

        return compile_question(text, self.catalog, self._run).sparql

    def gpus(
        self,
        *,
        where: str | None = None,
        order_by: str | None = None,
        descending: bool = True,
        limit: int | None = None,
        workload: str | None = None,
    ) -> list[GPU]:
        """GPUs matching a kbq condition (e.g. where='memory >= 24gb'), ranked for a workload."""
        from kbq.models import GPU

        text = "gpus" + (f" for {workload}" if workload else "")
        if where:
            text += f" where {where}"
        if order_by:
            text += f" order by {order_by} {'desc' if descending else 'asc'}"
        if limit is not None:
            text += f" limit {int(limit)}"
        answer = self.answer(text)
        gpus = []
        for iri in [row[0] for row in answer.rows]:
            gpus.append(GPU.model_validate(self.catalog.gpu_record(str(iri), self._run)))
        return gpus

    def entity(self, name: str) -> Entity:
        """Anything in the KB by label or alternative label."""
        from kbq.models import Entity

        iri = self.catalog.resolve(name).iri
        return Entity.model_validate(self.catalog.entity_record(iri, self._run))
