"""A client's view of the crew it belongs to: its index i of P, its share of the work, and the
meetings at the barrier (barrier.py) that keep every client on the same step.

With P = 1 there is no barrier: a meeting returns at once with the client's own data. Client 0
also talks to its own barrier over loopback, like every other client, so both paths are one. A
client joins with the run's token, measures its clock against the barrier's, and ends with a
goodbye, or with a failure that stops every other client at once (`fail`); a break that reaches it
while it measures interrupts its main thread (`interrupt_when_broken`).
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from labtester.clients.link import CrewBroken, Link
from labtester.control import TargetError
from labtester.rawlog import Record

if TYPE_CHECKING:
    from labtester.settings import LabSettings

__all__ = ["Abandoned", "Crew", "CrewBroken", "CrewInterrupted", "part"]

CONNECT_RETRY_S = 0.5
CALL_TIMEOUT_S = 30.0  # a call the barrier answers at once (hello, clock, abandon, fail, bye)
CLOCK_EXCHANGES = 8  # the one with the shortest round trip sets the offset
# The signal that interrupts a client's main thread when the run breaks while it measures.
BROKEN_SIGNAL = signal.SIGUSR1


class Abandoned(TargetError):
    """Another client (or this one) stopped work on this scope; the reason says who and why."""


class CrewInterrupted(BaseException):
    """The run broke while this client measured: raised in its main thread at once, whatever it
    was doing (a BaseException, so that no handler of measuring errors takes it for one)."""


def meeting_deadline_s(settings: LabSettings) -> float:
    """How long a meeting may wait for its last client after the first arrived: the longest
    client 0 may take before the first meeting (its wait for the targets, then for Prometheus, its
    census) or a straggler's last request. Only a stuck client hits it; a lost one is found by the
    keep-alive far sooner."""
    return 2 * settings.ready_timeout_s + settings.request_timeout_s + 60


def part(total: int, index: int, count: int) -> int:
    """Client `index`'s part of `total` split as evenly as can be: the first ones get one more."""
    return total // count + (1 if index < total % count else 0)


@dataclass
class Crew:
    index: int = 0
    count: int = 1
    meet_timeout_s: float = 3600.0  # a meeting's deadline here; the barrier's own comes first
    _link: Link | None = None
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

    def connect(self, address: str, token: str, timeout_s: float) -> Crew:
        """Join the barrier at host:port with the run's token, retrying until it answers (client 0
        may start later), then measure this clock against the barrier's."""
        host, _, port = address.rpartition(":")
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                sock = socket.create_connection((host, int(port)), timeout=10)
                break
            except OSError as error:
                if time.monotonic() > deadline:
                    raise CrewBroken(f"the barrier at {address} did not answer: {error}") from error
                time.sleep(CONNECT_RETRY_S)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._link = Link(sock).start()
        hello = {"op": "hello", "client": self.index, "count": self.count, "token": token}
        answer = self._link.call(hello, CALL_TIMEOUT_S)
        if "refused" in answer:
            self._link.close()
            self._link = None
            raise CrewBroken(f"the barrier at {address} refused client {self.index}: {answer['refused']}")
        self.measure_clock("join")
        return self

    def interrupt_when_broken(self) -> None:
        """From the main thread: a break that reaches this client while it measures (not waiting
        on a meeting, which learns it from the answer) raises CrewInterrupted there at once."""
        if self._link is None:
            return
        main = threading.main_thread().ident
        assert main is not None and threading.get_ident() == main

        def raise_it(signum: int, frame: FrameType | None) -> None:
            raise CrewInterrupted(self._link.broken if self._link else "the run broke")

        signal.signal(BROKEN_SIGNAL, raise_it)
        self._link.on_broken = lambda _: signal.pthread_kill(main, BROKEN_SIGNAL)

    def _call(self, message: dict[str, Any], timeout_s: float = CALL_TIMEOUT_S) -> dict[str, Any]:
        assert self._link is not None
        records, self.outbox = self.outbox, []
        return self._link.call({**message, "records": records}, timeout_s)

    def measure_clock(self, at: str) -> None:
        """This clock's offset from the barrier's (client 0's), NTP-style: the barrier's time at
        the middle of the exchange with the shortest round trip, less this clock's; right within
        half that round trip. Recorded (type "clock"), shipped at the next meeting."""
        if self._link is None:
            return
        exchanges = []
        for _ in range(CLOCK_EXCHANGES):
            sent = time.time()
            now = float(self._call({"op": "clock"})["now"])
            received = time.time()
            exchanges.append((received - sent, now - (sent + received) / 2))
        round_trip, offset = min(exchanges)
        self.record({"type": "clock", "at": at, "offset_s": offset, "round_trip_s": round_trip})

    def meet(self, scope: str, step: str, data: Any = None) -> dict[int, Any]:
        """Wait for every client at `step`; every client's data by index. This blocks the whole
        client on purpose: at a release it has nothing else to do."""
        if self._link is None:
            return {self.index: data}
        answer = self._call({"op": "meet", "scope": scope, "step": step, "data": data}, self.meet_timeout_s)
        if "abandoned" in answer:
            raise Abandoned(answer["abandoned"])
        return {int(k): v for k, v in answer["data"].items()}

    def abandon(self, scope: str, reason: str) -> None:
        """Stop every client's work on `scope`, saying why (and who)."""
        if self._link is not None:
            self._call({"op": "abandon", "scope": scope, "reason": f"client {self.index}: {reason}"})

    def record(self, record: Record) -> None:
        """A raw record to ship to the run's log at the next meeting (every client's clock; the
        measurements of a client other than 0)."""
        self.outbox.append(record)

    def fail(self, reason: str) -> None:
        """This client stops before the end: every other client stops now, told why."""
        if self._link is None:
            return
        try:
            self._call({"op": "fail", "reason": reason})
        except CrewBroken:
            pass  # broken already: the others know
        finally:
            self._close()

    def close(self) -> None:
        """The end of this client's run: ship what is left and say goodbye (not taken for a crash)."""
        if self._link is None:
            return
        try:
            self._call({"op": "bye"})
        except CrewBroken:
            pass
        finally:
            self._close()

    def _close(self) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None
