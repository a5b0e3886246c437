"""Precision support of one accelerator: native, through a weight-only path, or not at all.

The same test the ranking filters its candidates with (kbq.lang.gpu.constraints.precision), asked
about one GPU, so 'memory for ... on V100 at bf16' and 'gpu for ... at bf16' agree."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang import terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context


class Support(NamedTuple):
    supported: bool
    path: str  # 'native FP8', 'weight-only FP8 (...)', or why not
    requirement: str  # the constraint's words ('runs FP16 natively')


def support(ctx: Context, gpu_iri: str, precision: Term) -> Support:
    from kbq.lang.gpu.constraints import precision as precision_test

    test, _notes, path_note = precision_test(ctx, precision, terms.iri(gpu_iri))
    path = path_note or '"native"'
    rows = ctx.rows(f"SELECT (IF({test.sparql}, 1, 0) AS ?ok) ({path} AS ?path) WHERE {{ }}")
    ok = bool(rows and rows[0][0] in (1, True, "1"))
    return Support(ok, str(rows[0][1]) if ok and rows else f"does not {test.text.replace('runs ', 'run ', 1)}", test.text)
