"""The inferred graph cached on disk as a read-only pyoxigraph store.

The cache folder is named by a hash of every input file (ontology, rules, checks, shapes, KB,
overlays) plus the engine, Python and library versions, so a snapshot is rebuilt only when an
input changes. A build goes to a private temporary folder that is renamed into place (atomic on
one file system), so two processes building at once cannot corrupt it; a folder without a
valid manifest, or one pyoxigraph cannot open, is rebuilt rather than trusted.

This module is on the query path: it imports only os, sys, hashlib, marshal and pyoxigraph
(no pathlib, json, dataclasses, rdflib or pydantic), so a cold query stays close to the floor.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys

import pyoxigraph as ox

from kbq.store import resources
from kbq.version import __version__

TYPE_CHECKING = False  # typing costs a cold start; annotations are strings (PEP 563)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Progress = Callable[[str], None]

MANIFEST = "kbq-manifest.json"  # for people; the code reads the marshal copy
MANIFEST_DATA = "kbq-manifest.marshal"
DEFAULT_ENGINE = "reasonable"


class SnapshotInfo:
    """What a snapshot holds and how long it took to build (its manifest)."""

    FIELDS = ("path", "key", "engine", "asserted", "inferred", "rounds", "reason_seconds", "build_seconds", "files")
    __slots__ = FIELDS

    def __init__(
        self,
        *,
        path: str,
        key: str,
        engine: str,
        asserted: int,
        inferred: int,
        rounds: int,
        reason_seconds: float,
        build_seconds: float,
        files: list[str],
    ) -> None:
        self.path, self.key, self.engine = path, key, engine
        self.asserted, self.inferred, self.rounds = asserted, inferred, rounds
        self.reason_seconds, self.build_seconds, self.files = reason_seconds, build_seconds, files

    def to_dict(self) -> dict[str, object]:
        return {f: getattr(self, f) for f in self.FIELDS}

    def __repr__(self) -> str:
        return "SnapshotInfo(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SnapshotInfo) and self.to_dict() == other.to_dict()


def cache_root() -> str:
    """KBQ_CACHE_DIR, else $XDG_CACHE_HOME/kbq, else ~/.cache/kbq."""
    env = os.environ.get("KBQ_CACHE_DIR")
    if env:
        return env
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "kbq")


def _library_versions(engine: str) -> str:
    # importlib.metadata is slow to import; read the dist-info folder names instead.
    found = {"pyoxigraph": ox.__version__}
    wanted = ("reasonable", "owlrl", "rdflib")
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist = name[: -len(".dist-info")]
                for w in wanted:
                    if w not in found and dist.startswith(w + "-"):
                        found[w] = dist[len(w) + 1 :]
    python = f"python={sys.version_info[0]}.{sys.version_info[1]}"  # the catalog cache is marshal data
    return f"{engine};{python};" + ";".join(f"{k}={found[k]}" for k in sorted(found))


def input_files(overlays: Sequence[str | os.PathLike[str]] = ()) -> list[str]:
    return (
        resources.knowledge_paths()
        + resources.rule_paths()
        + resources.check_paths()
        + [resources.shapes_path()]
        + [os.fspath(p) for p in overlays]
    )


def _build_code() -> str:
    """Size and mtime of the build code: a changed build step makes a new snapshot (no import)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    except OSError:
        return "build:?"
    paths = [os.path.join(folder, n) for n in names] + [os.path.join(os.path.dirname(__file__), "names.py")]  # the name index
    stamps = []
    for path in paths:
        st = os.stat(path)
        stamps.append(f"{os.path.basename(path)}:{st.st_size}:{st.st_mtime_ns}")
    return ",".join(stamps)


def input_key(files: Sequence[str | os.PathLike[str]], engine: str) -> str:
    digest = hashlib.sha256()
    digest.update(f"kbq={__version__};{_library_versions(engine)};{_build_code()}".encode())
    for path in files:
        digest.update(b"\0" + os.path.basename(os.fspath(path)).encode() + b"\0")
        try:
            with open(path, "rb") as handle:
                digest.update(handle.read())
        except OSError:
            digest.update(b"<unreadable>")  # the build will report it with its path
    return digest.hexdigest()[:32]


def open_existing(path: str) -> tuple[ox.Store, SnapshotInfo] | None:
    """The snapshot at `path`, or None when it is missing, partial or corrupt."""
    try:
        with open(os.path.join(path, MANIFEST_DATA), "rb") as handle:
            info = SnapshotInfo(**marshal.load(handle))
        return ox.Store.read_only(path), info
    except (OSError, ValueError, TypeError, EOFError):
        return None


def snapshot_path(overlays: Sequence[str | os.PathLike[str]] = (), engine: str = DEFAULT_ENGINE) -> str:
    return os.path.join(cache_root(), f"snapshot-{input_key(input_files(overlays), engine)}")
