"""Each request's CPU seconds, counted where the request ran: its account.

A thread's CPU clock (`time.thread_time`) cannot tell whose work it ran. Under sync and gthread
workers a request has its thread to itself, so the clock read around it is the request's. On an
event loop or in a gevent worker many requests share one thread, so the account is charged only
while the request's own code runs: each step of its asyncio task(s) (measure.asynccpu), or each
stretch of its greenlet(s) between switches (measure.greencpu). Work a request hands to another
thread is counted by that thread's clock around the call (`metered_call`, installed on every
executor and thread by measure.handover), and work measured in another process is added by the
app itself (`add_cpu_elsewhere`).

The request's account is in the current `contextvars` context while it runs, so tasks, thread-pool
calls and greenlets it starts find it. An account is open while its request is in flight (up to
the end of its body) and closed after: a task, greenlet or thread the request created and that
lives on is charged to it only while it is open; a call it handed over before its end is its own in
full, also the part that runs after it (added to the process's total, not to the header). Each
closed account's total goes to the process's total of CPU charged to requests (`charged_sink`,
the /metrics counter), which the process's own CPU can be held against. The lab's own control
requests (its /metrics scrapes, census, health and /info reads: `control_paths`) are accounted the
same way but go to a total of their own (`control_sink`): they are the lab's reads, not the app's
requests, and a flow's accounting names them apart. Where a request has its thread to itself (sync
and gthread workers, granian's blocking threads), the server's own work on that thread between two
requests (the last one's response finished, the next one read and parsed) is read on the same
clock and goes to a third total (`server_sink`): the server's cost of each request measured where
and while the requests themselves run, not only on empty ones. So does a pool thread's CPU between
the calls it ran for requests (`metered_call`: handing a result back, waking the loop, taking the
next call, and any call it ran for no request).

Beside its CPU, a request's time waiting on a run queue for a core (`run_queue_s`, the kernel's
schedstat of the thread): the part of its wall time that is neither its work nor its own wait,
so a busy machine's delay is not read as the app's wait. Its own thread's is read by the
middleware around it; handed-over calls add theirs (`queued_s`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import TypeVar

Result = TypeVar("Result")

# The calling thread's scheduler statistics: CPU time, time waiting on a run queue, timeslices (ns).
SCHEDSTAT = "/proc/thread-self/schedstat"
# Charges from other threads against an account's close: one lock per process, taken once per
# handed-over call and once per request, never per step.
_CHARGES = threading.Lock()


def _discard(seconds: float) -> None:
    pass


class RequestAccount:
    """The CPU seconds one request used.

    `cpu_s` and `running_since` belong to the thread the request runs on: `running_since` is that
    thread's CPU clock when the request's current stretch of work began (None between stretches).
    `added` collects seconds from other threads and processes (`charge`). `closed`: the request
    ended; what is charged after goes to the process's total only.
    """

    __slots__ = (
        *("added", "children", "chunks", "closed", "control"),
        *("cpu_s", "queued_s", "running_since", "server_s"),
    )

    def __init__(self, running_since: float | None = None) -> None:
        self.control = False  # a request of the lab's control paths: its total goes to `control_sink`
        self.cpu_s = 0.0
        self.running_since = running_since
        self.added: list[float] = []
        self.closed = False
        self.children: list[ChildThread] = []  # threads it started (measure.handover)
        self.queued_s = 0.0  # its handed-over calls' time on a run queue (their threads')
        # The server's own CPU on the request's thread since the last request there ended (its
        # reading and parsing of this one among it): the server's, booked apart when it closes.
        self.server_s = 0.0
        # The response body's parts the app handed the server (a streamed body's chunks): the server's
        # cost of writing each, where no Python clock sees it (granian's Rust threads), is per part.
        self.chunks = 0

    def total_s(self) -> float:
        """Everything counted so far, the threads it started up to now; called on the request's
        own thread."""
        own, elsewhere = self.split_s()
        return own + elsewhere

    def split_s(self) -> tuple[float, float]:
        """What was counted so far on the request's own thread (its event loop's, greenlet's or
        worker's), and elsewhere: threads it handed work to or started, other processes. Called
        on the request's own thread. An event loop runs the first part one request at a time;
        the second runs in threads beside it (sizing models the two apart)."""
        running = 0.0 if self.running_since is None else time.thread_time() - self.running_since
        if not self.children:
            return self.cpu_s + running, sum(self.added)
        with _CHARGES:  # a thread that ends meanwhile moves its seconds into `added`
            children = sum(child.so_far() for child in self.children)
            return self.cpu_s + running, sum(self.added) + children

    def charge(self, seconds: float) -> None:
        """Seconds used for this request on another thread or process (any thread may call)."""
        with _CHARGES:
            if not self.closed:
                self.added.append(seconds)
                return
        self.book(seconds)

    def book(self, seconds: float) -> None:
        """Into the process's total this request's CPU belongs to: the requests', or the lab's reads'."""
        (control_sink if self.control else charged_sink)(seconds)

    def close(self) -> float:
        """The request ended (on its own thread): its total, also into the process's total. Threads
        it started and that still run are charged up to now and no more."""
        with _CHARGES:
            for child in self.children:
                child.cut()
            self.closed = True
        total = self.total_s()
        self.book(total)
        if self.server_s:
            server_sink(self.server_s)
        if self.chunks:
            chunks_sink(self.chunks)
        return total


class ChildThread:
    """A thread a request started: charged to it from its start until it ends or the request does,
    whichever comes first (read then on the thread's own CPU clock, from whichever side ends)."""

    __slots__ = ("account", "clock", "done", "since")

    def __init__(self, account: RequestAccount) -> None:
        self.account = account
        self.clock: int | None = None  # the thread's CPU clock, once it runs
        self.since = 0.0
        self.done = False

    def begin(self) -> None:
        """On the thread, first thing."""
        with _CHARGES:
            self.clock = time.pthread_getcpuclockid(threading.get_ident())
            self.since = time.clock_gettime(self.clock)

    def end(self) -> None:
        """On the thread, last thing: its CPU since `begin`, unless the request's end cut it."""
        with _CHARGES:
            if self.done or self.clock is None:
                return
            self.done = True
            seconds = time.clock_gettime(self.clock) - self.since
            if not self.account.closed:
                self.account.added.append(seconds)
                return
        self.account.book(seconds)

    def so_far(self) -> float:
        """Its CPU not yet charged (the lock held)."""
        if self.done or self.clock is None:
            return 0.0
        return time.clock_gettime(self.clock) - self.since

    def cut(self) -> None:
        """From the request's thread as it ends (the lock held): the thread's CPU up to now."""
        self.account.added.append(self.so_far())
        self.done = True


ACCOUNT: ContextVar[RequestAccount | None] = ContextVar("lab_request_account", default=None)

# Where the CPU charged to requests goes as it becomes final, and that of the lab's control paths'
# requests: workload.metrics sets both counters, and the control paths.
charged_sink: Callable[[float], None] = _discard
control_sink: Callable[[float], None] = _discard
server_sink: Callable[[float], None] = _discard
chunks_sink: Callable[[int], None] = _discard
control_paths: frozenset[str] = frozenset()


def set_charged_sinks(
    requests: Callable[[float], None],
    control: Callable[[float], None],
    server: Callable[[float], None],
    control_path_set: Iterable[str],
    chunks: Callable[[int], None] = _discard,
) -> None:
    """Where closed accounts' CPU goes: `control` for a request to one of `control_path_set`;
    `server`, the server's own work on their threads between requests (`RequestAccount.server_s`);
    `chunks`, their response bodies' parts (the lab's reads' among them)."""
    global charged_sink, chunks_sink, control_sink, server_sink, control_paths
    charged_sink, control_sink, control_paths = requests, control, frozenset(control_path_set)
    server_sink, chunks_sink = server, chunks


def is_control(path: str) -> bool:
    """A request of the lab's own (its control paths), not of the app's."""
    return path in control_paths


def add_cpu_elsewhere(seconds: float) -> None:
    """Count CPU seconds the current request used outside its own threads, e.g. in a process pool
    (measured there by the work itself). Outside a measured request it does nothing."""
    account = ACCOUNT.get()
    if account is not None:
        account.charge(seconds)


def run_queue_s() -> float | None:
    """Seconds the calling thread has waited on a run queue for a core since it began (None: the
    kernel keeps no schedstat). Read with os.open: a few microseconds, twice a request."""
    try:
        descriptor = os.open(SCHEDSTAT, os.O_RDONLY)
        try:
            return int(os.read(descriptor, 128).split()[1]) / 1e9
        finally:
            os.close(descriptor)
    except (OSError, ValueError, IndexError):
        return None


def queued_since(before: float | None) -> float | None:
    """The calling thread's run-queue seconds since `before` (a `run_queue_s` reading)."""
    now = run_queue_s()
    return None if before is None or now is None else max(0.0, now - before)


# Each pool thread's CPU clock as the last call it ran for a request ended (measure.handover).
_POOL_CALL_ENDED = threading.local()


def metered_call(account: RequestAccount, function: Callable[..., Result], /, *args: object) -> Result:
    """`function(*args)` on this (pool) thread, its CPU time charged to `account`, which is the
    current account meanwhile (so what the call hands on is the request's too); its time on the
    run queue too. What the thread spent since its last such call (the pool's own: handing the
    result back, waking the loop, taking the next call; any call it ran for no request) is the
    server's (`server_sink`)."""
    ended: float | None = getattr(_POOL_CALL_ENDED, "at", None)
    if ended is not None:  # booked before the call's clock starts: the booking is the server's too
        server_sink(max(0.0, time.thread_time() - ended))
    token = ACCOUNT.set(account)
    start, queued_at = time.thread_time(), run_queue_s()
    try:
        return function(*args)
    finally:
        account.charge(time.thread_time() - start)
        queued = queued_since(queued_at)
        if queued:
            with _CHARGES:
                account.queued_s += queued
        ACCOUNT.reset(token)
        _POOL_CALL_ENDED.at = time.thread_time()
