"""A client's view of the crew it belongs to: its index i of P, its share of the work, and the
meetings at the barrier (barrier.py) that keep every client on the same step.

With P = 1 there is no barrier: a meeting returns at once with the client's own data. Client 0
also talks to its own barrier over loopback, like every other client, so both paths are one.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from labtester.client import TargetError
from labtester.rawlog import Record

CONNECT_RETRY_S = 0.5


class Abandoned(TargetError):
    """Another client (or this one) stopped work on this scope; the reason says who and why."""


class CrewBroken(RuntimeError):
    """The barrier is gone or a client stopped: the run cannot go on together."""


def part(total: int, index: int, count: int) -> int:
    """Client `index`'s part of `total` split as evenly as can be: the first ones get one more."""
    return total // count + (1 if index < total % count else 0)


@dataclass
class Crew:
    index: int = 0
    count: int = 1
    _socket: socket.socket | None = None
    _reader: Any = None
    outbox: list[Record] = field(default_factory=list)  # records to ship at the next meeting

    @property
    def leader(self) -> bool:
        """Client 0: it alone takes the census, probes, calibrates and scrapes."""
        return self.index == 0

    def part(self, total: int) -> int:
        return part(total, self.index, self.count)

    def mine(self, position: int) -> bool:
        """Whether item `position` of a sequence dealt round-robin is this client's."""
        return position % self.count == self.index

    def connect(self, address: str, timeout_s: float) -> Crew:
        """Join the barrier at host:port, retrying until it answers (client 0 may start later)."""
        host, _, port = address.rpartition(":")
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self._socket = socket.create_connection((host, int(port)), timeout=10)
                break
            except OSError as error:
                if time.monotonic() > deadline:
                    raise CrewBroken(f"the barrier at {address} did not answer: {error}") from error
                time.sleep(CONNECT_RETRY_S)
        self._socket.settimeout(None)  # a meeting waits as long as the slowest client's step
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = self._socket.makefile("rb")
        answer = self._call({"op": "hello"})
        if answer.get("count") != self.count:
            raise CrewBroken(f"the barrier expects {answer.get('count')} clients, this one {self.count}")
        return self

    def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self._socket is not None and self._reader is not None
        records, self.outbox = self.outbox, []
        line = json.dumps({**message, "client": self.index, "records": records}, default=str)
        try:
            self._socket.sendall(line.encode() + b"\n")
            reply = self._reader.readline()
        except OSError as error:
            raise CrewBroken(f"the barrier stopped answering: {error}") from error
        if not reply:
            raise CrewBroken("the barrier closed the connection (client 0 stopped)")
        answer: dict[str, Any] = json.loads(reply)
        return answer

    def meet(self, scope: str, step: str, data: Any = None) -> dict[int, Any]:
        """Wait for every client at `step`; every client's data by index. This blocks the whole
        client on purpose: at a release it has nothing else to do."""
        if self._socket is None:
            return {self.index: data}
        answer = self._call({"op": "meet", "scope": scope, "step": step, "data": data})
        if answer.get("broken"):
            raise CrewBroken(answer["abandoned"])
        if "abandoned" in answer:
            raise Abandoned(answer["abandoned"])
        return {int(k): v for k, v in answer["data"].items()}

    def abandon(self, scope: str, reason: str) -> None:
        """Stop every client's work on `scope`, saying why (and who)."""
        if self._socket is not None:
            self._call({"op": "abandon", "scope": scope, "reason": f"client {self.index}: {reason}"})

    def record(self, record: Record) -> None:
        """A raw record of a client other than 0: shipped to the run's log at the next meeting."""
        self.outbox.append(record)

    def close(self) -> None:
        """Ship what is left and say goodbye, so closing is not taken for a crash."""
        if self._socket is None:
            return
        try:
            self._call({"op": "bye"})
        except CrewBroken:
            pass
        finally:
            self._reader.close()
            self._socket.close()
            self._socket = None
