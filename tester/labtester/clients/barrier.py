"""The one thing the lab adds to many clients: a barrier, served by client 0.

Every client holds one TCP connection to it for the whole run and speaks JSON lines (link.py). A
meeting is one line out and one line back: the server answers every client of a step at once when
the last one arrives, and that answer is the release. Each arrival may carry data (client 0
publishes what only it measures, such as the calibration; the others report what they sent) and the
raw records the client measured since its last meeting, which the server appends to the run's log.

Who joins: a client's first line is its hello, with the run's token (generated per run; on
Kubernetes from a Secret) and its index; a wrong token, an index outside 0..P-1 or one already taken
is refused, and the connection closed, without touching the run.

Nobody waits forever. Meetings belong to a scope (the run, or one target): a client that cannot go
on with a target abandons its scope, and every meeting of it answers with the reason. The run breaks
for every client at once (a push to each, whether or not it waits on a meeting) when a client says
it failed (an exception, SIGTERM), when its connection closes before it said goodbye (it died, its
pod was deleted), when it goes silent for SILENT_S (no keep-alive: a lost connection), when a
meeting is not complete within its deadline, or when a client never joins.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from labtester.clients.link import KEEPALIVE_S, SILENT_S
from labtester.rawlog import RawLog

RUN_SCOPE = "run"
HELLO_TIMEOUT_S = 10.0  # a connection that says nothing is dropped, not kept waiting


@dataclass
class _Pending:
    step: str
    arrivals: dict[int, Any] = field(default_factory=dict)
    answer: asyncio.Future[dict[str, Any]] | None = None


class Barrier:
    """The meeting points of `count` clients (asyncio, one event loop)."""

    def __init__(self, count: int, log: RawLog, token: str, meet_timeout_s: float) -> None:
        self.count, self.log, self.token, self.meet_timeout_s = count, log, token, meet_timeout_s
        self.pending: dict[str, _Pending] = {}
        self.abandoned: dict[str, str] = {}
        self.broken: str | None = None
        self.joined: set[int] = set()
        self.finished: set[int] = set()
        self.refused: list[str] = []  # why each refused connection was refused
        self.heard_at: dict[int, float] = {}  # each joined client's last line (monotonic)
        self.connections: dict[asyncio.StreamWriter, int | None] = {}
        self._tasks: set[asyncio.Task[None]] = set()

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
            asyncio.get_running_loop().call_later(self.meet_timeout_s, self._overdue, scope, meeting)
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

    def _overdue(self, scope: str, meeting: _Pending) -> None:
        if self.pending.get(scope) is meeting:
            missing = sorted(set(range(self.count)) - set(meeting.arrivals))
            self.break_run(
                f"client(s) {', '.join(map(str, missing))} did not reach {meeting.step!r} within "
                f"{self.meet_timeout_s:g} s of the first"
            )

    def abandon(self, scope: str, reason: str) -> None:
        self.abandoned.setdefault(scope, reason)
        self._answer_pending(lambda s: s == scope)

    def break_run(self, reason: str) -> None:
        """Every client learns at once: a pending meeting answers, and a push reaches the others."""
        if self.broken:
            return
        self.broken = reason
        self._answer_pending(lambda _: True)
        for writer, client in list(self.connections.items()):
            if client is not None and client not in self.finished:
                self._send(writer, {"push": True, "broken": reason})

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

    async def watch(self) -> None:
        """Keep-alive: a ping to every client, and a client silent for SILENT_S breaks the run."""
        while True:
            await asyncio.sleep(KEEPALIVE_S)
            now = time.monotonic()
            for writer, client in list(self.connections.items()):
                if client is None or client in self.finished:
                    continue
                if now - self.heard_at.get(client, now) > SILENT_S:
                    self.break_run(f"client {client} went silent for {SILENT_S:g} s (its connection lost)")
                self._send(writer, {"ping": True})

    def keep(self, client: int, records: list[dict[str, Any]]) -> None:
        """A client's records, appended to the run's raw log as they arrive."""
        if records:
            self.log.write_many([{**record, "client": client} for record in records])

    def refusal(self, hello: Any) -> str | None:
        """Why a connection's first line does not join the run (None: it joins)."""
        if not isinstance(hello, dict) or hello.get("op") != "hello":
            return "the first line is not a hello"
        if not hmac.compare_digest(str(hello.get("token") or "").encode(), self.token.encode()):
            return "wrong token"  # the token itself is never repeated, logged or written
        index = hello.get("client")
        if type(index) is not int or not 0 <= index < self.count:
            return f"client index {index!r} is not one of 0..{self.count - 1}"
        if index in self.joined:
            return f"client {index} has joined already"
        if hello.get("count") != self.count:
            return f"the barrier expects {self.count} clients, this one {hello.get('count')}"
        return None

    def _send(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if not writer.is_closing():
            writer.write(json.dumps(message).encode() + b"\n")

    async def serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client: int | None = None
        self.connections[writer] = None
        try:
            hello = json.loads(await asyncio.wait_for(reader.readline(), HELLO_TIMEOUT_S) or b"null")
            if refused := self.refusal(hello):
                self.refused.append(refused)
                self._send(writer, {"refused": refused})
                return
            client = self.connections[writer] = hello["client"]
            self.joined.add(client)
            self.heard_at[client] = time.monotonic()
            self._send(writer, {"ok": True, "count": self.count})
            while line := await reader.readline():
                self.heard_at[client] = time.monotonic()
                self._receive(client, writer, json.loads(line))
                await writer.drain()
        except (TimeoutError, OSError, ValueError, KeyError, TypeError):
            pass
        finally:
            self.connections.pop(writer, None)
            writer.close()
            if client is not None and client not in self.finished:
                self.break_run(f"client {client} stopped before the end of the run (its connection closed)")

    def _receive(self, client: int, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        self.keep(client, message.get("records", []))
        match message["op"]:
            case "alive":
                pass
            case "meet":  # answered when the last client arrives; meanwhile its keep-alive is read
                task = asyncio.create_task(self._meet_and_answer(client, writer, message))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            case "clock":  # NTP-style: this clock's time, between the client's send and receipt
                self._send(writer, {"now": time.time()})
            case "abandon":
                self.abandon(message["scope"], message["reason"])
                self._send(writer, {"ok": True})
            case "fail":  # an exception or SIGTERM: every other client stops now, not at a meeting
                self.break_run(f"client {client} stopped: {message['reason']}")
                self._send(writer, {"ok": True})
            case "bye":
                self.finished.add(client)
                self._send(writer, {"ok": True})
            case _:
                self._send(writer, {"ok": True})

    async def _meet_and_answer(
        self, client: int, writer: asyncio.StreamWriter, message: dict[str, Any]
    ) -> None:
        answer = await self.meet(client, message["scope"], message["step"], message.get("data"))
        self._send(writer, answer)


class BarrierServer:
    """The barrier on its own thread and event loop, so it answers while client 0 measures."""

    def __init__(
        self,
        count: int,
        log: RawLog,
        host: str,
        port: int,
        *,
        token: str,
        join_timeout_s: float,
        meet_timeout_s: float,
    ) -> None:
        self.barrier = Barrier(count, log, token, meet_timeout_s)
        self.join_timeout_s = join_timeout_s
        self.host, self.port = host, port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="barrier", daemon=True)
        self._server: asyncio.Server | None = None
        self._watcher: asyncio.Task[None] | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self.barrier.serve_client, self.host, self.port, limit=2**26)
        )
        self.port = int(self._server.sockets[0].getsockname()[1])
        self._loop.call_soon(self.barrier.expect_all_by, self.join_timeout_s)
        self._watcher = self._loop.create_task(self.barrier.watch())
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> BarrierServer:
        self._thread.start()
        self._ready.wait()
        return self

    def stop(self, reason: str = "the run has ended") -> None:
        """Tell whoever is still connected why, close every connection, then the loop."""

        async def close() -> None:
            self.barrier.break_run(reason)
            self.barrier.finished.update(self.barrier.joined)  # closing now is no crash
            if self._watcher:
                self._watcher.cancel()
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
