"""Per-request CPU on an event loop: the thread's clock read around each step of the request's own
coroutines, never across an `await` that lets other requests run.

- `Metered(awaitable, account)` drives the request's coroutine one step at a time (each
  send()/throw() into it) and charges the thread CPU time of each step to the account.
- Tasks the request creates are wrapped the same way by the loop's task factory (any factory
  already set still makes the task), found through the account in the creating context.
- Work handed to threads (anyio's `to_thread.run_sync`, which Starlette and FastAPI use for every
  `def` endpoint and dependency, and the loop's default executor, behind `run_in_executor(None,
  ...)` and `asyncio.to_thread`) is counted by the worker thread's clock around the call.

A step that starts while a step of the same account already runs (an eagerly started task, a
second middleware) is inside the outer step's count and is not counted again.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import Context
from typing import Any, TypeVar

from workload.requestcpu import ACCOUNT, RequestAccount, metered_call

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
            nested = account.running_since is not None
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
        if account is not None and asyncio.iscoroutine(coro):
            coro = _metered_task(coro, account)
        if previous is not None:
            return previous(loop, coro, **options)
        return asyncio.Task(coro, loop=loop, **options)

    create.lab_metered = True  # type: ignore[attr-defined]
    return create


class MeteredExecutor(ThreadPoolExecutor):
    """The loop's default executor: each call counted to the account of the context submitting it."""

    def submit(self, fn: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Future[Result]:
        account = ACCOUNT.get()
        if account is not None:
            fn = functools.partial(metered_call, account, fn)
        return super().submit(fn, *args, **kwargs)


def _meter_anyio_threads() -> None:
    """Wrap anyio.to_thread.run_sync (looked up at call time by Starlette and FastAPI)."""
    try:
        import anyio.to_thread
    except ImportError:
        return
    original = anyio.to_thread.run_sync
    if getattr(original, "lab_metered", False):
        return

    @functools.wraps(original)
    async def run_sync(func: Callable[..., Result], *args: Any, **kwargs: Any) -> Result:
        account = ACCOUNT.get()
        if account is not None:
            func = functools.partial(metered_call, account, func)
        return await original(func, *args, **kwargs)

    run_sync.lab_metered = True  # type: ignore[attr-defined]
    anyio.to_thread.run_sync = run_sync  # type: ignore[assignment]  # the same call, measured


def meter_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Count on `loop` what requests hand to tasks and threads. Call it before the app's own start
    (the lifespan), so a default executor the app sets itself stays the app's."""
    factory = loop.get_task_factory()
    if not getattr(factory, "lab_metered", False):
        loop.set_task_factory(_task_factory(factory))
    # asyncio's loop says whether a default executor is set; uvloop's keeps it private.
    if getattr(loop, "_default_executor", None) is None:
        loop.set_default_executor(MeteredExecutor(thread_name_prefix="lab-default-executor"))
    _meter_anyio_threads()
