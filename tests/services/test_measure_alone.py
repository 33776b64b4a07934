"""The measurement is a package of its own: imported in a fresh interpreter with no Prometheus set-up
(PROMETHEUS_MULTIPROC_DIR unset), its middleware measures a tiny WSGI and a tiny ASGI app, and
nothing of Prometheus is imported along the way (the metrics install themselves as its sink)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Run in a child: this test process has imported prometheus_client long ago.
TINY_APPS = """
import asyncio, json, sys, time

from measure.asgi_cpu import AsgiCpuMiddleware
from measure.wsgi_cpu import WsgiCpuMiddleware


def burn():
    end = time.thread_time() + 0.02
    while time.thread_time() < end:
        pass


def wsgi_app(environ, start_response):
    burn()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


async def asgi_app(scope, receive, send):
    burn()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


headers = {}
body = WsgiCpuMiddleware(wsgi_app)(
    {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "QUERY_STRING": ""},
    lambda status, sent, exc_info=None: headers.update(wsgi=dict(sent)["Server-Timing"]),
)
b"".join(body)
body.close()


async def call_asgi():
    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        if message["type"] == "http.response.start":
            headers["asgi"] = dict(message["headers"])[b"server-timing"].decode()

    scope = {"type": "http", "method": "GET", "path": "/", "query_string": b""}
    await AsgiCpuMiddleware(asgi_app)(scope, receive, send)


asyncio.run(call_asgi())
headers["prometheus"] = sorted(name for name in sys.modules if name.startswith("prometheus_client"))
print(json.dumps(headers))
"""


def lab_cpu(header: str) -> float:
    entry = next(entry for entry in header.split(",") if entry.strip().startswith("lab-cpu"))
    return float(entry.partition("dur=")[2]) / 1000


def test_the_middleware_measures_a_tiny_app_without_prometheus() -> None:
    env = {name: value for name, value in os.environ.items() if name != "PROMETHEUS_MULTIPROC_DIR"}
    ran = subprocess.run(
        [sys.executable, "-c", TINY_APPS], env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    measured = json.loads(ran.stdout)
    assert measured["prometheus"] == []
    # Each app burnt 20 ms of its thread's CPU: the header counts at least that much.
    assert lab_cpu(measured["wsgi"]) >= 0.02
    assert lab_cpu(measured["asgi"]) >= 0.02
