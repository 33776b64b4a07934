"""GET /metrics on its own port (LAB_METRICS_PORT), served by a thread of the server's root process.

The request path cannot hold this thread. When it lives beside a blocked event loop (uvicorn
serving alone), the GIL still hands it the interpreter every switch interval (5 ms); when the root
serves no requests (gunicorn's arbiter, uvicorn's supervisor), busy workers do not concern it at all.

gunicorn forks its workers from the arbiter, the process this thread lives in. One lock covers a
connection from accept to close, and a fork takes that lock first: a fork waits for the scrape in
progress, and the child, which has no copy of this thread, closes its copy of the listening socket
at once. So no worker holds the port open or inherits a half-answered connection. Processes
started by spawn or exec inherit nothing: the socket is not inheritable.
"""

from __future__ import annotations

import os
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from workload.exposition import exposition
from workload.paths import METRICS

# A scraper that stops sending or reading is dropped: it cannot keep the next scrape waiting.
CONNECTION_TIMEOUT_S = 10.0

_fork_lock = threading.Lock()
_serving: list[_MetricsHTTPServer] = []  # the servers of this process (at most one in practice)


class _MetricsHandler(BaseHTTPRequestHandler):
    server: _MetricsHTTPServer
    timeout = CONNECTION_TIMEOUT_S

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != METRICS:
            self._answer(HTTPStatus.NOT_FOUND, b'{"detail":"Not Found"}', "application/json")
            return
        body, content_type = exposition(self.server.reload)
        self._answer(HTTPStatus.OK, body, content_type)

    def _answer(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # scrapes every few seconds would drown the server's own log


class _MetricsHTTPServer(HTTPServer):
    """One connection at a time, each held under the fork lock from accept to close."""

    def __init__(self, address: tuple[str, int], reload: bool) -> None:
        self.reload = reload
        super().__init__(address, _MetricsHandler)

    def get_request(self) -> tuple[socket.socket, Any]:
        _fork_lock.acquire()
        try:
            return super().get_request()
        except BaseException:
            _fork_lock.release()
            raise

    def shutdown_request(self, request: Any) -> None:
        try:
            super().shutdown_request(request)
        finally:
            _fork_lock.release()


def _after_fork_in_child() -> None:
    for server in _serving:
        server.socket.close()
    _serving.clear()
    _fork_lock.release()


os.register_at_fork(
    before=_fork_lock.acquire, after_in_parent=_fork_lock.release, after_in_child=_after_fork_in_child
)


class MetricsServer:
    """A started metrics server; `close()` stops its thread and frees the port."""

    def __init__(self, host: str, port: int, reload: bool) -> None:
        self._httpd = _MetricsHTTPServer((host, port), reload)
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name=f"lab-metrics:{self.port}", daemon=True
        )
        _serving.append(self._httpd)
        self._thread.start()

    def close(self) -> None:
        if self._httpd in _serving:
            _serving.remove(self._httpd)
        self._httpd.shutdown()
        self._thread.join(timeout=5)
        self._httpd.server_close()


def start_metrics_server(host: str, port: int, reload: bool) -> MetricsServer | None:
    """Serve /metrics on `port` (0: no metrics port, None back). A taken port ends the server's
    start with a message, rather than a server that cannot be scraped while it is busy."""
    if not port:
        return None
    try:
        return MetricsServer(host, port, reload)
    except OSError as error:
        raise SystemExit(f"LAB_METRICS_PORT={port}: cannot listen on {host}:{port}: {error}") from None
