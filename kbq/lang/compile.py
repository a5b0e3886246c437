"""AST -> Plan. Names, keys and units are resolved through the catalog and the store's name
index; every term is emitted by kbq.lang.terms (no user text reaches SPARQL). The subject of a
question decides its form: a GPU ranking, a cloud-instance ranking or a list."""

from __future__ import annotations

from kbq.lang import ast, knowledge
from kbq.lang.catalog import OWL_CLASS, Catalog, Run, Term, k
from kbq.lang.context import Context
from kbq.lang.gpu.question import compile_gpus
from kbq.lang.instances import INSTANCE, compile_instances
from kbq.lang.plan import Plan
from kbq.lang.words import GPU, GPU_FAMILY, MODEL, Hardware, Subject
from kbq.store.names import normalise

PROFILE_AUTHORITY = k("ProfileAuthority")
CAPACITY_QUESTION = k("CapacityQuestion")


def compile_ast(question: ast.Question, catalog: Catalog, run: Run, text: str) -> Plan:
    ctx = Context(catalog, run, text)
    if (figure := _figure_of_gpus(ctx, question)) is not None:
        return figure
    if (reverse := _reverse(ctx, question)) is not None:
        from kbq.lang.workload.reverse import fitting_models

        plan = fitting_models(ctx, reverse.clauses, reverse.hardware, largest=reverse.largest)
        plan.extra["lookups"] = ctx.lookups[:3]
        return plan
    if isinstance(question, ast.SubjectQuestion) and question.target is not None:
        capacity = ctx.cat.candidates(question.subject.text, [CAPACITY_QUESTION]) if question.subject.words else []
        if len(capacity) == 1:  # 'max context for MODEL on GPU', 'concurrent users for ...'
            from kbq.lang.workload.question import compile_capacity

            plan = compile_capacity(ctx, question, capacity[0])
            plan.extra["lookups"] = ctx.lookups
            return plan
    if isinstance(question, ast.SubjectQuestion):
        subject = ctx.words.subject(question.subject, question.link)
        if subject.cls.iri == GPU:
            return compile_gpus(ctx, question, subject)
        if subject.cls.iri == INSTANCE:
            return compile_instances(ctx, question, subject)
        if subject.mode is not None or question.clauses:
            first = question.clauses[0] if question.clauses else None
            column = _clause_column(first) if first is not None else question.subject.column
            raise ctx.error(f"'{subject.cls.label}' is a list: it takes no ranking or clauses", column)
        target = knowledge.list_target(ctx, question, subject.cls)
        return knowledge.list_question(ctx, subject, target, question.target.phrase.column if question.target else 1)
    if isinstance(question, ast.DescribeQuestion):
        return knowledge.describe(ctx, question)
    if isinstance(question, ast.CompareQuestion):
        if question.target is not None:
            return compare_for(ctx, question)
        return knowledge.compare(ctx, question)
    if isinstance(question, ast.RequirementsQuestion):
        workload = ctx.words.workload(question.target)
        authority = None
        for clause in question.clauses:
            if isinstance(clause, ast.Using):
                authority = ctx.words.name(clause.name, (PROFILE_AUTHORITY,), "profile authority")
        return knowledge.requirements(ctx, workload, authority, question.target.phrase.column)
    if isinstance(question, ast.WhyQuestion):
        return why(ctx, question)
    from kbq.lang.workload.question import compile_workload

    assert isinstance(question, ast.WorkloadQuestion)  # a reverse question returned above
    plan = compile_workload(ctx, question)
    plan.extra["lookups"] = ctx.lookups
    return plan


def _reverse(ctx: Context, q: ast.Question) -> ast.ReverseQuestion | None:
    """'models that fit on X' (its subject must name models) and 'largest model for X' / 'largest
    model on X' (a ranking mode whose strategy is 'size', with models as its kind)."""
    if isinstance(q, ast.ReverseQuestion):
        subject = ctx.words.content(q.subject) or q.subject
        found = ctx.cat.candidates(subject.text, [OWL_CLASS]) or ctx.cat.candidates(subject.text.rstrip("s"), [OWL_CLASS])
        if not any(t.iri == MODEL for t in found):
            raise ctx.error(f"'{q.subject.text} fit': only models fit (e.g. 'models that fit on rtx 4090')", q.subject.column)
        return q
    if not isinstance(q, ast.SubjectQuestion) or len(q.subject.words) < 2:
        return None
    words = q.subject.words
    for cut in range(len(words) - 1, 0, -1):
        mode = ctx.cat.modes.get(normalise(" ".join(w.text for w in words[:cut])))
        if mode is not None:
            break
    else:
        return None
    if mode.strategy != "size":
        return None
    rest = ast.Phrase(words[cut:])
    kinds = ctx.cat.candidates(rest.text, [OWL_CLASS]) + ctx.cat.candidates(rest.text.rstrip("s"), [OWL_CLASS])
    if not any(t.iri == MODEL for t in kinds):
        raise ctx.error(f"'{mode.label}' ranks models: ask '{mode.label} model for GPU'", q.subject.column)
    hardware = q.target.phrase if q.target is not None and q.link == "for" else None
    return ast.ReverseQuestion(q.subject, q.clauses, hardware, largest=True)


def why(ctx: Context, q: ast.WhyQuestion) -> Plan:
    gpu = ctx.words.name(q.gpu, (GPU,), "GPU")
    plan = compile_gpus(
        ctx, ast.SubjectQuestion(subject=ast.Phrase(()), link="for", target=q.target, clauses=q.clauses), _gpus(ctx)
    )
    plan.kind, plan.subject = "why", gpu.iri
    return plan


def _figure_of_gpus(ctx: Context, q: ast.Question) -> Plan | None:
    """'price of rtx 4090', 'memory of a100', 'bandwidth of h100 sxm5': a GPU key of named GPUs,
    answered as 'gpus where name in (...) order by KEY' (a family lists its variants)."""
    if isinstance(q, ast.SubjectQuestion) and q.link == "of" and q.target is not None and q.target.of is None:
        word, target = q.subject, q.target.phrase
    elif isinstance(q, ast.WorkloadQuestion) and q.form == "memory" and q.target.of is None and not q.clauses:
        word, target = ast.Phrase((ast.Word("memory", q.target.phrase.column),)), q.target.phrase
    else:
        return None
    key = ctx.cat.keys.get(normalise(word.text))
    found = ctx.cat.candidates(target.text, [GPU, GPU_FAMILY])
    if key is None or len(found) != 1 or not found[0].is_a(GPU, GPU_FAMILY):
        return None
    clauses = (_named(target), ast.Order(ast.Ratio(ast.Word(key.key, word.column)), None), *q.clauses)
    return compile_gpus(ctx, ast.SubjectQuestion(subject=ast.Phrase(()), clauses=clauses), _gpus(ctx))


def compare_for(ctx: Context, q: ast.CompareQuestion) -> Plan:
    """'compare A and B for WORKLOAD': the workload's ranking, kept to the named GPUs (memory fit,
    cards needed, score and evidence for each), as 'gpus for WORKLOAD where name in (A, B)'."""
    if len(q.names) < 2:
        raise ctx.error("compare needs two GPUs (or a family with several variants)", q.names[0].column)
    assert q.target is not None
    if (setups := _setups(ctx, q.names)) is not None:
        from kbq.lang.workload.versus import compare_setups

        return compare_setups(ctx, setups, q)
    clauses = (_named(*q.names), *q.clauses)
    plan = compile_gpus(
        ctx, ast.SubjectQuestion(subject=ast.Phrase(()), link="for", target=q.target, clauses=clauses), _gpus(ctx)
    )
    plan.explanation.insert(0, "compare: " + ", ".join(p.text for p in q.names) + " for the workload, in its ranking order")
    return plan


def _setups(ctx: Context, names: tuple[ast.Phrase, ...]) -> list[Hardware] | None:
    """'2 x rtx 3090 vs rtx 4090', '2 x 24gb vs 48gb': hardware (counts or memory budgets) on a
    side; None when every side is one named GPU (the ranking comparison)."""
    found = []
    for phrase in names:
        words = ctx.words
        item = words.hardware(phrase) or words.budget(phrase.words)
        found.append(item)
    if any(h is None for h in found) or all(h is not None and h.count == 1 and h.memory is None for h in found):
        return None
    return [h for h in found if h is not None]


def _gpus(ctx: Context) -> Subject:
    """The subject 'gpus', for forms that reuse the GPU compiler (why, compare for, KEY of GPU)."""
    return Subject(Term(GPU, ctx.cat.label(GPU), frozenset({OWL_CLASS})))


def _named(*names: ast.Phrase) -> ast.Where:
    """'where name in (NAMES)'."""
    column = names[0].column
    return ast.Where(ast.Membership(ast.Word("name", column), False, names), column)


def _clause_column(clause: ast.Clause) -> int:
    for name in ("column",):
        if hasattr(clause, name):
            return int(getattr(clause, name))
    if isinstance(clause, ast.AsOf):
        return clause.value.column
    if isinstance(clause, ast.Order):
        return clause.ratio.column
    if isinstance(clause, ast.Using):
        return clause.name.column
    return 1


def compile_question(text: str, catalog: Catalog, run: Run) -> Plan:
    """Parse and compile; `run` answers the compiler's look-ups (names, profiles, model facts)."""
    from kbq.lang.parse import parse  # imports lark: only when a question is not in the plan cache

    return compile_ast(parse(text), catalog, run, text)
