"""Failures are classified by type, against real sockets on 127.0.0.1, by both request paths: the
burst release (h11 on raw connections) and the load client (aiohttp)."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Callable, Iterator

import pytest

from labtester.launcher import free_port
from labtester.loadclient import LoadClient
from labtester.scenarios.bursts.release import release

CLIENTS = ("release", "load client")


@pytest.fixture
def misbehaving_server() -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    """A listening socket whose accepted connections get `handle`; yields its URL."""
    servers: list[socket.socket] = []

    def serve(handle: Callable[[socket.socket], None]) -> str:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def loop() -> None:
            try:
                while True:
                    connection, _ = server.accept()
                    handle(connection)
            except OSError:
                return

        threading.Thread(target=loop, daemon=True).start()
        return f"http://127.0.0.1:{server.getsockname()[1]}/x"

    yield serve
    for server in servers:
        server.close()


@pytest.fixture(params=CLIENTS)
def error_of(request: pytest.FixtureRequest) -> Callable[..., str | None]:
    def call(url: str, timeout: float = 5.0) -> str | None:
        async def with_release() -> str | None:
            _, (reply,) = await release(url, 1, timeout)
            return reply.error

        async def with_load_client() -> str | None:
            base, _, path = url.rpartition("/")
            async with LoadClient(base, timeout) as client:
                return (await client.get("/" + path)).error

        return asyncio.run(with_release() if request.param == "release" else with_load_client())

    return call


def test_connection_refused(error_of: Callable[..., str | None]) -> None:
    assert error_of(f"http://127.0.0.1:{free_port()}/x") == "connection refused"


def test_remote_disconnected(
    misbehaving_server: Callable[..., str], error_of: Callable[..., str | None]
) -> None:
    def close_after_reading(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.close()

    assert error_of(misbehaving_server(close_after_reading)) == "remote disconnected"


def test_connection_reset(
    misbehaving_server: Callable[..., str], error_of: Callable[..., str | None]
) -> None:
    def reset(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()  # linger 0: the kernel sends RST

    assert error_of(misbehaving_server(reset)) == "connection reset"


def test_timeout(misbehaving_server: Callable[..., str], error_of: Callable[..., str | None]) -> None:
    held: list[socket.socket] = []
    assert error_of(misbehaving_server(held.append), timeout=0.5) == "timeout"


def test_http_status(misbehaving_server: Callable[..., str], error_of: Callable[..., str | None]) -> None:
    def answer_503(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n")
        connection.close()

    assert error_of(misbehaving_server(answer_503)) == "HTTP 503"


def test_the_load_client_keeps_the_connection_and_reads_server_timing(
    misbehaving_server: Callable[..., str],
) -> None:
    """One connection for many requests, and the headers a team's app reports its work in."""
    from labtester.connections import Connections

    accepted: list[socket.socket] = []

    def keep_answering(connection: socket.socket) -> None:
        accepted.append(connection)
        while connection.recv(65536):
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nServer-Timing: lab-cpu;dur=1.5, lab-app;dur=2.0\r\n"
                b"content-length: 2\r\n\r\nok"
            )

    base, _, _ = misbehaving_server(keep_answering).rpartition("/")

    async def three() -> list[tuple[int, dict[str, str]]]:
        pool = Connections(base)
        try:
            return [await pool.get("/x", 5) for _ in range(3)]
        finally:
            pool.close()

    answers = asyncio.run(three())
    assert [status for status, _ in answers] == [200] * 3
    assert answers[0][1]["server-timing"] == "lab-cpu;dur=1.5, lab-app;dur=2.0"
    assert len(accepted) == 1  # kept alive
