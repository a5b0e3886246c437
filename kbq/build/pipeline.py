"""The build pipeline: load -> validate (SHACL) -> reason (OWL-RL + rules) -> write a snapshot,
and `ensure`: open the newest usable snapshot of these inputs, or heal by building a new one.

On two cores the steps overlap: once the knowledge is loaded, a process of its own writes the
ASSERTED graph to disk (kbq/build/snapshot_writer.py) while validation (a thread: its queries
run without the GIL) and reasoning run; the writer then adds what reasoning inferred.

A build writes a private temporary folder and renames it into place (atomic on one file system),
as a new version beside the old one (kbq.store.snapshot), so a rebuild never pulls a snapshot
from under a running server. Temporary folders of failed builds are removed; those of crashed
processes are swept later.

Overlays (`--kb FILE`) are untrusted input: before reasoning, their size, their owl:sameAs groups
(a group of k names makes k*k sameAs triples and copies every statement k times) and their RDF
lists are bounded, with an error naming the file; and a build with overlays runs in a child
process with a time limit (KBQ_BUILD_TIMEOUT, seconds) and a memory limit (KBQ_BUILD_MEMORY_MB),
so no overlay can make the asking process abort, swap or hang.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pyoxigraph as ox

from kbq.errors import (
    CacheError,
    InconsistencyError,
    KbqError,
    KnowledgeFileError,
    ResourceLimitError,
    ValidationError,
    Violation,
)
from kbq.store import names, resources, snapshot
from kbq.store.snapshot import DEFAULT_ENGINE, SnapshotInfo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kbq.build.loader import LoadedKnowledge
    from kbq.store.snapshot import Progress

MAX_OVERLAY_BYTES = snapshot.MAX_OVERLAY_BYTES
MAX_TRIPLES = 5_000_000
MAX_SAMEAS_GROWTH = 40_000  # sum of k*k over owl:sameAs groups (600 aliases of one GPU: 360,000)
MAX_LIST_LENGTH = 5_000  # items in one RDF list (OWL-RL's list rules are quadratic in it)
MAX_CLASS_CYCLE_GROWTH = 40_000  # sum of k*k over cycles of subClassOf / equivalentClass (k classes all equal)
_SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
_REST = "http://www.w3.org/1999/02/22-rdf-syntax-ns#rest"
_SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
_CLASS_LINKS = {_SUBCLASS, "http://www.w3.org/2002/07/owl#equivalentClass"}
_ERROR_TAG = "kbq-build-error: "
_PROGRESS_TAG = "kbq-build-progress: "


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


def _names(paths: Sequence[str | os.PathLike[str]]) -> str:
    return ", ".join(os.fspath(p) for p in paths) or "the shipped knowledge"


def check_limits(loaded: LoadedKnowledge, overlays: Sequence[str | os.PathLike[str]]) -> None:
    """Refuse, naming the file, overlays whose reasoning would blow up (before reasoning)."""
    if not overlays:
        return
    if loaded.count > MAX_TRIPLES:
        biggest = max(overlays, key=lambda p: os.path.getsize(p))
        raise KnowledgeFileError(
            os.fspath(biggest), None, f"the knowledge holds {loaded.count} triples, over kbq's limit of {MAX_TRIPLES}"
        )
    # owl:sameAs groups (union-find over the IRIs they join).
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    rest: dict[str, str] = {}
    for s, p, o in loaded.links():
        if str(p) == _SAME_AS:
            a, b = find(str(s)), find(str(o))
            if a != b:
                parent[a] = b
        elif str(p) == _REST:
            rest[str(s)] = str(o)
    groups: dict[str, list[str]] = {}
    for x in list(parent):
        groups.setdefault(find(x), []).append(x)
    growth = sum(len(g) * len(g) for g in groups.values())
    if growth > MAX_SAMEAS_GROWTH:
        group = max(groups.values(), key=len)
        files = sorted({f for x in group for f in loaded.subject_files.get(x, ())}) or [_names(overlays)]
        raise KnowledgeFileError(
            ", ".join(files),
            None,
            f"owl:sameAs joins {len(group)} names into one (e.g. <{group[0]}>): reasoning would copy every statement "
            f"about them to each name ({growth} sameAs triples and more; kbq's limit is {MAX_SAMEAS_GROWTH}). "
            "Use skos:altLabel for alternative names",
        )
    _check_class_cycles(loaded, overlays)
    # RDF lists: the longest rdf:rest chain (memoised walk from each node, iterative).
    length: dict[str, int] = {}
    for start in rest:
        chain: list[str] = []
        node = start
        while node in rest and node not in length and len(chain) <= len(rest):
            chain.append(node)
            node = rest[node]
        tail = length.get(node, 0)
        for item in reversed(chain):
            tail += 1
            length[item] = tail
    longest = max(length.values(), default=0)
    if longest > MAX_LIST_LENGTH:
        head = max(length, key=lambda k: length[k])
        files = sorted(loaded.subject_files.get(head, ())) or [_names(overlays)]
        raise KnowledgeFileError(
            ", ".join(files),
            None,
            f"an RDF list of {longest} items, over kbq's limit of {MAX_LIST_LENGTH} (OWL-RL list rules grow with its square)",
        )


def _check_class_cycles(loaded: LoadedKnowledge, overlays: Sequence[str | os.PathLike[str]]) -> None:
    """k classes in a subClassOf (or equivalentClass) cycle are all equal: reasoning states k*k
    subclass pairs and copies every member to each (3,000 took 30 s and 3 GB; issue 22, L-11)."""
    edges: dict[str, list[str]] = {}
    for s, p, o in loaded.links():
        if str(p) in _CLASS_LINKS:
            edges.setdefault(str(s), []).append(str(o))
            if str(p) != _SUBCLASS:
                edges.setdefault(str(o), []).append(str(s))
    growth = 0
    biggest: list[str] = []
    for component in _strongly_connected(edges):
        if len(component) > 1:
            growth += len(component) ** 2
            biggest = max(biggest, component, key=len)
    if growth > MAX_CLASS_CYCLE_GROWTH:
        files = sorted({f for x in biggest for f in loaded.subject_files.get(x, ())}) or [_names(overlays)]
        raise KnowledgeFileError(
            ", ".join(files[:5]),
            None,
            f"rdfs:subClassOf / owl:equivalentClass make {len(biggest)} classes one (a cycle through <{biggest[0]}>): "
            f"reasoning would relate each to each ({growth} pairs; kbq's limit is {MAX_CLASS_CYCLE_GROWTH})",
        )


def _strongly_connected(edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iterative (a 3,000-class cycle would overflow recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, [])
            if i < len(targets):
                work.append((node, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def _located(exc: InconsistencyError, loaded: LoadedKnowledge) -> InconsistencyError:
    """The same findings, each with the files that state its subject."""
    lines = []
    for line in str(exc).splitlines():
        subject = line.strip().split(": ", 1)[0]
        files = loaded.subject_files.get(subject)
        lines.append(f"{line} [stated in {', '.join(sorted(files))}]" if files else line)
    return InconsistencyError("\n".join(lines))


MONOTONIC_FILE = "monotonic-closure.nq"  # in a snapshot of the shipped knowledge: closure.restore_closure reads it


def _base_closure(base: str | None, say: Progress) -> Path | None:
    """The monotonic closure of the shipped snapshot at `base`, to start an overlay build from."""
    if base is None:
        return None
    dump = Path(base, MONOTONIC_FILE)
    if snapshot.problem(base) is not None or not dump.is_file():
        say(f"kbq: the snapshot {base} cannot be reused; building from the knowledge files")
        return None
    return dump


def _reason(
    loaded: LoadedKnowledge,
    engine: str,
    say: Progress,
    seeded: bool = False,
    monotonic_dump: Path | None = None,
    interrupt: Callable[[], None] | None = None,
) -> tuple[int, int, float]:
    """Add the closure to loaded.store's INFERRED graph: (inferred, rounds, seconds).
    `seeded`: INFERRED holds a snapshot's closure and the NEW graph what the overlays add.
    `monotonic_dump`: where to write the monotonic closure (the sparql engine only).
    `interrupt`: may raise between rules to stop (the sparql engine only)."""
    from kbq.build import closure, loader, rules  # not reason: it imports rdflib, which the sparql engine never needs

    if engine == DEFAULT_ENGINE:  # sparql
        beyond = closure.beyond_subset(loaded.store)
        if not beyond:
            rules.load_rules(resources.rule_files())  # each parses and is a CONSTRUCT, or an error naming it
            result = closure.infer_in_store(
                loaded.store, resources.rule_files(), seeded=seeded, monotonic_dump=monotonic_dump, interrupt=interrupt
            )
            rules.check_consistency(loaded.store, rules.load_rules(resources.check_files(), form="SELECT"))
            return result.inferred, result.rounds, result.seconds
        shown = ", ".join(beyond[:5]) + (" ..." if len(beyond) > 5 else "")
        say(f"kbq: the knowledge uses {shown}, beyond the sparql engine's OWL-RL subset: reasoning with reasonable")
        engine = "reasonable"
        loaded.store.update(f"DROP SILENT GRAPH <{resources.INFERRED_GRAPH}>")  # an overlay's base closure: recomputed
        loaded.store.update(f"DROP SILENT GRAPH <{closure.NEW}>")
    from kbq.build import reason

    inference = reason.infer(loaded.triples, resources.rule_files(), engine=reason.Engine(engine), checks=resources.check_files())
    graph = ox.NamedNode(resources.INFERRED_GRAPH)
    loaded.store.bulk_extend(loader.to_ox_quad(s, p, o, graph) for s, p, o in inference.inferred)
    return len(inference.inferred), inference.rounds, inference.seconds


def build(
    path: str | os.PathLike[str],
    *,
    overlays: Sequence[str | os.PathLike[str]] = (),
    engine: str = DEFAULT_ENGINE,
    validate: bool = True,
    progress: Progress | None = None,
    tmp: str | os.PathLike[str] | None = None,
    base: str | None = None,
) -> SnapshotInfo:
    """Load, validate, reason and write a snapshot at `path` (through `tmp`, then a rename).

    `base`: the shipped knowledge's snapshot (same engine); an overlay build then starts from its
    closure instead of the shipped files (the sparql engine only)."""
    from kbq.build import closure, loader

    path = Path(path)
    say = progress or (lambda _msg: None)
    start = time.perf_counter()
    for overlay in overlays:
        snapshot.check_overlay(overlay)  # a regular file of bounded size, before anything reads it
    shipped = resources.knowledge_files()
    kb_files = shipped + [Path(p) for p in overlays]
    reused = _base_closure(base, say) if overlays and engine == DEFAULT_ENGINE else None
    seeded = reused is not None
    store = ox.Store()
    if reused is not None:
        say(f"kbq: starting from the shipped snapshot's closure, loading {len(overlays)} overlay files")
        closure.restore_closure(store, reused)
        # the overlay's triples also in NEW: reasoning starts from them (closure.infer_in_store, seeded)
        loader.load_into(store, [Path(p) for p in overlays], graph=ox.NamedNode(closure.NEW))
        store.update(f"ADD <{closure.NEW}> TO <{resources.ASSERTED_GRAPH}>")
    else:
        say(f"kbq: loading {len(kb_files)} knowledge files")
        loader.load_into(store, kb_files)
    asserted = closure.count_graph(store, resources.ASSERTED_GRAPH)
    loaded = loader.LoadedKnowledge(store=store, files=kb_files, count=asserted)
    check_limits(loaded, overlays)
    key = path.name.removeprefix("snapshot-").split(".", 1)[0]
    work = Path(tmp) if tmp is not None else path.with_name(f"{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        work.mkdir(parents=True, exist_ok=True)
        writer = _SnapshotWriter(store, work)
    except (OSError, RuntimeError) as exc:
        raise _cannot_write(path, work, exc) from None
    try:
        dump = work / MONOTONIC_FILE if not overlays and engine == DEFAULT_ENGINE else None  # a base for overlay builds
        rounds, seconds = _validate_and_reason(loaded, engine, overlays, validate, say, seeded, dump)
        inferred = closure.count_graph(store, resources.INFERRED_GRAPH)
    except BaseException:
        writer.abandon()
        _discard(work)
        raise
    try:
        inferred_quads = store.quads_for_pattern(None, None, None, ox.NamedNode(resources.INFERRED_GRAPH))
        writer.finish(itertools.chain(inferred_quads, _name_index(store)))
        del writer, store, loaded
        info = SnapshotInfo(
            path=str(path),
            key=key,
            engine=engine,
            asserted=asserted,
            inferred=inferred,
            rounds=rounds,
            reason_seconds=round(seconds, 3),
            build_seconds=round(time.perf_counter() - start, 3),
            files=[_relative(f) for f in kb_files],
        )
        snapshot.write_manifest(str(work), info)  # written last: marks a complete build
        os.rename(work, path)
    except (OSError, RuntimeError) as exc:
        raise _cannot_write(path, work, exc) from None
    say(f"kbq: snapshot ready ({info.asserted} asserted, {info.inferred} inferred, {info.build_seconds:.2f} s)")
    return info


def _validate_and_reason(
    loaded: LoadedKnowledge,
    engine: str,
    overlays: Sequence[str | os.PathLike[str]],
    validate: bool,
    say: Progress,
    seeded: bool,
    monotonic_dump: Path | None,
) -> tuple[int, float]:
    """SHACL validation beside the closure into the INFERRED graph: (rounds, seconds)."""
    checker = _Validation(loaded) if validate else None
    if validate:
        say("kbq: validating against the SHACL shapes")
    say(f"kbq: reasoning ({engine}) over {loaded.count} triples")
    try:
        _added, rounds, seconds = _reason(
            loaded, engine, say, seeded=seeded, monotonic_dump=monotonic_dump, interrupt=checker.interrupt if checker else None
        )
    except BaseException as exc:
        if checker is not None:
            checker.raise_found()  # violations first, as when validation ran before reasoning
        if isinstance(exc, InconsistencyError):
            raise _located(exc, loaded) from None
        if isinstance(exc, KbqError | MemoryError) or not isinstance(exc, Exception):
            raise
        # any failure of a reasoner is reported with the files it read
        raise KnowledgeFileError(_names(overlays), None, f"reasoning failed: {type(exc).__name__}: {exc}") from None
    if checker is not None:
        checker.raise_found()
    return rounds, seconds


class _Stopped(Exception):
    """Raised into the reasoning when validation found violations (reported instead)."""


class _Validation:
    """SHACL validation in a thread beside the reasoning: its queries read only the ASSERTED
    graph, which reasoning never changes, and pyoxigraph runs them without the GIL, so the two
    use both cores. Violations are reported before anything the reasoning finds, and stop it
    at its next rule, as when validation ran first."""

    def __init__(self, loaded: LoadedKnowledge) -> None:
        import threading

        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(loaded,), name="kbq-validation", daemon=True)
        self._thread.start()

    def _run(self, loaded: LoadedKnowledge) -> None:
        from kbq.build.validate import validate_graph

        try:
            validate_graph(loaded)
        except BaseException as exc:  # noqa: BLE001 - handed to the building thread by raise_found()
            self.error = exc

    def interrupt(self) -> None:
        if self.error is not None:
            raise _Stopped

    def raise_found(self) -> None:
        self._thread.join()
        if self.error is not None:
            raise self.error


class _SnapshotWriter:
    """The on-disk store of a snapshot being built, written by another process
    (kbq/build/snapshot_writer.py says why): the ASSERTED graph while the build validates and
    reasons (which never change that graph), the rest when `finish` hands it over. The graphs
    travel as files in the work folder (asserted.nt, rest.nq), gone before the manifest is written."""

    def __init__(self, store: ox.Store, work: Path) -> None:
        import subprocess
        import threading

        self.work = work
        self.store = store  # for the write in this process, when no interpreter can be started
        self.proc: subprocess.Popen[bytes] | None = None
        self._failed: BaseException | None = None

        def start() -> None:  # a thread: the dump releases the GIL, and the build goes on meanwhile
            try:
                if not sys.executable:  # an embedded interpreter: finish() writes here
                    return
                graph = resources.ASSERTED_GRAPH  # N-Triples: a dump of one graph in N-Quads puts it in the default graph
                store.dump(str(work / "asserted.nt"), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.NamedNode(graph))
                script = Path(__file__).with_name("snapshot_writer.py")
                argv = [sys.executable, "-P", str(script), str(work), str(work / "asserted.nt"), graph, str(work / "rest.nq")]
                self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
            except BaseException as exc:  # noqa: BLE001 - handed to the building thread by finish()
                self._failed = exc

        self._starter = threading.Thread(target=start, name="kbq-snapshot-writer", daemon=True)
        self._starter.start()

    def finish(self, rest: Iterable[ox.Quad]) -> None:
        """Hand over `rest` and wait until the store is written, flushed, compacted and closed."""
        self._starter.join()
        if self._failed is not None:
            raise self._failed
        if self.proc is None:  # no interpreter to start: written here, after reasoning
            from kbq.build.snapshot_writer import bulk_extend, close

            disk = ox.Store(str(self.work))
            bulk_extend(disk, self.store.quads_for_pattern(None, None, None, ox.NamedNode(resources.ASSERTED_GRAPH)))
            bulk_extend(disk, rest)
            close(disk)
            del disk
            return
        try:
            ox.serialize(rest, str(self.work / "rest.nq"), format=ox.RdfFormat.N_QUADS)
            _out, err = self.proc.communicate(b"go\n")
        except BaseException:
            self.abandon()
            raise
        finally:
            for name in ("asserted.nt", "rest.nq"):
                (self.work / name).unlink(missing_ok=True)
        if self.proc.returncode != 0:
            message = err.decode(errors="replace").strip().splitlines()
            raise OSError(0, (message or [f"the snapshot writer stopped (status {self.proc.returncode})"])[-1])

    def abandon(self) -> None:
        """Stop the writer now (the build failed: the caller removes the folder)."""
        self._starter.join()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            self.proc.communicate()


def _discard(work: Path) -> None:
    import shutil  # lazy: answering a question opens a snapshot and never pays it

    shutil.rmtree(work, ignore_errors=True)


def _cannot_write(path: Path, work: Path, exc: OSError | RuntimeError) -> CacheError:
    _discard(work)
    reason_text = getattr(exc, "strerror", None) or str(exc)
    return CacheError(f"cannot write the snapshot at {path}: {reason_text}")


def _relative(path: Path) -> str:
    """A knowledge file relative to its data folder (KBQ_DATA_DIR's or the shipped one); an overlay as given."""
    for root in (resources.data_dir(), resources.data_root()):
        if root is not None:
            try:
                return str(path.resolve().relative_to(Path(root).resolve()))
            except ValueError:
                pass
    return str(path)


# --- a build in a child process (overlays) -----------------------------------------------------


def _limits(memory_mb: float) -> None:
    import resource

    limit = int(memory_mb * (1 << 20))
    for which in (resource.RLIMIT_DATA, resource.RLIMIT_AS):
        _soft, hard = resource.getrlimit(which)
        if which == resource.RLIMIT_AS:
            limit_as = limit * 4  # address space: thread stacks and allocator arenas are reserved, not used
            wanted = limit_as if hard == resource.RLIM_INFINITY else min(limit_as, hard)
        else:
            wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(which, (wanted, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _error_from(record: dict[str, object], overlays: Sequence[str | os.PathLike[str]]) -> KbqError:
    kind, message = str(record.get("type")), str(record.get("message", ""))
    if kind == "KnowledgeFileError":
        line = record.get("line")
        return KnowledgeFileError(str(record.get("path")), line if isinstance(line, int) else None, str(record.get("detail")))
    if kind == "ValidationError":
        items = record.get("violations")
        found = [Violation(str(v[0]), str(v[1]), v[2], tuple(v[3])) for v in items] if isinstance(items, list) else []
        return ValidationError(found)
    if kind == "InconsistencyError":
        return InconsistencyError(message)
    if kind == "CacheError":
        return CacheError(message)
    if kind == "MemoryError":
        return ResourceLimitError(f"building the snapshot with {_names(overlays)} ran out of memory (KBQ_BUILD_MEMORY_MB)")
    return KnowledgeFileError(_names(overlays), None, f"the build failed: {kind}: {message}")


def _stop_group(pid: int) -> None:
    """Kill what is left of the build process's session (its snapshot writer, kbq/build/snapshot_writer.py)."""
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _build_isolated(
    path: str,
    tmp: str,
    overlays: Sequence[str | os.PathLike[str]],
    engine: str,
    progress: Progress | None,
    base: str | None = None,
) -> None:
    import subprocess
    import threading

    timeout = _env_number("KBQ_BUILD_TIMEOUT", 900)
    memory = _env_number("KBQ_BUILD_MEMORY_MB", 4096)
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable, "-m", "kbq.build.pipeline", "--out", path, "--tmp", tmp, "--engine", engine]
    argv += ["--base", base] if base else []
    argv += ["--", *(os.path.abspath(os.fspath(p)) for p in overlays)]
    proc = subprocess.Popen(  # a session of its own: its snapshot writer is stopped with it (_stop_group)
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: _limits(memory),
        start_new_session=True,
    )
    records: list[dict[str, object]] = []
    errors: list[str] = []

    def relay() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(_PROGRESS_TAG):
                if progress is not None:
                    progress(line[len(_PROGRESS_TAG) :].rstrip("\n"))
            elif line.startswith(_ERROR_TAG):
                try:
                    records.append(json.loads(line[len(_ERROR_TAG) :]))
                except ValueError:
                    pass

    def drain() -> None:
        assert proc.stderr is not None
        errors.extend(proc.stderr.read().splitlines()[-20:])

    threads = [threading.Thread(target=relay, daemon=True), threading.Thread(target=drain, daemon=True)]
    for thread in threads:
        thread.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise ResourceLimitError(
            f"building the snapshot with {_names(overlays)} took more than {timeout:g} s and was stopped (KBQ_BUILD_TIMEOUT)"
        ) from None
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        _stop_group(proc.pid)  # a writer left by a stopped or failed build would write on into `tmp`
        for thread in threads:
            thread.join(5)
        import shutil  # lazy: answering a question opens a snapshot and never pays it

        shutil.rmtree(tmp, ignore_errors=True)
    if proc.returncode == 0:
        return
    if records:
        raise _error_from(records[-1], overlays)
    how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"status {proc.returncode}"
    detail = "; ".join(line for line in errors if line.strip())[-500:]
    raise ResourceLimitError(
        f"building the snapshot with {_names(overlays)} stopped ({how}: over the memory limit of {memory:g} MB "
        f"(KBQ_BUILD_MEMORY_MB) or a crash of the reasoner){': ' + detail if detail else ''}"
    )


def _child(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m kbq.build.pipeline", description="Build one snapshot (used by ensure).")
    p.add_argument("--out", required=True)
    p.add_argument("--tmp", required=True)
    p.add_argument("--engine", default=DEFAULT_ENGINE)
    p.add_argument("--base", default=None, help="the shipped knowledge's snapshot, to start from its closure")
    p.add_argument("overlays", nargs="*")
    args = p.parse_args(argv)

    def say(message: str) -> None:
        print(_PROGRESS_TAG + message, flush=True)

    record: dict[str, object]
    try:
        build(args.out, overlays=args.overlays, engine=args.engine, progress=say, tmp=args.tmp, base=args.base)
        return 0
    except KnowledgeFileError as exc:
        record = {"type": "KnowledgeFileError", "path": exc.path, "line": exc.line, "detail": exc.message}
    except ValidationError as exc:
        violations = [[v.subject, v.message, v.path, list(v.files)] for v in exc.violations]
        record = {"type": "ValidationError", "violations": violations}
    except MemoryError:
        record = {"type": "MemoryError"}
    except BaseException as exc:  # a reasoner's panic (pyo3 raises a BaseException) is reported too
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        record = {"type": type(exc).__name__, "message": str(exc)[:2000]}
    print(_ERROR_TAG + json.dumps(record), flush=True)
    return 2


# --- open or heal -------------------------------------------------------------------------------

_BYPASS: list[str] = []  # temporary cache folders of this process (an unwritable cache)


def _writable_tmp(root: str, key: str) -> str:
    os.makedirs(root, exist_ok=True)
    tmp = os.path.join(root, f"snapshot-{key}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    os.mkdir(tmp)
    return tmp


def _bypass_root(root: str, exc: OSError, say: Progress) -> str:
    import atexit
    import tempfile

    if not _BYPASS:
        folder = tempfile.mkdtemp(prefix="kbq-cache-")
        import shutil  # lazy: answering a question opens a snapshot and never pays it

        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _BYPASS.append(folder)
        say(
            f"kbq: cannot write the cache folder {root} ({exc.strerror or exc}); this process uses a temporary "
            f"snapshot in {folder} (set KBQ_CACHE_DIR to a writable folder to keep it)"
        )
    return _BYPASS[0]


def ensure(
    overlays: Sequence[str | os.PathLike[str]] = (),
    *,
    engine: str = DEFAULT_ENGINE,
    rebuild: bool = False,
    progress: Progress | None = None,
    verify: bool = False,
) -> tuple[ox.Store, SnapshotInfo]:
    """The snapshot for these inputs: the newest usable one, else a new build.

    A damaged, truncated, moved-and-changed or otherwise unusable snapshot is rebuilt with one
    message; an unwritable cache folder is bypassed (a temporary one, with one message).
    `verify`: check every file's checksum, not only sizes and times (`kbq serve`, `kbq build`)."""
    say = progress or _warn
    overlays = list(overlays)
    files = snapshot.input_files(overlays)
    root = snapshot.cache_root()
    key = snapshot.input_key(files, engine)
    if not rebuild:
        candidates = snapshot.versions(root, key) + [v for folder in _BYPASS for v in snapshot.versions(folder, key)]
        for path in candidates:
            opened = snapshot.open_existing(path, verify=verify)
            if opened is not None:
                if len(candidates) > 1:
                    snapshot.sweep(root, key, keep=path)
                return opened
            why = snapshot.problem(path, verify=verify) or "the store does not open"
            say(f"kbq: the snapshot {path} cannot be used ({why}); building a new one")
            snapshot.remove_if_unused(path)
    try:
        tmp = _writable_tmp(root, key)
    except OSError as exc:
        root = _bypass_root(root, exc, say)
        tmp = _writable_tmp(root, key)
    final = snapshot.new_version(root, key)
    held = snapshot.hold_new(tmp)  # locked before the build is renamed into place (L-9)
    try:
        if overlays:
            base = None
            if engine == DEFAULT_ENGINE:  # the overlay build starts from the shipped snapshot's closure
                _base_store, base_info = ensure((), engine=engine, progress=progress)
                base = base_info.path
            _build_isolated(final, tmp, overlays, engine, progress, base)
        else:
            build(final, overlays=overlays, engine=engine, progress=progress, tmp=tmp)
    except BaseException:
        if held is not None:
            os.close(held)
        raise
    finally:
        import shutil  # lazy: answering a question opens a snapshot and never pays it

        shutil.rmtree(tmp, ignore_errors=True)
    snapshot.adopt(final, held)
    opened = snapshot.open_existing(final)
    if opened is None:
        why = snapshot.problem(final) or "the store does not open"
        raise CacheError(f"the snapshot just built at {final} cannot be opened: {why}")
    snapshot.sweep(root, key, keep=final)
    return opened


def _warn(message: str) -> None:
    import logging

    logging.getLogger("kbq").warning("%s", message)


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


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
