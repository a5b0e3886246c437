"""Write a snapshot's on-disk store in a process of its own (run by kbq.build.pipeline).

RocksDB's write costs about 10 us of CPU per quad and pyoxigraph's bulk_extend holds the GIL
while it runs, so in the building process it could only take turns with validation and
reasoning; here it runs on another core. A fork would share the in-memory store for free, but
RocksDB's background threads do not survive a fork (a forked child that opens a store after its
parent opened one waits forever), so this is a fresh interpreter that imports only pyoxigraph.

    python -P snapshot_writer.py FOLDER ASSERTED.nt GRAPH REST.nq

writes the triples of ASSERTED.nt into the named graph GRAPH of the store at FOLDER at once,
waits for a line `go` on stdin (end of input: the build failed, stop), then writes the quads of
REST.nq, flushes and compacts the store. The files are what pyoxigraph wrote: `ox.parse` keeps
their blank nodes' names (a store's load renames them), so the two parts refer to the same
nodes. An error goes to stderr and the exit status is 1.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable

import pyoxigraph as ox

BATCH = 1_000_000  # quads: pyoxigraph's bulk-load batch


def bulk_extend(disk: ox.Store, quads: Iterable[ox.Quad]) -> None:
    """`disk.bulk_extend` one batch at a time: in one call, pyoxigraph holds up to three batches
    (about 0.5 GB each) while its threads write the files; one at a time bounds the peak."""
    rest = iter(quads)
    while (head := next(rest, None)) is not None:
        disk.bulk_extend(itertools.chain((head,), itertools.islice(rest, BATCH - 1)))


def write(folder: str, asserted: str, graph: str, rest: str) -> None:
    disk = ox.Store(folder)
    name = ox.NamedNode(graph)
    triples = ox.parse(path=asserted, format=ox.RdfFormat.N_TRIPLES)
    bulk_extend(disk, (ox.Quad(t.subject, t.predicate, t.object, name) for t in triples))
    os.remove(asserted)  # read: its disk space back while the build reasons (600 MB at 100x)
    if sys.stdin.readline().strip() != "go":
        return
    bulk_extend(disk, ox.parse(path=rest, format=ox.RdfFormat.N_QUADS))
    close(disk)


def close(disk: ox.Store) -> None:
    """Flush a written store and compact it into one sorted run per index: the graphs arrive as
    two or more bulk loads, and queries on the uncompacted files read each (the shipped KB:
    22 -> 13 ms for a warm query)."""
    disk.flush()
    disk.optimize()


def main(argv: list[str]) -> int:
    try:
        write(*argv)
    except Exception as exc:  # noqa: BLE001 - reported to the building process
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
