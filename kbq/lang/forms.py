"""The question forms, in one table: for each kind of answer, what it answers, the compiler that
plans it and the shaper that turns its rows into the answer. Every form that concerns a workload
is a view on one scenario (kbq.lang.scenario) and its evaluations (kbq.lang.evaluate).

Compilers and shapers are named as 'module:function' and imported only when a plan of that kind
is compiled or shaped, so a cold `kbq` call that answers from a cached plan loads only its own
form's code. tests/test_contract.py checks every entry resolves."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple


class Shaped(NamedTuple):
    """What a form's shaper returns: the answer's table and its explanation."""

    rows: list[list[Any]]
    columns: list[str]
    explanation: list[str]
    removed: list[list[Any]] = []  # noqa: RUF012
    extra: dict[str, object] = {}  # noqa: RUF012


class Form(NamedTuple):
    kind: str  # the plan kind (Result.kind)
    answers: str
    compiler: str  # module:function that builds the plan
    shaper: str  # module:function(plan, rows, catalog, run, explain) -> Shaped


FORMS: dict[str, Form] = {
    f.kind: f
    for f in (
        Form("gpus", "rank GPUs, for a workload or by a key; compare GPUs for a workload; KEY of GPU",
             "kbq.lang.gpu.question:compile_gpus", "kbq.lang.run:shape_gpus"),
        Form("why", "why a GPU for a workload: its place in the ranking", "kbq.lang.compile:why", "kbq.lang.run:shape_why"),
        Form("instances", "cloud instances, for a workload: each evaluated on its own GPUs",
             "kbq.lang.instances:compile_instances", "kbq.lang.run:shape_instances"),
        Form("memory", "memory of a workload, and does it fit on N x GPU", "kbq.lang.workload.question:compile_workload",
             "kbq.lang.workload.answer:shape"),
        Form("how_many", "how many of a GPU a workload needs (the cards-needed rule)",
             "kbq.lang.workload.question:compile_workload", "kbq.lang.workload.answer:shape"),
        Form("speed", "decode, prefill and serving speed of a language model on N x GPU",
             "kbq.lang.workload.question:compile_workload", "kbq.lang.workload.answer:shape"),
        Form("time", "time to train a model on N tokens", "kbq.lang.workload.question:compile_workload",
             "kbq.lang.workload.answer:shape"),
        Form("capacity", "max context, max batch or concurrent users whose KV caches a serving engine fits on N x GPU",
             "kbq.lang.workload.question:compile_capacity", "kbq.lang.workload.answer:shape"),
        Form("describe", "one thing's figures and their sources", "kbq.lang.knowledge:describe", "kbq.lang.run:shape_describe"),
        Form("compare", "GPUs side by side (no workload)", "kbq.lang.knowledge:compare", "kbq.lang.run:shape_compare"),
        Form("list", "lists: frameworks, applications, keys, units ...",
             "kbq.lang.knowledge:list_question", "kbq.lang.run:shape_list"),
        Form("requirements", "a workload's requirement profiles, rank by rank", "kbq.lang.knowledge:requirements",
             "kbq.lang.run:shape_rows"),
        Form("models", "models that fit on hardware, largest first; the largest (a reverse question)",
             "kbq.lang.workload.reverse:fitting_models", "kbq.lang.workload.answer:shape"),
        Form("versus", "setups side by side for a model (N x GPU vs M x GPU, budgets): memory verdict and decode rate",
             "kbq.lang.workload.versus:compare_setups", "kbq.lang.workload.answer:shape"),
    )
}  # fmt: skip


def _load(ref: str) -> Callable[..., Any]:
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def shaper(kind: str) -> Callable[..., Shaped]:
    """The shaper of a plan kind (a kind no form declares is shown as its rows)."""
    form = FORMS.get(kind)
    return _load(form.shaper if form else "kbq.lang.run:shape_rows")


def compiler(kind: str) -> Callable[..., Any]:
    return _load(FORMS[kind].compiler)
