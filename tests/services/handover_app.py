"""A team's app that runs its work where real apps do: in asgiref's thread (Django's sync views),
in its own thread pool, in anyio's threads, in a thread it starts, in a streamed body; served by
the team app in tests/services/test_handover.py. Each path answers the CPU its work burned, measured
by the work itself on its thread's clock (tests.services.bare_app.burn), and its pid.

ASGI (`asgi`):
    /asgiref?ms=N&mode=M&hold_ms=H  sync_to_async: mode `django` in a ThreadSensitiveContext of
                                    its own (as Django's ASGI handler runs each request), `global`
                                    thread sensitive without one (asgiref's one thread), `free` not
                                    thread sensitive (the loop's default executor)
    /pool?ms=N&name=P&hold_ms=H     run_in_executor on the app's own pool P, made by the first
                                    request that names it (one thread)
    /anyio?ms=N&hold_ms=H           anyio.to_thread.run_sync
    /cpu?ms=N                       burn on the loop
    /stream?ms=N&chunks=C           a streamed body: a first line at once, then C chunks burning
                                    N/C each; the last line holds the total
    /own-timing?ms=N                burn, answered with the app's own Server-Timing `cpu` and `app`
WSGI (`wsgi`):
    /thread?ms=N                    a thread the request starts burns N, joined
    /pool?ms=N&name=P&hold_ms=H     the app's own pool P, as above, its future's result
    /stream?ms=N&chunks=C           a generator body, as above
    /file                           FILE_TEXT through wsgi.file_wrapper, from a file whose read()
                                    answers READ_TEXT: the body says whether the server sent it with
                                    sendfile
Every `hold_ms` is a wait after the work, so the request is still in flight meanwhile.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

import anyio.to_thread
from asgiref.sync import ThreadSensitiveContext, sync_to_async

from tests.services.bare_app import burn

APP_TIMING = b"cpu;dur=999.000, app;dur=999.000"  # the app's own entries, with the lab's old names
FILE_TEXT = b"sent by sendfile"
READ_TEXT = b"read and written"

_POOLS: dict[str, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _query(query: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(query).items()}


def _answer(cpu_s: float) -> bytes:
    return json.dumps({"cpu_s": cpu_s, "pid": os.getpid()}).encode()


def _pool(name: str) -> ThreadPoolExecutor:
    """The app's pool `name`, made lazily by the first request that needs it."""
    with _POOLS_LOCK:
        if name not in _POOLS:
            _POOLS[name] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"app-{name}")
        return _POOLS[name]


async def _asgiref(ms: float, mode: str) -> float:
    if mode == "django":
        async with ThreadSensitiveContext():
            return await sync_to_async(burn)(ms)
    return await sync_to_async(burn, thread_sensitive=mode == "global")(ms)


async def _handed_over(path: str, query: dict[str, str]) -> float:
    ms = float(query["ms"])
    if path == "/asgiref":
        return await _asgiref(ms, query["mode"])
    if path == "/pool":
        return await asyncio.get_running_loop().run_in_executor(_pool(query["name"]), burn, ms)
    return await anyio.to_thread.run_sync(burn, ms)


async def _send_json(send: Callable[..., Any], body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": head + headers})
    await send({"type": "http.response.body", "body": body})


async def _stream(query: dict[str, str], send: Callable[..., Any]) -> None:
    chunks = int(query["chunks"])
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"start\n", "more_body": True})
    cpu_s = 0.0
    for _ in range(chunks):
        await asyncio.sleep(0)
        cpu_s += burn(float(query["ms"]) / chunks)
        await send({"type": "http.response.body", "body": _answer(cpu_s) + b"\n", "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def asgi(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    path, query = scope["path"], _query(scope["query_string"].decode())
    if path == "/stream":
        await _stream(query, send)
        return
    headers: list[tuple[bytes, bytes]] = []
    if path in ("/asgiref", "/pool", "/anyio"):
        cpu_s = await _handed_over(path, query)
        await asyncio.sleep(float(query.get("hold_ms", 0)) / 1000)
    elif path == "/own-timing":
        cpu_s, headers = burn(float(query["ms"])), [(b"server-timing", APP_TIMING)]
    else:
        cpu_s = burn(float(query["ms"]))
    await _send_json(send, _answer(cpu_s), headers)


class _MarkedFile(io.FileIO):
    """A file whose read() says it was read: sendfile takes its bytes from the descriptor."""

    was_read = False

    def read(self, size: int | None = -1) -> bytes:
        answer, self.was_read = (b"" if self.was_read else READ_TEXT), True
        return answer


def _marked_file() -> _MarkedFile:
    descriptor, name = tempfile.mkstemp(prefix="lab-file-wrapper-")
    os.write(descriptor, FILE_TEXT)
    os.close(descriptor)
    marked = _MarkedFile(name)
    os.unlink(name)  # open: readable until closed
    return marked


def _in_thread(ms: float) -> float:
    burned: list[float] = []
    thread = threading.Thread(target=lambda: burned.append(burn(ms)))
    thread.start()
    thread.join()
    return burned[0]


def _wsgi_stream(query: dict[str, str]) -> Iterator[bytes]:
    chunks = int(query["chunks"])
    yield b"start\n"
    cpu_s = 0.0
    for _ in range(chunks):
        cpu_s += burn(float(query["ms"]) / chunks)
        yield _answer(cpu_s) + b"\n"


def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    path, query = environ["PATH_INFO"], _query(environ.get("QUERY_STRING", ""))
    if path == "/file":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(FILE_TEXT)))])
        return environ["wsgi.file_wrapper"](_marked_file())
    if path == "/stream":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return _wsgi_stream(query)
    ms = float(query["ms"])
    if path == "/thread":
        cpu_s = _in_thread(ms)
    else:
        cpu_s = _pool(query["name"]).submit(burn, ms).result()
        time.sleep(float(query.get("hold_ms", 0)) / 1000)
    start_response("200 OK", [("Content-Type", "application/json")])
    return [_answer(cpu_s)]
