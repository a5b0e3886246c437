"""The words of a GPU answer: which workload, which profile and why, how the ranking works,
and every constraint. Templates only; the facts come from the KB."""

from __future__ import annotations

from kbq.lang.catalog import Term
from kbq.lang.context import Constraint, Context
from kbq.lang.gpu.ordering import Profile

METHODS = {
    "profile": "ranked by the profile: each rank weighs {decay:g}x the one before; figures are divided by the best among the "
    "candidates (the lowest for lower-is-better ones); an unknown figure counts as the candidates' mean (neither zero "
    "nor best) and is listed; ties by name",
    "price": "ranked by price (lowest first; price x cards needed when the workload needs several); "
    "GPUs without a price come last",
    "value": "ranked by profile score per dollar (score / (price x cards needed)); GPUs without a price come last, and"
    " so do GPUs whose first-rank figure is unknown (a cheap card's imputed figure would otherwise decide)",
    "efficiency": "ranked by profile score per watt of board power (score / (TDP x cards needed)); GPUs whose"
    " first-rank figure is unknown come after those with it known",
    "evidence": "ranked by measured results first (MLPerf, per accelerator), then by the profile for GPUs without one",
    "order": "ordered by {order}; ties by the profile score, then name",
    "name": "no workload named, so GPUs are listed by name",
}


def workload_line(workload: Term | None, process: Term | None, defaulted: bool) -> str | None:
    if workload is None and process is None:
        return None
    what = " ".join(x.label for x in (process, workload) if x is not None)
    kinds = _kind_word(workload) if workload else "process"
    note = " (process assumed: the family's default)" if defaulted and process is not None else ""
    return f"workload: {what} ({kinds}){note}"


def profile_lines(ctx: Context, profile: Profile, workload: Term | None) -> list[str]:
    inherited = "" if workload and profile.family == workload.iri else f", inherited from {ctx.cat.label(profile.family)}"
    lines = [f"profile: {profile.label} ({profile.authority_label}{inherited}): {profile.summary}"]
    if profile.multi_gpu:
        lines.append(f"multi-GPU scaling: {profile.multi_gpu}")
    if profile.source:
        lines.append(f"source: {ctx.cat.label(profile.source)}")
    return lines


def method_line(strategy: str, decay: float, order: str | None = None) -> str:
    return "method: " + METHODS[strategy].format(decay=decay, order=order or "")


def constraint_lines(constraints: list[Constraint]) -> list[str]:
    return [f"constraint: {c.text}" for c in constraints]


_KINDS = (("Model", "model"), ("ApplicationArea", "application area"), ("Application", "application"))


def _kind_word(term: Term) -> str:
    for suffix, word in _KINDS:
        if any(t.endswith("#" + suffix) for t in term.types):
            return word
    return "algorithm family" if "family" in term.types else term.kinds
