"""The inferred graph cached on disk as a read-only pyoxigraph store.

The cache folder is named by a hash of every input file (ontology, rules, KB, overlays) plus
the engine and library versions, so a snapshot is rebuilt only when an input changes. A build
goes to a private temporary folder that is renamed into place (atomic on one file system), so
two processes building at once cannot corrupt it; a folder without a valid manifest, or one
pyoxigraph cannot open, is rebuilt rather than trusted.

This module is on the query path: it must not import rdflib, owlrl or pydantic at module level.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pyoxigraph as ox

from kbq import resources
from kbq.version import __version__

MANIFEST = "kbq-manifest.json"
CATALOG = "kbq-catalog.marshal"
DEFAULT_ENGINE = "reasonable"
Progress = Callable[[str], None]


@dataclass(frozen=True)
class SnapshotInfo:
    path: str
    key: str
    engine: str
    asserted: int
    inferred: int
    rounds: int
    reason_seconds: float
    build_seconds: float
    files: list[str]


def cache_root() -> Path:
    """KBQ_CACHE_DIR, else $XDG_CACHE_HOME/kbq, else ~/.cache/kbq."""
    env = os.environ.get("KBQ_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kbq"


def _library_versions(engine: str) -> str:
    # importlib.metadata is slow to import; read the dist-info folder names instead.
    found = {"pyoxigraph": ox.__version__}
    wanted = {"reasonable", "owlrl", "rdflib"}
    for entry in sys.path:
        folder = Path(entry)
        if not folder.is_dir() or folder.suffix:
            continue
        for name in wanted - found.keys():
            hits = list(folder.glob(f"{name}-*.dist-info"))
            if hits:
                found[name] = hits[0].name[len(name) + 1 : -len(".dist-info")]
    python = f"python={sys.version_info[0]}.{sys.version_info[1]}"  # the catalog cache is marshal data
    return f"{engine};{python};" + ";".join(f"{k}={found[k]}" for k in sorted(found))


def input_files(overlays: Sequence[Path] = ()) -> list[Path]:
    return (
        resources.knowledge_files()
        + resources.rule_files()
        + resources.check_files()
        + [resources.shapes_file()]
        + [Path(p) for p in overlays]
    )


def input_key(files: Sequence[Path], engine: str) -> str:
    digest = hashlib.sha256()
    digest.update(f"kbq={__version__};{_library_versions(engine)}".encode())
    for path in files:
        digest.update(b"\0" + path.name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<unreadable>")  # the build will report it with its path
    return digest.hexdigest()[:32]


def _open(path: Path) -> tuple[ox.Store, SnapshotInfo] | None:
    """The snapshot at `path`, or None when it is missing, partial or corrupt."""
    try:
        info = SnapshotInfo(**json.loads((path / MANIFEST).read_text(encoding="utf-8")))
        return ox.Store.read_only(str(path)), info
    except (OSError, ValueError, TypeError):
        return None


def build(
    path: Path,
    *,
    overlays: Sequence[Path] = (),
    engine: str = DEFAULT_ENGINE,
    validate: bool = True,
    progress: Progress | None = None,
) -> SnapshotInfo:
    """Load, validate, reason and write a snapshot at `path` (atomically)."""
    from kbq import loader, reason
    from kbq.validate import validate_graph

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
    to_ox = loader.to_ox
    store.bulk_extend(ox.Quad(t.subject, t.predicate, t.object, asserted_graph) for t in loaded.ox_triples)
    store.bulk_extend(ox.Quad(to_ox(s), to_ox(p), to_ox(o), inferred_graph) for s, p, o in inference.inferred)
    store.flush()
    from kbq.executor import select
    from kbq.lang.catalog import Catalog

    Catalog.read(lambda q, s=store: select(s, q)).dump(tmp / CATALOG)
    del store
    info = SnapshotInfo(
        path=str(path),
        key=key,
        engine=engine,
        asserted=len(loaded.triples),
        inferred=len(inference.inferred),
        rounds=inference.rounds,
        reason_seconds=round(inference.seconds, 3),
        build_seconds=round(time.perf_counter() - start, 3),
        files=[str(f) for f in kb_files],
    )
    (tmp / MANIFEST).write_text(json.dumps(asdict(info), indent=1), encoding="utf-8")
    try:
        os.rename(tmp, path)
    except OSError:  # another process won the race, or a corrupt folder is in the way
        if _open(path) is None:
            shutil.rmtree(path, ignore_errors=True)
            os.rename(tmp, path)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    say(f"kbq: snapshot ready ({info.asserted} asserted, {info.inferred} inferred, {info.build_seconds:.2f} s)")
    return info


def snapshot_path(overlays: Sequence[Path] = (), engine: str = DEFAULT_ENGINE) -> Path:
    return cache_root() / f"snapshot-{input_key(input_files(overlays), engine)}"


def open_snapshot(
    overlays: Sequence[Path] = (),
    *,
    engine: str = DEFAULT_ENGINE,
    rebuild: bool = False,
    progress: Progress | None = None,
) -> tuple[ox.Store, SnapshotInfo]:
    """The snapshot for these inputs, built first if missing, partial or corrupt."""
    path = snapshot_path(overlays, engine)
    if not rebuild and (opened := _open(path)) is not None:
        return opened
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
    build(path, overlays=overlays, engine=engine, progress=progress)
    opened = _open(path)
    if opened is None:
        raise OSError(f"snapshot at {path} could not be opened after a rebuild")
    return opened
