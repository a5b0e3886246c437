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
import struct
import sys
from collections.abc import Mapping
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
    ) -> None:
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
            status = worker.proc.returncode
            log.warning("kbq serve: worker %d exited with status %s while idle; starting another", worker.pid, status)
            self.workers.discard(worker)
            await self._respawn()

    async def _respawn(self) -> None:
        delay = 0.1
        while not self._closing:
            try:
                worker = await WorkerProcess.start(self.argv)
            except (WorkerLost, OSError) as exc:
                log.error("kbq serve: could not start a worker (%s); retrying in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if self._closing:
                await worker.kill()
            else:
                self._add(worker)
            return

    def _replace(self, worker: WorkerProcess) -> None:
        """Kill `worker` (its state is unknown) and start another in the background."""
        self.workers.discard(worker)

        async def replace() -> None:
            await worker.kill()
            await self._respawn()

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
                self._replace(worker)
                raise WorkerLost(
                    f"the query was stopped: it needed more than the {self.memory_mb} MB a query may use "
                    "(or its worker was killed); simplify it or add a LIMIT"
                ) from exc
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
