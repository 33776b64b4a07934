"""When a target is ready to measure: /healthz answers and every configured worker is serving.

gunicorn answers /healthz as soon as its first worker has booted, while the others still start;
measuring then would count too few workers. The census says how many processes serve requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from labtester.control import control_client

POLL_INTERVAL_S = 0.1


class NotReady(RuntimeError):
    pass


def _ready(client: httpx.Client, url: str) -> bool:
    try:
        if client.get(f"{url}/healthz").status_code != 200:
            return False
        info = client.get(f"{url}/info").json()
        census = (info.get("control") or {}).get("census", "/test/resmon")
        return bool(client.get(f"{url}{census}").json()["serving_processes"] == info["workers"])
    except (httpx.TransportError, httpx.DecodingError, KeyError):
        return False


def wait_ready(url: str, timeout_s: float, still_running: Callable[[], bool] = lambda: True) -> None:
    """Poll until ready; NotReady with the reason after `timeout_s` or if the server exits."""
    deadline = time.monotonic() + timeout_s
    with control_client(5.0) as client:
        while time.monotonic() < deadline:
            if not still_running():
                raise NotReady("exited before it was ready")
            if _ready(client, url):
                return
            time.sleep(POLL_INTERVAL_S)
    raise NotReady(f"did not answer {url}/healthz with all workers serving within {timeout_s:.0f} s")
