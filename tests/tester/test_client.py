"""Failures are classified by type, against real sockets on 127.0.0.1, by both request paths: the
burst release (h11 on raw connections) and the load client (aiohttp)."""

from __future__ import annotations

import asyncio
import gc
import socket
import struct
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from labtester.launcher import free_port
from labtester.load import LoadClient
from labtester.scenarios.bursts.release import release
from labtester.traffic import Outgoing, TrafficRequest

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
            return [await pool.send(Outgoing.get("/x").wire(pool.netloc), 5) for _ in range(3)]
        finally:
            pool.close()

    answers = asyncio.run(three())
    assert [status for status, _ in answers] == [200] * 3
    assert answers[0][1]["server-timing"] == "lab-cpu;dur=1.5, lab-app;dur=2.0"
    assert len(accepted) == 1  # kept alive


ORDER = TrafficRequest.model_validate(
    {"method": "POST", "path": "/orders/a b", "headers": {"X-Team": "lab"}, "json": {"product": 7}}
)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_request_is_sent_with_its_method_headers_and_body(
    misbehaving_server: Callable[..., str], client: str
) -> None:
    """What a traffic file describes is what the server reads, by the burst release and the load
    client alike: its method, its percent-encoded path, its headers, its body and their length."""
    received: list[bytes] = []

    def read_then_answer(connection: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data or not data.endswith(b"}"):
            data += connection.recv(65536)
        received.append(data)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")

    base, _, _ = misbehaving_server(read_then_answer).rpartition("/")
    request = ORDER.outgoing()

    async def send() -> int | None:
        if client == "release":
            _, (reply,) = await release(base + request.target, 1, 5, request=request)
            return reply.status
        async with LoadClient(base, 5) as load:
            return (await load.send(request)).status

    assert asyncio.run(send()) == 200
    (data,) = received
    head, _, body = data.partition(b"\r\n\r\n")
    lines = [line.lower() for line in head.split(b"\r\n")]
    assert lines[0] == b"post /orders/a%20b http/1.1"
    assert b"x-team: lab" in lines and b"content-type: application/json" in lines
    assert f"content-length: {len(body)}".encode() in lines and body == b'{"product": 7}'


def test_a_head_answer_ends_with_its_headers(misbehaving_server: Callable[..., str]) -> None:
    """A HEAD's response announces a body it does not carry: the load client does not wait for it."""

    def answer_head(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n")

    base, _, _ = misbehaving_server(answer_head).rpartition("/")

    async def head() -> tuple[int | None, str | None]:
        async with LoadClient(base, 3) as load:
            sample = await load.send(Outgoing("head", "HEAD", "/x"))
            return sample.status, sample.error

    assert asyncio.run(head()) == (200, None)


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14's collector does its old generation in steps")
def test_no_full_collection_pauses_a_load_clients_sends() -> None:
    # Each full collection walks every object the tester holds with the sends stopped (57-185 ms
    # a run at 2,100/s): none runs while a load client is open, even as objects pile up, and the
    # collector's thresholds are its own again once the last one (of two at once) closed.
    def full_collections() -> int:
        return int(gc.get_stats()[2]["collections"])

    # Twice what the process holds long-lived: a full collection is due (a quarter of it is enough).
    pile = 2 * len(gc.get_objects(generation=2)) + 100_000

    async def pile_up() -> tuple[int, int]:
        threshold = gc.get_threshold()
        async with LoadClient("http://127.0.0.1:9", 5), LoadClient("http://127.0.0.1:9", 5):
            before = full_collections()
            kept = [[index] for index in range(pile)]  # young collections run, full ones not
            during = full_collections() - before
        assert gc.get_threshold() == threshold and len(kept) == pile
        kept.clear()
        kept += [[index] for index in range(pile)]
        return during, full_collections() - before - during

    during, after = asyncio.run(pile_up())
    assert during == 0
    assert after > 0  # the same pile outside a client: the collector runs its full collections
