"""Precision support of one accelerator: native, through a weight-only path, or not at all.

The same test the ranking filters its candidates with (kbq.lang.gpu.constraints.precision), asked
about one GPU, so 'memory for ... on V100 at bf16' and 'gpu for ... at bf16' agree."""

from __future__ import annotations

from typing import NamedTuple

from kbq.lang import sparql, terms
from kbq.lang.catalog import Term
from kbq.lang.context import Context


class Support(NamedTuple):
    supported: bool
    path: str  # 'native FP8', 'weight-only FP8 (...)', or why not
    requirement: str  # the constraint's words ('runs FP16 natively')


def support(ctx: Context, gpu_iri: str, precision: Term) -> Support:
    from kbq.lang.gpu.constraints import precision as precision_test

    test, _notes, path_note = precision_test(ctx, precision, "?gpu")
    rows = ctx.rows(sparql.one_row_if(terms.iri(gpu_iri), "?gpu", test.sparql, {"?path": path_note or '"native"'}))
    ok = bool(rows)
    return Support(ok, str(rows[0][0]) if ok else f"does not {test.text.replace('runs ', 'run ', 1)}", test.text)
