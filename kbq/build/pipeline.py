"""The build pipeline: load -> validate (SHACL) -> reason (OWL-RL + rules) -> write a snapshot.

A build goes to a private temporary folder that is renamed into place (atomic on one file
system), so two processes building at once cannot corrupt it.
"""

from __future__ import annotations

import json
import marshal
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph as ox

from kbq.store import names, resources
from kbq.store.snapshot import DEFAULT_ENGINE, MANIFEST, MANIFEST_DATA, SnapshotInfo, open_existing, snapshot_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kbq.store.snapshot import Progress


def build(
    path: str | os.PathLike[str],
    *,
    overlays: Sequence[str | os.PathLike[str]] = (),
    engine: str = DEFAULT_ENGINE,
    validate: bool = True,
    progress: Progress | None = None,
) -> SnapshotInfo:
    """Load, validate, reason and write a snapshot at `path` (atomically)."""
    from kbq.build import loader, reason
    from kbq.build.validate import validate_graph

    path = Path(path)
    say = progress or (lambda _msg: None)
    start = time.perf_counter()
    kb_files = resources.knowledge_files() + [Path(p) for p in overlays]
    say(f"kbq: loading {len(kb_files)} knowledge files")
    loaded = loader.load(kb_files)
    if validate:
        say("kbq: validating against the SHACL shapes")
        validate_graph(loaded)
    say(f"kbq: reasoning ({engine}) over {len(loaded.triples)} triples")
    inference = reason.infer(loaded.triples, resources.rule_files(), engine=reason.Engine(engine), checks=resources.check_files())
    key = path.name.removeprefix("snapshot-")
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    store = ox.Store(str(tmp))
    asserted_graph = ox.NamedNode(resources.ASSERTED_GRAPH)
    inferred_graph = ox.NamedNode(resources.INFERRED_GRAPH)
    to_ox_quad = loader.to_ox_quad
    store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object, asserted_graph) for t in loaded.ox_triples)
    store.bulk_extend(to_ox_quad(s, p, o, inferred_graph) for s, p, o in inference.inferred)
    store.bulk_extend(_name_index(store))
    store.flush()
    del store
    info = SnapshotInfo(
        path=str(path),
        key=key,
        engine=engine,
        asserted=len(set(loaded.ox_triples)),  # distinct: a triple stated in two files is stored once
        inferred=len(inference.inferred),
        rounds=inference.rounds,
        reason_seconds=round(inference.seconds, 3),
        build_seconds=round(time.perf_counter() - start, 3),
        files=[str(f) for f in kb_files],
    )
    (tmp / MANIFEST).write_text(json.dumps(info.to_dict(), indent=1), encoding="utf-8")
    (tmp / MANIFEST_DATA).write_bytes(marshal.dumps(info.to_dict()))  # written last: marks a complete build
    try:
        os.rename(tmp, path)
    except OSError:  # another process won the race, or a corrupt folder is in the way
        if open_existing(str(path)) is None:
            shutil.rmtree(path, ignore_errors=True)
            os.rename(tmp, path)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    say(f"kbq: snapshot ready ({info.asserted} asserted, {info.inferred} inferred, {info.build_seconds:.2f} s)")
    return info



def ensure(
    overlays: Sequence[str | os.PathLike[str]] = (),
    *,
    engine: str = DEFAULT_ENGINE,
    rebuild: bool = False,
    progress: Progress | None = None,
) -> tuple[ox.Store, SnapshotInfo]:
    """The snapshot for these inputs, built first if missing, partial or corrupt."""
    path = snapshot_path(overlays, engine)
    if not rebuild and (opened := open_existing(path)) is not None:
        return opened
    if os.path.exists(path):
        shutil.rmtree(path, ignore_errors=True)
    build(path, overlays=overlays, engine=engine, progress=progress)
    opened = open_existing(path)
    if opened is None:
        raise OSError(f"snapshot at {path} could not be opened after a rebuild")
    return opened


def _name_index(store: ox.Store) -> list[ox.Quad]:
    """One kbq:normalisedName per label, alternative label and unit symbol (the compiler's index)."""
    graph = ox.NamedNode(names.NAMES_GRAPH)
    index = ox.NamedNode(names.NAME_INDEX)
    quads = []
    for predicate in names.NAMING_PREDICATES:
        for quad in store.quads_for_pattern(None, ox.NamedNode(predicate), None, None):
            if isinstance(quad.object, ox.Literal) and (key := names.normalise(quad.object.value)):
                quads.append(ox.Quad(quad.subject, index, ox.Literal(key), graph))
    return quads
