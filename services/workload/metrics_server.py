"""The metrics process: GET /metrics on LAB_METRICS_PORT, served by a small process of its own.

`python -m workload.metrics_server FD [--reload]`, started by the server's root process
(workload.metrics_process), which bound the listening socket and passed it as FD. It serves
nothing else, so no serving process's GIL is on the scrape path: a blocked event loop or every
worker busy cannot delay a scrape. (A thread of the root could be delayed: each syscall it made
handed the GIL back to a CPU-bound loop, which returned it only after a switch interval, 5 ms, and
a census makes hundreds of syscalls.) The exposition reads only the multiprocess directory and
/proc, so it is the same from here as from any process of the tree. One connection at a time.

It dies with the root, even on the root's SIGKILL (PR_SET_PDEATHSIG), and stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from workload.exposition import exposition
from workload.lifetime import ROOT_PID_ENV, die_with_parent
from workload.metrics_process import METRICS_SERVER_MODULE
from workload.paths import METRICS

# A scraper that stops sending or reading is dropped: it cannot keep the next scrape waiting.
CONNECTION_TIMEOUT_S = 10.0


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
    """Serves on a socket that is already bound and listening (the root's)."""

    def __init__(self, listener: socket.socket, reload: bool) -> None:
        self.reload = reload
        super().__init__(listener.getsockname()[:2], _MetricsHandler, bind_and_activate=False)
        self.socket.close()  # the unbound one the base class made
        self.socket = listener


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=f"python -m {METRICS_SERVER_MODULE}", description=__doc__)
    parser.add_argument("fd", type=int, help="the listening socket the root process passed")
    parser.add_argument("--reload", action="store_true", help="the root is uvicorn's reloader")
    args = parser.parse_args(argv)
    die_with_parent(int(os.environ[ROOT_PID_ENV]))  # started from the root's main thread
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # whatever the root ignored: SIGTERM ends this
    # Ctrl-C in a terminal reaches the whole process group: the root's shutdown stops this one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with _MetricsHTTPServer(socket.socket(fileno=args.fd), args.reload) as httpd:
        httpd.serve_forever()


if __name__ == "__main__":
    main()
