"""A small pool of killable query workers (kbq.serve.worker), driven from the event loop.

Every wait is an awaitable on the worker's pipes, so the server's event loop never blocks.
A query that runs past the time limit gets its worker killed (SIGKILL) and replaced; the
other workers keep answering. At most `max_pending` jobs are admitted (running + queued);
past that the pool refuses at once, so a burst cannot pile up unbounded work.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import struct
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("kbq.serve.app")


class PoolBusy(Exception):
    """Too many queries admitted, or none got a worker in time: try again later."""


class QueryTimeout(Exception):
    """The query ran past the time limit; its worker was killed."""


class WorkerLost(Exception):
    """The worker died while running the query (killed by the OS, out of memory, a crash)."""


@dataclass
class Reply:
    status: int
    body: bytes
    error: dict[str, Any] | None = None


def exit_reason(returncode: int | None, memory_mb: int) -> str:
    """What a worker's exit status says, and no more (issue 22, L-1: a crash is not a memory limit)."""
    if returncode is None:
        return "it stopped answering"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if returncode == -signal.SIGABRT:
            return f"it aborted ({name}): the query needed more than the {memory_mb} MB a query may use, or the engine failed"
        if returncode == -signal.SIGKILL:
            return f"it was killed ({name}), by the system (out of memory) or an operator"
        if returncode == -signal.SIGSEGV:
            return f"it crashed ({name}) in the engine"
        return f"it ended on {name}"
    return f"it exited with status {returncode}"


class WorkerProcess:
    """One child process and the two pipes the jobs go through."""

    def __init__(self, proc: asyncio.subprocess.Process, info: dict[str, Any]) -> None:
        self.proc = proc
        self.info = info
        self.busy = False  # running a job: if it dies now, `WorkerPool.run` replaces it

    @property
    def pid(self) -> int:
        return self.proc.pid

    @staticmethod
    async def _read(proc: asyncio.subprocess.Process) -> tuple[dict[str, Any], bytes]:
        assert proc.stdout is not None
        head_len, body_len = struct.unpack(">II", await proc.stdout.readexactly(8))
        data = await proc.stdout.readexactly(head_len + body_len)
        return json.loads(data[:head_len]), data[head_len:]

    @classmethod
    async def start(cls, argv: list[str]) -> WorkerProcess:
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        try:
            header, _ = await cls._read(proc)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            await proc.wait()
            raise WorkerLost(f"worker exited with status {proc.returncode} while starting") from exc
        return cls(proc, header)

    async def call(self, job: Mapping[str, Any]) -> Reply:
        assert self.proc.stdin is not None
        raw = json.dumps(job).encode()
        self.proc.stdin.write(struct.pack(">I", len(raw)) + raw)
        await self.proc.stdin.drain()
        header, body = await self._read(self.proc)
        return Reply(status=int(header["status"]), body=body, error=header.get("error"))

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()


class WorkerPool:
    """`size` workers over one snapshot; `run(job)` returns the worker's Reply."""

    def __init__(
        self,
        snapshot: str,
        *,
        size: int,
        max_pending: int,
        timeout: float,
        max_results: int,
        sandbox: bool = True,
        max_bytes: int = 32 << 20,
        memory_mb: int = 1024,
        resolve: Callable[[], str] | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.resolve = resolve  # finds (or rebuilds) the snapshot again when a worker cannot open it
        self.argv = [
            sys.executable,
            "-m",
            "kbq.serve.worker",
            "--snapshot",
            snapshot,
            "--max-results",
            str(max_results),
            "--max-bytes",
            str(max_bytes),
            "--memory-mb",
            str(memory_mb),
            "--parent",
            str(os.getpid()),
        ]
        self.memory_mb = memory_mb
        if not sandbox:
            self.argv.append("--no-sandbox")
        self.size, self.max_pending, self.timeout = size, max_pending, timeout
        self.pending = 0
        self.workers: set[WorkerProcess] = set()
        self._idle: asyncio.Queue[WorkerProcess] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self.started = False
        self.restarting = 0  # workers being started in place of one that ended
        self.exits = 0  # workers that ended (crash, limit, kill) since the start
        self.failing = ""  # why the last start failed, while starts keep failing

    @property
    def ready(self) -> int:
        return len(self.workers)

    @property
    def sandboxed(self) -> bool:
        return bool(self.workers) and all(w.info.get("sandboxed") for w in self.workers)

    async def start(self) -> None:
        started = await asyncio.gather(*(WorkerProcess.start(self.argv) for _ in range(self.size)))
        for worker in started:
            self._add(worker)
        self.started = True

    def _add(self, worker: WorkerProcess) -> None:
        self.workers.add(worker)
        self._idle.put_nowait(worker)
        self._track(self._watch(worker))

    def _track(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch(self, worker: WorkerProcess) -> None:
        """A worker that dies while idle (the OS killed it) is replaced at once, not found dead
        by the next query."""
        await worker.proc.wait()
        if worker in self.workers and not worker.busy and not self._closing:
            reason = exit_reason(worker.proc.returncode, self.memory_mb)
            log.warning("kbq serve: worker %d ended while idle (%s); starting another", worker.pid, reason)
            self.workers.discard(worker)
            self.exits += 1
            await self._respawn()

    async def _respawn(self, *, counted: bool = False) -> None:
        """Start a worker in place of one that ended; when workers cannot open the snapshot (the
        cache was moved or removed under the server), find or rebuild it, then go on (M-10)."""
        if not counted:
            self.restarting += 1
        delay, failures = 0.1, 0
        try:
            while not self._closing:
                try:
                    worker = await WorkerProcess.start(self.argv)
                except (WorkerLost, OSError) as exc:
                    failures += 1
                    self.failing = str(exc)
                    log.error("kbq serve: could not start a worker (%s); retrying in %.1f s", exc, delay)
                    if failures >= 2 and self.resolve is not None:
                        await self._resolve_again()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)
                    continue
                self.failing = ""
                if self._closing:
                    await worker.kill()
                else:
                    self._add(worker)
                return
        finally:
            self.restarting -= 1

    async def _resolve_again(self) -> None:
        assert self.resolve is not None
        try:
            found = await asyncio.to_thread(self.resolve)
        except Exception as exc:  # noqa: BLE001 - any failure: reported, retried with the next start
            self.failing = f"the snapshot cannot be found or rebuilt: {exc}"
            log.error("kbq serve: %s", self.failing)
            return
        if found != self.snapshot:
            log.warning("kbq serve: the snapshot moved or was rebuilt: workers now open %s", found)
            self.argv[self.argv.index(self.snapshot)] = found
            self.snapshot = found

    def _replace(self, worker: WorkerProcess) -> None:
        """Kill `worker` (its state is unknown) and start another in the background."""
        self.workers.discard(worker)
        self.restarting += 1  # at once: /health must not see a gap between the end and the restart

        async def replace() -> None:
            await worker.kill()
            await self._respawn(counted=True)

        self._track(replace())

    async def _next_idle(self) -> WorkerProcess:
        while True:
            worker = await self._idle.get()
            if worker in self.workers and worker.proc.returncode is None:
                return worker

    async def run(self, job: Mapping[str, Any]) -> Reply:
        if self.pending >= self.max_pending:
            raise PoolBusy(f"{self.pending} queries are already running or queued")
        self.pending += 1
        try:
            try:
                worker = await asyncio.wait_for(self._next_idle(), self.timeout)
            except TimeoutError:
                raise PoolBusy(f"no worker became free within {self.timeout:g} s") from None
            worker.busy = True
            try:
                reply = await asyncio.wait_for(worker.call(job), self.timeout)
            except TimeoutError:
                self._replace(worker)
                raise QueryTimeout(f"the query ran past the {self.timeout:g} s limit and was stopped") from None
            except (asyncio.IncompleteReadError, ConnectionError, RuntimeError) as exc:  # RuntimeError: uvloop, pipe closed
                try:
                    await asyncio.wait_for(worker.proc.wait(), 1.0)
                except TimeoutError:
                    pass
                reason = exit_reason(worker.proc.returncode, self.memory_mb)
                self.exits += 1
                self._replace(worker)
                raise WorkerLost(f"the query was stopped: its worker ended ({reason}); simplify it or add a LIMIT") from exc
            except asyncio.CancelledError:
                self._replace(worker)
                raise
            worker.busy = False
            self._idle.put_nowait(worker)
            return reply
        finally:
            self.pending -= 1

    async def close(self) -> None:
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*(w.kill() for w in list(self.workers)), return_exceptions=True)
        self.workers.clear()
