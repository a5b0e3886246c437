"""The inferred graph cached on disk as a read-only pyoxigraph store, and how it heals.

A snapshot is keyed by a hash of every input file (ontology, rules, checks, shapes, KB,
overlays) plus the engine, Python and library versions. Each build goes to a private temporary
folder that is renamed to a new versioned folder `snapshot-KEY.STAMP`; an open takes the newest
one that passes its checks. So a rebuild (`kbq build`, or a damaged snapshot) never removes a
folder a running process uses: every process that opens a snapshot holds a shared lock on its
`kbq.lock`, and an older folder is deleted only once nobody holds it.

Checks, in order of cost: the manifest is checksummed (sha256) before it is unmarshalled; every
file it lists has its size and, on every open, its quick digest: the sha256 of the whole file up
to 1 MiB (every file of the shipped KB's snapshot), else of its first 64 KiB, its last 256 KiB
(where an SST keeps its index, filters and footer) and 16 blocks spread between; so bit rot with
size and mtime unchanged is found before the engine reads it (issue 22, M-9). If the mtime moved,
or with `verify=True` (`kbq serve`, `kbq build`), the full sha256; the store must open. A corruption the engine
finds later (a block checksum) marks the folder damaged (see `mark_damaged`), and the next open
rebuilds it. Paths in the manifest are relative, so a moved cache keeps working.

Input files are hashed through a stamp file in the cache folder (path, size, mtime -> sha256),
so a large overlay is not read again on every cold call while it is unchanged.

This module is on the query path: it imports only os, sys, hashlib, marshal, time and pyoxigraph
(no pathlib, json, dataclasses, rdflib or pydantic), so a cold query stays close to the floor.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import time

import pyoxigraph as ox

from kbq.store import resources
from kbq.version import __version__

TYPE_CHECKING = False  # typing costs a cold start; annotations are strings (PEP 563)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    Progress = Callable[[str], None]

MANIFEST = "kbq-manifest.json"  # for people; the code reads the checksummed marshal copy
MANIFEST_DATA = "kbq-manifest.marshal"
LOCK = "kbq.lock"
DAMAGED = "kbq-damaged"  # written when the engine reports a corruption in this folder
STAMPS = "kbq-stamps.marshal"
DEFAULT_ENGINE = "sparql"
_MAGIC = b"KBQ-MANIFEST-2\n"
_STAMPS_MAGIC = b"KBQ-STAMPS-1\n"
_UNCHECKED = ("LOG", "LOCK", "kbq-", "kbq.")  # not in the checksums: RocksDB's logs and lock, kbq's own files
_HELD: dict[str, int] = {}  # snapshot folder -> file descriptor holding its shared lock
_OPENED: dict[int, str] = {}  # id(store) -> its folder (to mark a store damaged)


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
    wanted = ("reasonable", "owlrl", "rdflib", "pyrudof")
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


MAX_OVERLAY_BYTES = 512 << 20
"""Bytes of one overlay file (checked before it is read or hashed)."""


def check_overlay(path: str | os.PathLike[str]) -> None:
    """Refuse, before anything opens it, an overlay that is not a regular file of bounded size:
    `--kb /dev/zero` (endless), a FIFO (blocks the open), a sparse 1 TB file (issue 22, L-10)."""
    import stat

    from kbq.errors import KnowledgeFileError

    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as exc:
        raise KnowledgeFileError(name, None, f"cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
        raise KnowledgeFileError(name, None, f"not a regular file ({kind}): an overlay is a Turtle file")
    if st.st_size > MAX_OVERLAY_BYTES:
        raise KnowledgeFileError(name, None, f"{st.st_size} bytes, over kbq's limit of {MAX_OVERLAY_BYTES}")


def input_files(overlays: Sequence[str | os.PathLike[str]] = ()) -> list[str]:
    for overlay in overlays:
        check_overlay(overlay)
    return (
        resources.knowledge_paths()
        + resources.rule_paths()
        + resources.check_paths()
        + resources.engine_paths()
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


# --- checksummed marshal files -----------------------------------------------------------------


def _seal(magic: bytes, data: dict[str, Any]) -> bytes:
    body = marshal.dumps(data)
    return magic + hashlib.sha256(body).digest() + body


def _unseal(magic: bytes, blob: bytes) -> object:
    """The data of a sealed blob; ValueError when it is not one, or its checksum differs."""
    head = len(magic)
    if not blob.startswith(magic) or len(blob) < head + 32:
        raise ValueError("not a kbq file of this version")
    body = blob[head + 32 :]
    if hashlib.sha256(body).digest() != blob[head : head + 32]:
        raise ValueError("checksum mismatch")
    return marshal.loads(body)  # safe: the bytes are the ones kbq wrote (checksum above)


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


QUICK_WHOLE = 1 << 20  # files up to this size are hashed whole on every open


def _quick_digest(path: str) -> bytes:
    """sha256 of the whole file up to QUICK_WHOLE bytes, else of its head, tail and 16 samples."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= QUICK_WHOLE:
            return hashlib.sha256(handle.read()).digest()
        digest = hashlib.sha256(size.to_bytes(8, "little"))
        digest.update(handle.read(64 << 10))
        for i in range(1, 17):
            handle.seek(size * i // 17)
            digest.update(handle.read(4096))
        handle.seek(max(0, size - (256 << 10)))
        digest.update(handle.read())
        return digest.digest()


def _sha256_file(path: str) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.digest()


# --- the cache key -----------------------------------------------------------------------------


class _Stamps:
    """path -> (size, mtime_ns, sha256) of input files, in the cache folder (best effort)."""

    RACY_NS = 2_000_000_000  # a file changed in the last 2 s may change again within the same mtime

    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, STAMPS)
        self.changed = False
        try:
            with open(self.path, "rb") as handle:
                data = _unseal(_STAMPS_MAGIC, handle.read(16 << 20))
            self.entries: dict[str, tuple[int, int, bytes]] = data if isinstance(data, dict) else {}
        except (OSError, ValueError, EOFError, TypeError):
            self.entries = {}

    def digest(self, path: str) -> bytes:
        """The sha256 of a file's content, from the stamp when size and mtime are unchanged."""
        full = os.path.abspath(path)
        st = os.stat(full)
        entry = self.entries.get(full)
        if entry is not None and entry[0] == st.st_size and entry[1] == st.st_mtime_ns:
            return entry[2]
        digest = _sha256_file(full)
        if time.time_ns() - st.st_mtime_ns > self.RACY_NS:
            self.entries[full] = (st.st_size, st.st_mtime_ns, digest)
            self.changed = True
        return digest

    def save(self) -> None:
        if not self.changed:
            return
        if len(self.entries) > 2000:  # forget files of long ago
            self.entries = dict(list(self.entries.items())[-1000:])
        try:
            _write_atomic(self.path, _seal(_STAMPS_MAGIC, self.entries))
        except OSError:
            pass  # an unwritable cache only costs the hashing again


def input_key(files: Sequence[str | os.PathLike[str]], engine: str) -> str:
    digest = hashlib.sha256()
    digest.update(f"kbq={__version__};{_library_versions(engine)};{_build_code()}".encode())
    stamps = _Stamps(cache_root())
    for path in files:
        digest.update(b"\0" + os.path.basename(os.fspath(path)).encode() + b"\0")
        try:
            digest.update(stamps.digest(os.fspath(path)))
        except OSError:
            digest.update(b"<unreadable>")  # the build will report it with its path
    stamps.save()
    return digest.hexdigest()[:32]


# --- manifests and checks ----------------------------------------------------------------------


def _checked_files(folder: str) -> list[str]:
    """The store files a manifest checksums: not RocksDB's info logs, lock or write-ahead logs
    (`*.log`: RocksDB may delete one when the builder's store closes after the manifest is
    written, and a read-only open needs none), nor kbq's own files."""
    return sorted(
        n
        for n in os.listdir(folder)
        if not n.startswith(_UNCHECKED) and not n.endswith(".log") and os.path.isfile(os.path.join(folder, n))
    )


def write_manifest(folder: str, info: SnapshotInfo, names: Sequence[str] | None = None) -> None:
    """Write the manifest of a complete build in `folder` (its lock file first, the manifest last);
    `names`: the files to checksum (default: every store file there now)."""
    import json

    with open(os.path.join(folder, LOCK), "ab"):
        pass
    contents = {}
    for name in _checked_files(folder) if names is None else names:
        path = os.path.join(folder, name)
        st = os.stat(path)
        full = _sha256_file(path)
        contents[name] = (st.st_size, st.st_mtime_ns, full, full if st.st_size <= QUICK_WHOLE else _quick_digest(path))
    record = {f: getattr(info, f) for f in info.FIELDS if f != "path"}
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1)
    _write_atomic(os.path.join(folder, MANIFEST_DATA), _seal(_MAGIC, {"info": record, "contents": contents}))


def _read_manifest(folder: str) -> dict[str, object]:
    with open(os.path.join(folder, MANIFEST_DATA), "rb") as handle:
        data = _unseal(_MAGIC, handle.read(16 << 20))
    if not isinstance(data, dict) or not isinstance(data.get("info"), dict) or not isinstance(data.get("contents"), dict):
        raise ValueError("manifest of an unknown shape")
    return data


def problem(folder: str, *, verify: bool = False) -> str | None:
    """Why the snapshot folder cannot be used, or None when it can (not opening the store)."""
    if not os.path.isdir(folder):
        return "not a folder" if os.path.lexists(folder) else "missing"
    if os.path.lexists(os.path.join(folder, DAMAGED)):
        try:
            with open(os.path.join(folder, DAMAGED), encoding="utf-8", errors="replace") as handle:
                return "damaged: " + handle.read(500).strip()
        except OSError:
            return "damaged"
    try:
        data = _read_manifest(folder)
    except FileNotFoundError:
        return "no manifest (an interrupted build?)"
    except (OSError, ValueError, EOFError, TypeError) as exc:
        return f"unreadable manifest ({exc})"
    if not os.path.isfile(os.path.join(folder, LOCK)):
        return f"no {LOCK}"
    contents = data["contents"]
    assert isinstance(contents, dict)
    moved = False
    for name, entry in contents.items():
        path = os.path.join(folder, name)
        try:
            size, mtime_ns, digest, *rest = entry
            st = os.stat(path)
        except (OSError, ValueError, TypeError):
            return f"{name} is missing"
        if st.st_size != size:
            return f"{name} has {st.st_size} bytes, not {size}"
        if not os.path.isfile(path):
            return f"{name} is not a regular file"
        full = verify or st.st_mtime_ns != mtime_ns or not rest
        try:
            if (_sha256_file(path) if full else _quick_digest(path)) != (digest if full else rest[0]):
                return f"{name} does not match its checksum"
        except OSError as exc:
            return f"{name} cannot be read ({exc.strerror})"
        moved = moved or st.st_mtime_ns != mtime_ns or not rest
    if moved:  # copied or moved with new times, or an older manifest, but intact: record them, so the next check is cheap
        try:
            info = SnapshotInfo(path=folder, **data["info"])  # type: ignore[arg-type]
            write_manifest(folder, info, list(contents))
        except (OSError, TypeError):
            pass
    return None


def _lock_shared(folder: str) -> bool:
    """Hold a shared lock on the folder for this process's life (False: it is being removed)."""
    if folder in _HELD:
        return True
    try:
        import fcntl
    except ImportError:  # no flock (Windows): old folders are then never removed while in doubt
        return True
    try:
        fd = os.open(os.path.join(folder, LOCK), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    if not os.path.exists(os.path.join(folder, MANIFEST_DATA)):  # removed while we waited
        os.close(fd)
        return False
    _HELD[folder] = fd
    return True


def hold_new(folder: str) -> int | None:
    """Create `folder`'s lock file and hold a shared lock on it before the build in it is renamed
    into place, so no other process can take a fresh build for an unused old one and remove it
    between the rename and the open (issue 22, L-9). `adopt` it under the final name."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(os.path.join(folder, LOCK), os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def adopt(folder: str, fd: int | None) -> None:
    """The lock taken by `hold_new` now holds `folder` (the build's final name)."""
    if fd is not None:
        if folder in _HELD:
            os.close(fd)
        else:
            _HELD[folder] = fd


def open_existing(path: str, *, verify: bool = False) -> tuple[ox.Store, SnapshotInfo] | None:
    """The snapshot at `path` (locked for this process), or None when it is missing, partial,
    damaged or unreadable (see `problem` for why)."""
    if problem(path, verify=verify) is not None:
        return None
    try:
        data = _read_manifest(path)
        info = SnapshotInfo(path=path, **data["info"])  # type: ignore[arg-type]
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if not _lock_shared(path):
        return None
    try:
        store = ox.Store.read_only(path)
    except (OSError, RuntimeError, ValueError):
        return None
    _OPENED[id(store)] = path
    return store, info


# --- versioned folders -------------------------------------------------------------------------


def versions(root: str, key: str) -> list[str]:
    """The complete-looking folders of one key, newest first."""
    prefix = f"snapshot-{key}."
    try:
        names = os.listdir(root)
    except OSError:
        return []
    found = [n for n in names if n.startswith(prefix) and n[len(prefix) :].isdigit()]
    return [os.path.join(root, n) for n in sorted(found, reverse=True)]


def new_version(root: str, key: str) -> str:
    return os.path.join(root, f"snapshot-{key}.{time.time_ns():020d}")


def open_snapshot(root: str, key: str, *, verify: bool = False) -> tuple[ox.Store, SnapshotInfo] | None:
    """The newest usable snapshot of `key` (older ones are removed once nobody holds them)."""
    for path in versions(root, key):
        opened = open_existing(path, verify=verify)
        if opened is not None:
            return opened
    return None


def snapshot_path(overlays: Sequence[str | os.PathLike[str]] = (), engine: str = DEFAULT_ENGINE) -> str:
    """The newest folder of the snapshot these inputs make (it may not exist yet)."""
    root = cache_root()
    key = input_key(input_files(overlays), engine)
    found = versions(root, key)
    return found[0] if found else os.path.join(root, f"snapshot-{key}")


def remove_if_unused(folder: str) -> bool:
    """Delete a snapshot folder unless a process holds it (True when it is gone)."""
    if folder in _HELD:
        return False
    if os.path.lexists(folder) and not os.path.isdir(folder):
        try:
            os.unlink(folder)  # a file where a snapshot folder should be: nothing can hold it
            return True
        except OSError:
            return False
    try:
        import fcntl
    except ImportError:
        return False
    import shutil

    try:
        fd = os.open(os.path.join(folder, LOCK), os.O_RDONLY)
    except FileNotFoundError:
        fd = -1  # no lock file: an interrupted or damaged build, which no process can hold
    except OSError:
        return False
    try:
        if fd >= 0:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False
        trash = f"{folder}.trash-{os.getpid()}-{time.time_ns()}"
        try:
            os.rename(folder, trash)
        except OSError:
            return False
        shutil.rmtree(trash, ignore_errors=True)
        return True
    finally:
        if fd >= 0:
            os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def sweep(root: str, key: str, keep: str | None = None) -> None:
    """Remove this key's older folders nobody holds, and temporary folders of dead builds."""
    import shutil

    try:
        names = os.listdir(root)
    except OSError:
        return
    prefix = f"snapshot-{key}."
    for name in names:
        path = os.path.join(root, name)
        if ".trash-" in name and name.startswith("snapshot-"):
            shutil.rmtree(path, ignore_errors=True)
        elif ".tmp-" in name and name.startswith("snapshot-"):
            pid = name.rsplit(".tmp-", 1)[1].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(path, ignore_errors=True)
        elif name.startswith(prefix) and name[len(prefix) :].isdigit() and path != keep:
            remove_if_unused(path)


def mark_damaged(store: ox.Store, reason: str) -> str | None:
    """Record that the engine found `store`'s folder corrupt; the next open rebuilds it.
    Returns the folder (None when the store is not a snapshot this process opened)."""
    folder = _OPENED.get(id(store))
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, DAMAGED), "w", encoding="utf-8") as handle:
            handle.write(reason[:500])
    except OSError:
        pass
    return folder
