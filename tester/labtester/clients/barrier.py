"""The one thing the lab adds to many clients: a barrier, served by client 0.

Every client holds one TCP connection to it for the whole run and speaks JSON lines. A meeting is
one line out and one line back: the server answers every client of a step at once when the last
one arrives, and that answer is the release. Each arrival may carry data (client 0 publishes what
only it measures, such as the calibration; the others report what they sent) and the raw records
the client measured since its last meeting, which the server appends to the run's one raw log.

Meetings belong to a scope (the run, or one target). A client that cannot go on with a target
abandons its scope: every meeting of that scope, pending or later, answers with the reason. A
client whose connection closes before it said goodbye (it died, its pod was deleted) breaks the
whole run the same way, so nobody waits for a client that will never come.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from labtester.rawlog import RawLog

RUN_SCOPE = "run"


@dataclass
class _Pending:
    step: str
    arrivals: dict[int, Any] = field(default_factory=dict)
    answer: asyncio.Future[dict[str, Any]] | None = None


class Barrier:
    """The meeting points of `count` clients (asyncio, one event loop)."""

    def __init__(self, count: int, log: RawLog) -> None:
        self.count, self.log = count, log
        self.pending: dict[str, _Pending] = {}
        self.abandoned: dict[str, str] = {}
        self.broken: str | None = None
        self.joined: set[int] = set()
        self.finished: set[int] = set()
        self.connections: set[asyncio.StreamWriter] = set()

    def _closed(self, scope: str) -> dict[str, Any] | None:
        """The answer to a meeting of a scope that was abandoned, or of a run that broke."""
        if self.broken:
            return {"abandoned": self.broken, "broken": True}
        if scope in self.abandoned:
            return {"abandoned": self.abandoned[scope]}
        return None

    async def meet(self, client: int, scope: str, step: str, data: Any) -> dict[str, Any]:
        if closed := self._closed(scope):
            return closed
        meeting = self.pending.get(scope)
        if meeting is None:
            meeting = self.pending[scope] = _Pending(step, answer=asyncio.get_running_loop().create_future())
        elif meeting.step != step:  # a plan that diverged would otherwise wait forever
            self.abandon(
                scope, f"clients out of step: client {client} at {step!r}, others at {meeting.step!r}"
            )
            return {"abandoned": self.abandoned[scope]}
        meeting.arrivals[client] = data
        assert meeting.answer is not None
        if len(meeting.arrivals) == self.count:
            del self.pending[scope]
            meeting.answer.set_result({"data": {str(k): v for k, v in sorted(meeting.arrivals.items())}})
        return await asyncio.shield(meeting.answer)

    def abandon(self, scope: str, reason: str) -> None:
        self.abandoned.setdefault(scope, reason)
        self._answer_pending(lambda s: s == scope)

    def break_run(self, reason: str) -> None:
        self.broken = self.broken or reason
        self._answer_pending(lambda _: True)

    def _answer_pending(self, which: Any) -> None:
        for scope in [s for s in self.pending if which(s)]:
            meeting = self.pending.pop(scope)
            if meeting.answer and not meeting.answer.done():
                meeting.answer.set_result(self._closed(scope) or {"abandoned": "abandoned"})

    def expect_all_by(self, timeout_s: float) -> None:
        """A client that never joins (its process or pod never started) breaks the run, in time."""

        def check() -> None:
            if len(self.joined) < self.count:
                self.break_run(
                    f"only {len(self.joined)} of {self.count} clients joined within {timeout_s:g} s"
                )

        asyncio.get_running_loop().call_later(timeout_s, check)

    def keep(self, client: int, records: list[dict[str, Any]]) -> None:
        """A client's records, appended to the run's raw log as they arrive."""
        self.log.write_many([{**record, "client": client} for record in records])

    async def serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client: int | None = None
        self.connections.add(writer)
        try:
            while line := await reader.readline():
                message = json.loads(line)
                client = message.get("client", client)
                assert client is not None
                self.joined.add(client)
                self.keep(client, message.get("records", []))
                answer = await self._handle(client, message)
                writer.write(json.dumps(answer).encode() + b"\n")
                await writer.drain()
        except (OSError, ValueError, AssertionError):
            pass
        finally:
            self.connections.discard(writer)
            writer.close()
            if client is not None and client not in self.finished:
                self.break_run(f"client {client} stopped before the end of the run (its connection closed)")

    async def _handle(self, client: int, message: dict[str, Any]) -> dict[str, Any]:
        match message["op"]:
            case "meet":
                return await self.meet(client, message["scope"], message["step"], message.get("data"))
            case "abandon":
                self.abandon(message["scope"], message["reason"])
                return {"ok": True}
            case "bye":
                self.finished.add(client)
                return {"ok": True}
            case _:  # hello, and anything that only ships records
                return {"ok": True, "count": self.count}


class BarrierServer:
    """The barrier on its own thread and event loop, so it answers while client 0 measures."""

    def __init__(self, count: int, log: RawLog, host: str, port: int, join_timeout_s: float) -> None:
        self.barrier = Barrier(count, log)
        self.join_timeout_s = join_timeout_s
        self.host, self.port = host, port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="barrier", daemon=True)
        self._server: asyncio.Server | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self.barrier.serve_client, self.host, self.port, limit=2**26)
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        self._loop.call_soon(self.barrier.expect_all_by, self.join_timeout_s)
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> BarrierServer:
        self._thread.start()
        self._ready.wait()
        return self

    def stop(self) -> None:
        """Close every connection, then the loop (the run has ended: nobody is waiting)."""

        async def close() -> None:
            self.barrier.finished.update(self.barrier.joined)  # closing now is no crash
            self.barrier.break_run("the run has ended")  # nobody waits on
            if self._server:
                self._server.close()
            for writer in list(self.barrier.connections):
                writer.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if tasks:
                await asyncio.wait(tasks, timeout=2)
            self._loop.stop()

        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(close(), self._loop)
            self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()
