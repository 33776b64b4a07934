"""A bare WSGI app for sizing: /cpu burns about 20 ms of CPU, /wait sleeps 50 ms."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

CPU_S = 0.020
WAIT_S = 0.050


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ.get("PATH_INFO", "")
    if path == "/cpu":
        end = time.thread_time() + CPU_S
        while time.thread_time() < end:
            pass
    elif path == "/wait":
        time.sleep(WAIT_S)
    else:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"no such path\n"]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"done\n"]
