"""The metrics process: GET /metrics on LAB_METRICS_PORT, served by a small process of its own.

`python -m workload.metrics_server FD [--deadline-s S] [--reload]`, started by the server's root process
(workload.metrics_process), which bound the listening socket and passed it as FD. It serves
nothing else, so no serving process's GIL is on the scrape path: a blocked event loop or every
worker busy cannot delay a scrape. (A thread of the root could be delayed: each syscall it made
handed the GIL back to a CPU-bound loop, which returned it only after a switch interval, 5 ms, and
a census makes hundreds of syscalls.) The exposition reads only the multiprocess directory and
/proc, so it is the same from here as from any process of the tree.

A client that sends or reads slowly cannot hold a scrape up: each connection is served by a thread
of its own, at most MAX_CONNECTIONS at once (beyond them a 503 at once, no thread), and each has
a deadline in all to send its request and read the answer (LAB_METRICS_DEADLINE_S, default
REQUEST_DEADLINE_S), after which its socket is shut.
(Served one at a time with a timeout per read, one client trickling a byte every few seconds held
/metrics for 10-16 s; Prometheus gives up after 5.)

It dies with the root, even on the root's SIGKILL (PR_SET_PDEATHSIG), and stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from workload.exposition import exposition
from workload.lifetime import ROOT_PID_ENV, die_with_parent
from workload.metrics_process import METRICS_SERVER_MODULE
from workload.paths import METRICS

# A connection's whole time to send its request and read the answer, unless the server's settings
# say otherwise (LAB_METRICS_DEADLINE_S, passed as --deadline-s): a scrape takes milliseconds.
REQUEST_DEADLINE_S = 10.0
# Connections served at once: Prometheus and the tester scrape one each, a few times a minute.
MAX_CONNECTIONS = 16
BUSY = b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class _MetricsHandler(BaseHTTPRequestHandler):
    server: _MetricsHTTPServer

    def setup(self) -> None:
        super().setup()
        # Also per read: the deadline (process_request_thread) shuts the socket in any case.
        self.connection.settimeout(self.server.deadline_s)

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


class _MetricsHTTPServer(ThreadingHTTPServer):
    """Serves on a socket that is already bound and listening (the root's): a thread per
    connection, at most MAX_CONNECTIONS, each within `deadline_s`."""

    daemon_threads = True

    def __init__(self, listener: socket.socket, reload: bool, deadline_s: float) -> None:
        self.reload = reload
        self.deadline_s = deadline_s
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(listener.getsockname()[:2], _MetricsHandler, bind_and_activate=False)
        self.socket.close()  # the unbound one the base class made
        self.socket = listener

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            with contextlib.suppress(OSError):  # a few bytes: they fit the socket's buffer
                request.setblocking(False)
                request.send(BUSY)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        deadline = threading.Timer(self.deadline_s, _cut, (request,))
        deadline.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            deadline.cancel()
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client gone or cut is no error of ours
            super().handle_error(request, client_address)


def _cut(connection: socket.socket) -> None:
    """Past the deadline: the handler's pending read or write fails, and the handler ends."""
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=f"python -m {METRICS_SERVER_MODULE}", description=__doc__)
    parser.add_argument("fd", type=int, help="the listening socket the root process passed")
    parser.add_argument(
        "--deadline-s", type=float, default=REQUEST_DEADLINE_S, help="a connection's whole time, in seconds"
    )
    parser.add_argument("--reload", action="store_true", help="the root is uvicorn's reloader")
    args = parser.parse_args(argv)
    die_with_parent(int(os.environ[ROOT_PID_ENV]))  # started from the root's main thread
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # whatever the root ignored: SIGTERM ends this
    # Ctrl-C in a terminal reaches the whole process group: the root's shutdown stops this one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with _MetricsHTTPServer(socket.socket(fileno=args.fd), args.reload, args.deadline_s) as httpd:
        httpd.serve_forever()


if __name__ == "__main__":
    main()
