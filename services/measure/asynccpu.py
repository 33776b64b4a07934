"""Per-request CPU on an event loop: the thread's clock read around each step of the request's own
coroutines, never across an `await` that lets other requests run.

- `Metered(awaitable, account)` drives the request's coroutine one step at a time (each
  send()/throw() into it) and charges the thread CPU time of each step to the account.
- Tasks the request creates are wrapped the same way by the loop's task factory (any factory
  already set still makes the task), found through the account in the creating context; a task
  that outlives its request is charged no more once the request ended (a consumer, a pool's task
  started lazily by one request is not that request's for its life).
- Work handed to threads (any executor, anyio's and asgiref's threads, threads the app starts) is
  counted by the worker thread's clock around the call (measure.handover).

A step that starts while a step of the same account already runs (an eagerly started task, a
second middleware) is inside the outer step's count and is not counted again.

On the server's own loop thread (`meter_loop`'s), the CPU between two request steps (of any
request) is the server's: the loop's dispatch, the protocol's reading and parsing of the next
request (uvicorn parses a request's head before its task exists), the middleware's own work
around the app, and tasks of no request's. It is added to the account whose step comes next
(`RequestAccount.server_s`, booked apart when it closes), so the server's cost of each request is
measured over the requests themselves, as measure.wsgi_cpu.ThreadMeter does on a worker's thread:
on empty requests alone a request whose head is long to parse looked as cheap as an empty one.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from contextvars import Context
from typing import Any, TypeVar

from measure.handover import meter_handovers
from measure.requestcpu import ACCOUNT, RequestAccount

Result = TypeVar("Result")
TaskFactory = Callable[..., "asyncio.Future[Any]"]


# Each serving loop's thread (by ident): its CPU clock as the last request step on it ended (None
# before the first). Steps on other threads (a loop an app runs in a thread of its own) leave it.
_LOOP_STEP_ENDED: dict[int, float | None] = {}


class Metered(Awaitable[Result]):
    """`await Metered(awaitable, account)`: the awaitable's result, its steps charged to `account`."""

    __slots__ = ("_account", "_awaitable")

    def __init__(self, awaitable: Awaitable[Result], account: RequestAccount) -> None:
        self._awaitable = awaitable
        self._account = account

    def __await__(self) -> Generator[Any, Any, Result]:
        inner = self._awaitable.__await__()
        account = self._account
        value: Any = None
        error: BaseException | None = None
        while True:
            # Nested in a step already counted, or the request ended: not this step's to count.
            nested = account.running_since is not None or account.closed
            if not nested:
                account.running_since = start = time.thread_time()
                thread = threading.get_ident()
                ended = _LOOP_STEP_ENDED.get(thread)
                if ended is not None:  # the server's own since the last request step here
                    account.server_s += max(0.0, start - ended)
            try:
                yielded = inner.send(value) if error is None else inner.throw(error)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            finally:
                if not nested:
                    end = time.thread_time()
                    account.cpu_s += end - start
                    account.running_since = None
                    if thread in _LOOP_STEP_ENDED:
                        _LOOP_STEP_ENDED[thread] = end
            try:
                value, error = (yield yielded), None
            except GeneratorExit:
                inner.close()
                raise
            except BaseException as thrown:  # cancellation: the inner coroutine decides
                value, error = None, thrown


async def _metered_task(coroutine: Coroutine[Any, Any, Result], account: RequestAccount) -> Result:
    return await Metered(coroutine, account)


def _task_factory(previous: TaskFactory | None) -> TaskFactory:
    def create(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Future[Any]:
        context: Context | None = options.get("context")
        account = ACCOUNT.get() if context is None else context.get(ACCOUNT)
        if account is not None and not account.closed and asyncio.iscoroutine(coro):
            coro = _metered_task(coro, account)
        if previous is not None:
            return previous(loop, coro, **options)
        return asyncio.Task(coro, loop=loop, **options)

    create.lab_metered = True  # type: ignore[attr-defined]
    return create


def meter_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Count on `loop` (running on this thread) what requests hand to tasks and threads, and the
    server's own CPU between their steps."""
    _LOOP_STEP_ENDED.setdefault(threading.get_ident(), None)
    factory = loop.get_task_factory()
    if not getattr(factory, "lab_metered", False):
        loop.set_task_factory(_task_factory(factory))
    meter_handovers()
