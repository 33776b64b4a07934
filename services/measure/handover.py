"""Work a request hands to other threads, counted to it: every thread pool and every thread.

Installed once per process (`meter_handovers`, by the CPU middleware before the first request):

- `concurrent.futures.ThreadPoolExecutor.submit`, for every executor: the loop's default one and
  the app's own behind `run_in_executor`, `asyncio.to_thread`, asgiref's `sync_to_async` (thread
  sensitive or not: Django's sync views), an app's own pool. Each call submitted while a request
  is in flight runs with the request's account and is charged the pool thread's CPU clock around
  it (measure.requestcpu.metered_call). The pool's threads, started by a submit, are started
  outside any request: a pool one request created is charged only the calls made for it.
- anyio's `to_thread.run_sync` (Starlette's `run_in_threadpool`, FastAPI's `def` endpoints and
  dependencies), looked up at call time: each call the same way; anyio's worker threads likewise
  start outside any request.
- `threading.Thread.start`: a thread started while a request is in flight carries the request's
  account and is charged its CPU until it ends or the request does (measure.requestcpu's
  ChildThread); after that it is no request's.
- `concurrent.futures.ProcessPoolExecutor.submit`: its management thread, started by a submit,
  is the pool's too (the work's CPU is in another process: `add_cpu_elsewhere`).

In a gevent worker threads and pools' workers are greenlets: a thread a request starts is charged
by the switch tracer (measure.greencpu), and a pool call by measure.greencpu.greenlet_call, which
charges the greenlet that runs it instead of a thread's clock.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, TypeVar

from measure.requestcpu import ACCOUNT, ChildThread, metered_call

Result = TypeVar("Result")
CallMeter = Callable[..., Any]  # (account, function, *args) -> function(*args), charged to account

_MARK = "lab_metered"


def _metered_submit(original: Callable[..., Future[Any]], metered: CallMeter) -> Callable[..., Future[Any]]:
    @functools.wraps(original)
    def submit(self: ThreadPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        account = ACCOUNT.get()
        if account is None or account.closed:
            return original(self, fn, *args, **kwargs)
        call = functools.partial(fn, **kwargs) if kwargs else fn
        token = ACCOUNT.set(None)  # a worker thread this starts is the pool's, not the request's
        try:
            return original(self, metered, account, call, *args)
        finally:
            ACCOUNT.reset(token)

    setattr(submit, _MARK, True)
    return submit


def _outside_requests(original: Callable[..., Future[Any]]) -> Callable[..., Future[Any]]:
    """`original` (a submit) run outside any request: a thread it starts is the pool's."""

    @functools.wraps(original)
    def submit(
        self: ProcessPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> Future[Any]:
        token = ACCOUNT.set(None)
        try:
            return original(self, fn, *args, **kwargs)
        finally:
            ACCOUNT.reset(token)

    setattr(submit, _MARK, True)
    return submit


def _metered_start(original: Callable[[threading.Thread], None]) -> Callable[[threading.Thread], None]:
    @functools.wraps(original)
    def start(self: threading.Thread) -> None:
        account = ACCOUNT.get()
        if account is not None and not account.closed:
            child = ChildThread(account)
            account.children.append(child)
            run = self.run

            def charged_run() -> None:
                child.begin()
                ACCOUNT.set(account)  # the thread's own context: what it hands on is the request's
                try:
                    run()
                finally:
                    child.end()

            self.run = charged_run  # type: ignore[method-assign]  # the same run, charged
        original(self)

    setattr(start, _MARK, True)
    return start


def _meter_anyio_threads() -> None:
    try:
        import anyio.to_thread
    except ImportError:
        return
    original = anyio.to_thread.run_sync
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    async def run_sync(func: Callable[..., Result], *args: Any, **kwargs: Any) -> Result:
        account = ACCOUNT.get()
        if account is None or account.closed:
            return await original(func, *args, **kwargs)
        token = ACCOUNT.set(None)  # a worker thread anyio starts now is its pool's
        try:
            return await original(functools.partial(metered_call, account, func), *args, **kwargs)
        finally:
            ACCOUNT.reset(token)

    setattr(run_sync, _MARK, True)
    anyio.to_thread.run_sync = run_sync  # type: ignore[assignment]  # the same call, measured


def meter_handovers(metered: CallMeter = metered_call, threads: bool = True) -> None:
    """Install the hand-over meters in this process (once; later calls do nothing): each pool
    call through `metered`, and, with `threads`, the threads requests start."""
    if not getattr(ThreadPoolExecutor.submit, _MARK, False):
        ThreadPoolExecutor.submit = _metered_submit(ThreadPoolExecutor.submit, metered)  # type: ignore[method-assign]
    if threads and not getattr(ProcessPoolExecutor.submit, _MARK, False):
        ProcessPoolExecutor.submit = _outside_requests(ProcessPoolExecutor.submit)  # type: ignore[method-assign]
    if threads and not getattr(threading.Thread.start, _MARK, False):
        threading.Thread.start = _metered_start(threading.Thread.start)  # type: ignore[method-assign, assignment]
    if threads:
        _meter_anyio_threads()  # an event loop's: no gevent worker has one
