"""Each request's CPU seconds, counted where the request ran: its account.

A thread's CPU clock (`time.thread_time`) cannot tell whose work it ran. Under sync and gthread
workers a request has its thread to itself, so the clock read around it is the request's. On an
event loop or in a gevent worker many requests share one thread, so the account is charged only
while the request's own code runs: each step of its asyncio task(s) (workload.asynccpu), or each
stretch of its greenlet(s) between switches (workload.greencpu). Work a request hands to another
thread is counted by that thread's clock around the call (`metered_call`), and work measured in
another process is added by the app itself (`add_cpu_elsewhere`).

The request's account is in the current `contextvars` context while it runs, so tasks, thread-pool
calls and greenlets it starts find it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

Result = TypeVar("Result")


class RequestAccount:
    """The CPU seconds one request used.

    `cpu_s` and `running_since` belong to the thread the request runs on: `running_since` is that
    thread's CPU clock when the request's current stretch of work began (None between stretches).
    `added` collects seconds from other threads and processes; list.append is atomic, so a pool
    thread may add while the request's own thread reads.
    """

    __slots__ = ("added", "cpu_s", "running_since")

    def __init__(self, running_since: float | None = None) -> None:
        self.cpu_s = 0.0
        self.running_since = running_since
        self.added: list[float] = []

    def total_s(self) -> float:
        """Everything counted so far; called on the request's own thread."""
        running = 0.0 if self.running_since is None else time.thread_time() - self.running_since
        return self.cpu_s + running + sum(self.added)


ACCOUNT: ContextVar[RequestAccount | None] = ContextVar("lab_request_account", default=None)


def add_cpu_elsewhere(seconds: float) -> None:
    """Count CPU seconds the current request used outside its own threads, e.g. in a process pool
    (measured there by the work itself). Outside a measured request it does nothing."""
    account = ACCOUNT.get()
    if account is not None:
        account.added.append(seconds)


def metered_call(account: RequestAccount, function: Callable[..., Result], *args: object) -> Result:
    """`function(*args)` on this (pool) thread, its CPU time added to `account`."""
    start = time.thread_time()
    try:
        return function(*args)
    finally:
        account.added.append(time.thread_time() - start)
