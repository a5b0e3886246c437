"""The workload questions as keyword arguments (the library's kb.memory / kb.speed / kb.train_time):
names are resolved against the KB and settings passed as numbers, never spliced into question text."""

from __future__ import annotations

from kbq.lang import ast
from kbq.lang.catalog import Catalog, Run, Term
from kbq.lang.context import Context
from kbq.lang.plan import Plan
from kbq.lang.words import GPU, GPU_FAMILY, MODEL, PRECISION, PROCESS, Hardware
from kbq.lang.workload.question import TRAINING, Asked, plan_for


def _phrase(text: str) -> ast.Phrase:
    words, column = [], 1
    for word in text.split():
        words.append(ast.Word(word, column, "number" if word[:1].isdigit() else "word"))
        column += len(word) + 1
    return ast.Phrase(tuple(words))


def workload_plan(
    catalog: Catalog,
    run: Run,
    form: str,
    model: str,
    *,
    process: str | None,
    precision: str | None,
    gpu: str | None,
    gpus: int,
    settings: dict[str, object],
) -> tuple[str, Plan]:
    text = f"{form} {model}"  # for error messages: each name is shown on its own
    ctx = Context(catalog, run, text)

    def name(value: str, classes: tuple[str, ...], what: str) -> Term:
        sub = Context(catalog, run, value)
        return sub.words.name(_phrase(value), classes, what)

    model_term = name(model, (MODEL,), "model")
    process_term = name(process, (PROCESS,), "process") if process else None
    if process_term is None:
        from kbq.lang.scenario import default_process

        process_term = (
            default_process(ctx, model_term) if form != "time" else Term(TRAINING, catalog.label(TRAINING), frozenset())
        )
        if process_term is None:
            raise ctx.error(f"say which process for {model_term.label}", None)
    precision_term = name(precision, (PRECISION,), "precision") if precision else None
    hardware = Hardware(gpus, name(gpu, (GPU, GPU_FAMILY), "GPU"), 1) if gpu else (Hardware(gpus, None, 1) if gpus != 1 else None)
    asked = Asked(model_term, process_term, precision_term, {k: v for k, v in settings.items() if v is not None}, hardware, 1)
    return text, plan_for(ctx, form, asked)
