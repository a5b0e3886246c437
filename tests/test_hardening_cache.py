"""A cache that heals, and overlays that cannot blow up a build (issue 8: M5, M7 and the low
findings on temporary folders, an unwritable cache, `kbq build` during `kbq serve`, sameAs and
list blow-ups, failures that named no file).

Each case copies one built cache (times kept) into its own folder and runs the real `kbq`
command on it: a damaged snapshot must give an answer and one message, never an internal error.
The knowledge is the tests' tiny KB (KBQ_DATA_DIR, tests/data/tiny_kb): the same build, cache and
overlay code as the shipped KB's, in a fraction of its build time (tests/test_tiny_kb.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kbq.build import pipeline
from kbq.store import snapshot

ROOT = Path(__file__).resolve().parent.parent
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
pytestmark = pytest.mark.usefixtures("tiny_kb_module")
PREFIXES = (
    "@prefix kbq: <https://kbq.dev/ontology#> . @prefix kb: <https://kbq.dev/kb/> .\n"
    "@prefix owl: <http://www.w3.org/2002/07/owl#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
)


def kbq(
    cache: Path | str, *args: str, timeout: float = 180, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kbq", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "KBQ_CACHE_DIR": str(cache), **(env or {})},
    )


def answered(done: subprocess.CompletedProcess[str]) -> bool:
    return done.returncode == 0 and "internal error" not in done.stderr and '"n"' not in done.stderr


@pytest.fixture(scope="module")
def built(tiny_kb_module: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache holding the tiny KB's snapshot (built by the real command)."""
    cache = tmp_path_factory.mktemp("built") / "cache"
    done = kbq(cache, "sparql", COUNT)
    assert answered(done), done.stderr
    BUILT["count"] = done.stdout.split()[-1]
    return cache


BUILT: dict[str, str] = {}  # the triple count the intact snapshot answers with


@pytest.fixture
def cache(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "cache"
    shutil.copytree(built, copy)  # copy2: sizes and modification times kept
    return copy


def folder(cache: Path) -> Path:
    (found,) = [p for p in cache.iterdir() if p.is_dir() and p.name.startswith("snapshot-") and ".tmp-" not in p.name]
    return found


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip(path: Path, keep_time: bool = False) -> None:
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    if keep_time:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def biggest_sst(snap: Path) -> Path:
    return max(snap.glob("*.sst"), key=lambda p: p.stat().st_size)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "empty CURRENT": lambda s: (s / "CURRENT").write_bytes(b""),
    "truncated RocksDB MANIFEST": lambda s: truncate(next(s.glob("MANIFEST-*"))),
    "damaged .sst": lambda s: flip(biggest_sst(s)),
    "missing .sst": lambda s: biggest_sst(s).unlink(),
    "flipped byte in kbq manifest": lambda s: flip(s / snapshot.MANIFEST_DATA),
    "manifest missing (interrupted build)": lambda s: (s / snapshot.MANIFEST_DATA).unlink(),
    "every file zeroed": lambda s: [f.write_bytes(b"\0" * 10) for f in s.iterdir() if f.is_file()],  # type: ignore[func-returns-value]
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_snapshot_is_rebuilt_with_one_message(cache: Path, damage: Callable[[Path], None]) -> None:
    damage(folder(cache))
    done = kbq(cache, "sparql", COUNT)
    assert answered(done), done.stderr
    assert done.stderr.count("cannot be used") == 1 and "building a new one" in done.stderr
    assert done.stdout.split()[-1] == BUILT["count"] and int(BUILT["count"]) > 3000  # the same knowledge, rebuilt


def rot_one_block(snap: Path, scratch: Path) -> None:
    """Flip one byte (file time kept) in an .sst that RocksDB opens but cannot read in full."""
    import pyoxigraph as ox

    # among the files the quick check hashes whole (a bigger one is sampled, and the flipped middle byte is not)
    whole = [p for p in snap.glob("*.sst") if p.stat().st_size <= snapshot.QUICK_WHOLE]
    for sst in sorted(whole, key=lambda p: -p.stat().st_size):
        trial = scratch / sst.name
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(snap, scratch)
        flip(trial, keep_time=True)
        try:
            store = ox.Store.read_only(str(scratch))
        except (OSError, RuntimeError):
            continue
        try:
            list(store.query("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"))  # type: ignore[call-overload]
        except (OSError, RuntimeError):
            del store
            flip(sst, keep_time=True)
            return
    pytest.skip("no .sst of this snapshot both opens and fails a full read after one flipped byte")


def test_bit_rot_with_size_and_time_kept_is_found_on_open_and_healed(cache: Path, tmp_path: Path) -> None:
    """Issue 22, M-9: a flipped byte with its file time kept reached the engine, which then
    allocated without bound (23 GB); the quick digest on every open finds it first, and the call
    answers from a rebuilt snapshot with one message."""
    rot_one_block(folder(cache), tmp_path / "scratch")
    first = kbq(cache, "sparql", "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1")
    assert answered(first), first.stderr
    assert first.stderr.count("cannot be used") == 1 and "does not match its checksum" in first.stderr
    second = kbq(cache, "sparql", COUNT)
    assert answered(second) and "cannot be used" not in second.stderr


def test_the_quick_check_finds_bit_rot_and_verify_too(cache: Path) -> None:
    snap = folder(cache)
    # a file the quick check hashes whole (a bigger one is sampled, and its middle byte is not)
    whole = [p for p in snap.glob("*.sst") if p.stat().st_size <= snapshot.QUICK_WHOLE]
    flip(max(whole, key=lambda p: p.stat().st_size), keep_time=True)
    assert "does not match its checksum" in (snapshot.problem(str(snap)) or "")
    assert "does not match its checksum" in (snapshot.problem(str(snap), verify=True) or "")


def test_the_quick_digest_of_a_large_file_samples_head_tail_and_middle(tmp_path: Path) -> None:
    big = tmp_path / "big.sst"
    data = bytearray(os.urandom(4 << 20))
    big.write_bytes(bytes(data))
    before = snapshot._quick_digest(str(big))
    for where in (10, len(data) - 10, len(data) * 5 // 17 + 100):  # head, tail (index, footer), a sample
        data[where] ^= 1
        big.write_bytes(bytes(data))
        assert snapshot._quick_digest(str(big)) != before
        data[where] ^= 1


def test_a_question_heals_a_snapshot_the_engine_finds_damaged(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the engine itself finds damage (marking the folder), the question rebuilds and answers."""
    from kbq.api import KnowledgeBase
    from kbq.errors import CacheError

    monkeypatch.setenv("KBQ_CACHE_DIR", str(cache))
    kb = KnowledgeBase.load(progress=lambda _m: None)
    damaged = kb.info.path  # type: ignore[union-attr]
    failing = kb._run

    def once(query: str):  # type: ignore[no-untyped-def]
        (Path(damaged) / snapshot.DAMAGED).write_text("block checksum mismatch (test)")
        kb._run = failing
        raise CacheError("the snapshot is damaged (test)")

    kb._run = once
    assert kb.table("ASK { ?s ?p ?o }").rows == [[True]]
    assert kb.info.path != damaged  # type: ignore[union-attr]


def test_a_moved_cache_is_used_as_it_is(cache: Path, tmp_path: Path) -> None:
    """M7: nothing in the manifest names the old place; no rebuild after a move."""
    moved = tmp_path / "elsewhere"
    cache.rename(moved)
    done = kbq(moved, "sparql", COUNT)
    assert answered(done) and "building" not in done.stderr
    manifest = (folder(moved) / snapshot.MANIFEST).read_text()
    assert str(tmp_path) not in manifest and '"path"' not in manifest


def test_a_copied_cache_with_new_times_is_checked_once(cache: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copied"
    shutil.copytree(cache, copy, copy_function=shutil.copyfile)  # new modification times
    snap = str(folder(copy))
    assert snapshot.problem(snap) is None  # hashes match: intact, times recorded again
    assert snapshot._read_manifest(snap)["contents"] == {
        n: (os.stat(os.path.join(snap, n)).st_size, os.stat(os.path.join(snap, n)).st_mtime_ns, *v[2:])
        for n, v in snapshot._read_manifest(snap)["contents"].items()  # type: ignore[union-attr]
    }


@pytest.mark.parametrize("what", ["cache folder is a file", "snapshot folder is a file", "cannot create the cache folder"])
def test_wrong_type_or_unwritable_cache(built: Path, tmp_path: Path, what: str) -> None:
    if what == "cache folder is a file":
        target: Path | str = tmp_path / "cache"
        Path(target).write_text("not a folder")
    elif what == "snapshot folder is a file":
        target = tmp_path / "cache"
        shutil.copytree(built, target)
        snap = folder(Path(target))
        shutil.rmtree(snap)
        snap.write_text("not a folder")
    else:
        target = "/proc/self/kbq-cache"  # no one can create it, not even root
    done = kbq(target, "sparql", COUNT)
    assert answered(done), done.stderr
    if what != "snapshot folder is a file":
        assert done.stderr.count("cannot write the cache folder") == 1 and "KBQ_CACHE_DIR" in done.stderr
    leftovers = [p for p in Path("/tmp").glob("kbq-cache-*") if p.stat().st_mtime > time.time() - 5]
    assert leftovers == [] or all(not any(p.iterdir()) for p in leftovers)  # the temporary cache is removed at exit


def test_a_failed_build_leaves_no_temporary_folder(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text(PREFIXES + "kb:X kbq:memory .\n")
    cache = tmp_path / "cache"
    done = kbq(cache, "gpus", "--kb", str(bad))
    assert done.returncode == 2 and "bad.ttl" in done.stderr and "internal error" not in done.stderr
    assert [p.name for p in cache.iterdir() if ".tmp-" in p.name] == []


def test_temporary_folders_of_dead_builds_are_swept(cache: Path) -> None:
    stale = cache / f"{folder(cache).name.split('.')[0]}.tmp-999999999-deadbeef"
    stale.mkdir()
    (stale / "junk").write_text("x")
    live = cache / f"{folder(cache).name.split('.')[0]}.tmp-{os.getpid()}-cafe"
    live.mkdir()
    key = folder(cache).name.split("-", 1)[1].split(".")[0]
    snapshot.sweep(str(cache), key)
    assert not stale.exists() and live.exists()  # a running build's folder is left alone


HOLD = """
import sys
from kbq import KnowledgeBase
kb = KnowledgeBase.default()
print(kb.info.path, flush=True)
sys.stdin.readline()
print(kb.table("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }").rows[0][0], flush=True)
"""


def test_a_rebuild_never_removes_a_snapshot_in_use(cache: Path) -> None:
    """`kbq build` while another process (a server, a notebook) has the snapshot open."""
    env = {**os.environ, "KBQ_CACHE_DIR": str(cache)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        used = Path(holder.stdout.readline().strip())
        done = kbq(cache, "build")
        assert done.returncode == 0, done.stderr
        new = Path(done.stdout.strip().splitlines()[-1])
        assert new != used and used.exists() and new.exists()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert int(holder.stdout.readline()) > 3000  # the old snapshot still answers
    finally:
        holder.kill()
        holder.wait()
    again = kbq(cache, "sparql", COUNT)
    assert answered(again) and not used.exists()  # swept once nobody holds it


def test_a_large_overlay_is_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBQ_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    overlay = tmp_path / "big.ttl"
    overlay.write_text(PREFIXES + "".join(f'kb:X{i} kbq:note "{i}" .\n' for i in range(200_000)))  # ~6 MB
    old = time.time() - 60
    os.utime(overlay, (old, old))
    hashed: list[str] = []
    real = snapshot._sha256_file
    monkeypatch.setattr(snapshot, "_sha256_file", lambda p: hashed.append(p) or real(p))
    files = snapshot.input_files([overlay])
    first = snapshot.input_key(files, "reasonable")
    assert str(overlay) in hashed
    hashed.clear()
    assert snapshot.input_key(files, "reasonable") == first and hashed == []  # size + mtime unchanged: no read
    with overlay.open("a") as handle:
        handle.write('kb:Y kbq:note "y" .\n')
    os.utime(overlay, (old + 1, old + 1))
    assert snapshot.input_key(files, "reasonable") != first and str(overlay) in hashed
    (tmp_path / "cache" / snapshot.STAMPS).write_bytes(b"garbage")  # a damaged stamp file is ignored
    assert snapshot.input_key(files, "reasonable") != first


# --- overlays that would blow up the build --------------------------------------------------


def test_sameas_aliases_are_refused_naming_the_file(tmp_path: Path) -> None:
    """600 owl:sameAs aliases of one GPU: 52 s and 4.4 GB, then a Rust panic, before the limit."""
    overlay = tmp_path / "aliases.ttl"
    overlay.write_text(PREFIXES + "".join(f"kb:Alias{i} owl:sameAs kb:TitanRTX .\n" for i in range(600)))
    start = time.monotonic()
    done = kbq(tmp_path / "cache", "gpus", "--kb", str(overlay))
    assert done.returncode == 2 and "aliases.ttl" in done.stderr and "owl:sameAs joins 601 names" in done.stderr
    assert "skos:altLabel" in done.stderr and time.monotonic() - start < 60


def test_a_huge_rdf_list_is_refused_naming_the_file(tmp_path: Path) -> None:
    overlay = tmp_path / "list.ttl"
    items = " ".join(f"kb:I{i}" for i in range(20_000))
    overlay.write_text(PREFIXES + f"kb:C owl:unionOf ( {items} ) .\n")
    done = kbq(tmp_path / "cache", "gpus", "--kb", str(overlay))
    assert done.returncode == 2 and "list.ttl" in done.stderr and "RDF list of 20000 items" in done.stderr


def test_an_inconsistency_names_the_file_stating_it(tmp_path: Path) -> None:
    """A value no shape covers (a board-design property on a GPU) makes the GPU a board design
    too; the error says which files state it."""
    overlay = tmp_path / "odd.ttl"
    overlay.write_text(PREFIXES + 'kb:TitanRTX kbq:maxCardsPerChassis "nan"^^xsd:double .\n')
    done = kbq(tmp_path / "cache", "gpus", "--kb", str(overlay))
    assert done.returncode == 2 and "inconsistent knowledge" in done.stderr and "odd.ttl" in done.stderr


def test_overlay_builds_have_a_time_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KBQ_DATA_DIR")  # the shipped KB: an overlay build on the tiny one can end within the limit
    overlay = tmp_path / "fine.ttl"
    overlay.write_text(PREFIXES + 'kb:TitanRTX kbq:note "fine" .\n')
    done = kbq(tmp_path / "cache", "gpus", "--kb", str(overlay), env={"KBQ_BUILD_TIMEOUT": "0.5"})
    assert done.returncode == 2 and "took more than 0.5 s" in done.stderr and "fine.ttl" in done.stderr
    assert [p.name for p in (tmp_path / "cache").iterdir() if ".tmp-" in p.name] == []


def test_overlay_builds_have_a_memory_limit(tmp_path: Path) -> None:
    overlay = tmp_path / "fine.ttl"
    overlay.write_text(PREFIXES + 'kb:TitanRTX kbq:note "fine" .\n')
    done = kbq(tmp_path / "cache", "gpus", "--kb", str(overlay), env={"KBQ_BUILD_MEMORY_MB": "60"})
    assert done.returncode == 2 and "memory" in done.stderr and "fine.ttl" in done.stderr
    assert "internal error" not in done.stderr


def test_check_limits_directly() -> None:
    """The limits are checked on what was loaded, before any reasoning (no reasoner needed)."""
    from rdflib import OWL, URIRef

    class Loaded:
        def __init__(self) -> None:
            self.triples = [(URIRef(f"urn:a{i}"), OWL.sameAs, URIRef("urn:b")) for i in range(300)]
            self.subject_files = {f"urn:a{i}": {"x.ttl"} for i in range(300)}
            self.count = len(self.triples)

        def links(self):  # type: ignore[no-untyped-def]
            return ((str(s), str(p), str(o)) for s, p, o in self.triples)

    with pytest.raises(pipeline.KnowledgeFileError, match=r"x\.ttl: owl:sameAs joins 301 names"):
        pipeline.check_limits(Loaded(), ["x.ttl"])  # type: ignore[arg-type]
    pipeline.check_limits(Loaded(), [])  # type: ignore[arg-type]  # the shipped KB is trusted


# --- issue 22: overlays checked before they are read, builds locked, cycles bounded --------------


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "sparse 1 TB", "folder"])
def test_overlays_that_are_no_regular_bounded_file_are_refused_at_once(tmp_path: Path, kind: str) -> None:
    """L-10: these hung before the size check (read to the end, or an open that blocks)."""
    if kind == "/dev/zero":
        path = Path("/dev/zero")
    elif kind == "fifo":
        path = tmp_path / "pipe.ttl"
        os.mkfifo(path)
    elif kind == "sparse 1 TB":
        path = tmp_path / "sparse.ttl"
        with path.open("wb") as handle:
            handle.truncate(1 << 40)
    else:
        path = tmp_path
    start = time.monotonic()
    done = kbq(tmp_path / "cache", "gpus", "--kb", str(path), "--format", "json", timeout=60)
    assert done.returncode == 2 and str(path) in done.stderr and time.monotonic() - start < 20
    assert ("not a regular file" in done.stderr) != (kind == "sparse 1 TB")
    import json

    assert json.loads(done.stdout)["type"] == "KnowledgeFileError"


def test_a_long_subclass_cycle_is_refused_before_reasoning(tmp_path: Path) -> None:
    """L-11: 3,000 classes in a subClassOf cycle reasoned 30 s and 2-3.5 GB at every call."""
    overlay = tmp_path / "cycle.ttl"
    rdfs = "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
    overlay.write_text(PREFIXES + rdfs + "".join(f"kb:C{i} rdfs:subClassOf kb:C{(i + 1) % 3000} .\n" for i in range(3000)))
    start = time.monotonic()
    done = kbq(tmp_path / "cache", "gpus", "--kb", str(overlay))
    assert done.returncode == 2 and "cycle.ttl" in done.stderr and "make 3000 classes one" in done.stderr
    assert time.monotonic() - start < 60


def test_small_class_cycles_are_still_reasoned() -> None:
    from rdflib import RDFS, URIRef

    class Loaded:
        def __init__(self, n: int) -> None:
            self.triples = [(URIRef(f"urn:c{i}"), RDFS.subClassOf, URIRef(f"urn:c{(i + 1) % n}")) for i in range(n)]
            self.subject_files = {f"urn:c{i}": {"x.ttl"} for i in range(n)}
            self.count = len(self.triples)

        def links(self):  # type: ignore[no-untyped-def]
            return ((str(s), str(p), str(o)) for s, p, o in self.triples)

    pipeline.check_limits(Loaded(10), ["x.ttl"])  # type: ignore[arg-type]
    with pytest.raises(pipeline.KnowledgeFileError, match="make 300 classes one"):
        pipeline.check_limits(Loaded(300), ["x.ttl"])  # type: ignore[arg-type]


def test_concurrent_first_builds_with_an_overlay_all_answer(tmp_path: Path) -> None:
    """L-9: a build was renamed into place before it was locked, so a concurrent build's sweep
    could remove it between the rename and the open. Three first builds at once all answer."""
    overlay = tmp_path / "fine.ttl"
    overlay.write_text(PREFIXES + 'kb:TitanRTX kbq:note "fine" .\n')
    env = {**os.environ, "KBQ_CACHE_DIR": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "kbq", "sparql", COUNT, "--kb", str(overlay)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        for _ in range(3)
    ]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert all(code == 0 for code, _err in results), results


def test_the_lock_is_held_before_the_build_is_visible(tmp_path: Path) -> None:
    folder = tmp_path / "snapshot-k.tmp-1-x"
    folder.mkdir()
    fd = snapshot.hold_new(str(folder))
    assert fd is not None
    final = tmp_path / "snapshot-k.00000000000000000001"
    (folder / snapshot.MANIFEST_DATA).write_bytes(b"x")
    folder.rename(final)
    snapshot.adopt(str(final), fd)
    try:
        assert snapshot.remove_if_unused(str(final)) is False and final.exists()
    finally:
        os.close(snapshot._HELD.pop(str(final)))
