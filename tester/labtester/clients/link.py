"""A client's one connection to the barrier (barrier.py): JSON lines out, answers back, and the
keep-alive both ways, so that no client waits on a barrier or a client that is gone.

A reader thread takes every line the barrier sends: its pings (a silent barrier, SILENT_S without a
line, is a lost connection), the push that says the run broke, and the answers to this client's
calls, which it hands to the one call in progress. A keep-alive thread says "alive" every
KEEPALIVE_S, so the barrier knows a client that measures (and so says nothing) from a lost one.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
from collections.abc import Callable
from typing import Any

# How often each end says it is alive, and how long a silence means the other end is gone: long
# enough for a busy 2-core machine to delay a thread, short enough that nobody waits for long.
KEEPALIVE_S = 2.0
SILENT_S = 20.0


class CrewBroken(RuntimeError):
    """The barrier is gone or a client stopped: the run cannot go on together."""


class Link:
    """The connection; `on_broken(reason)` runs (on the reader thread) when the run breaks while no
    call is waiting for an answer, which would otherwise learn it only at its next meeting."""

    def __init__(self, sock: socket.socket, on_broken: Callable[[str], None] | None = None) -> None:
        self._socket = sock
        self._socket.settimeout(SILENT_S)
        self._reader = sock.makefile("rb")
        self._send_lock = threading.Lock()
        self._answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self._closing = threading.Event()
        self.on_broken = on_broken
        self.broken: str | None = None
        self.calling = False  # a call waits for its answer (it learns of a break from it)
        self._threads = [
            threading.Thread(target=self._read, name="barrier-reader", daemon=True),
            threading.Thread(target=self._keep_alive, name="barrier-keepalive", daemon=True),
        ]

    def start(self) -> Link:
        for thread in self._threads:
            thread.start()
        return self

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, default=str).encode() + b"\n"
        with self._send_lock:
            self._socket.sendall(line)

    def call(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """One message and its answer; CrewBroken when the run broke or no answer came in time."""
        if self.broken:
            raise CrewBroken(self.broken)
        self.calling = True
        try:
            try:
                self.send(message)
            except OSError as error:
                self._break(f"the barrier stopped answering: {error}")
            try:
                answer = self._answers.get(timeout=timeout_s)
            except queue.Empty:
                self._break(f"the barrier gave no answer to {message.get('op')!r} within {timeout_s:g} s")
                raise CrewBroken(self.broken) from None
        finally:
            self.calling = False
        if answer.get("broken"):
            raise CrewBroken(answer["abandoned"])
        return answer

    def _read(self) -> None:
        while not self._closing.is_set():
            try:
                line = self._reader.readline()
            except TimeoutError:
                self._break(f"the barrier went silent for {SILENT_S:g} s (its connection lost)")
                return
            except (OSError, ValueError) as error:
                self._break(f"the barrier's connection failed: {error}")
                return
            if not line:
                self._break("the barrier closed the connection (client 0 stopped)")
                return
            try:
                message = json.loads(line)
            except ValueError:
                self._break("the barrier sent a line that is not JSON")
                return
            if message.get("ping"):
                continue
            if message.get("push"):  # the run broke, whether or not this client waits on a meeting
                self._break(message["broken"])
                continue
            self._answers.put(message)

    def _keep_alive(self) -> None:
        while not self._closing.wait(KEEPALIVE_S):
            try:
                self.send({"op": "alive"})
            except OSError:
                return  # the reader says why

    def _break(self, reason: str) -> None:
        if self._closing.is_set() or self.broken:
            return
        self.broken = reason
        self._answers.put({"broken": True, "abandoned": reason})
        if self.on_broken is not None and not self.calling:
            self.on_broken(reason)

    def close(self) -> None:
        self._closing.set()
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._reader.close()
        self._socket.close()
