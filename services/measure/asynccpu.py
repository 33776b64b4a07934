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
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from contextvars import Context
from typing import Any, TypeVar

from measure.handover import meter_handovers
from measure.requestcpu import ACCOUNT, RequestAccount

Result = TypeVar("Result")
TaskFactory = Callable[..., "asyncio.Future[Any]"]


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
            try:
                yielded = inner.send(value) if error is None else inner.throw(error)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            finally:
                if not nested:
                    account.cpu_s += time.thread_time() - start
                    account.running_since = None
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
    """Count on `loop` what requests hand to tasks and threads."""
    factory = loop.get_task_factory()
    if not getattr(factory, "lab_metered", False):
        loop.set_task_factory(_task_factory(factory))
    meter_handovers()
