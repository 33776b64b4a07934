"""The lab's control clients against a server that closes a kept-alive connection as the next
request goes out (what gunicorn's keepalive of 2 s does to a connection idle about that long),
cleanly or with a reset (the request's bytes unread in its socket: gunicorn's gevent worker did
both): a GET is sent once more on a new connection, anything else fails as it would."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from labtester.control import RESEND_WITHIN_S, async_control_client, control_client

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"


class ClosingServer:
    """On 127.0.0.1: answers each connection's first request and closes it, unanswered, when its
    second arrives (`reset`: with a reset); counts the connections and the answered requests."""

    def __init__(self, reset: bool, hold_s: float = 0.0) -> None:
        self.reset, self.hold_s = reset, hold_s  # `hold_s`: how long the second request runs first
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/metrics"
        self.connections = self.answered = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return  # closed
            self.connections += 1
            threading.Thread(target=self._connection, args=(connection,), daemon=True).start()

    def _connection(self, connection: socket.socket) -> None:
        with connection:
            if not _read_request(connection):
                return
            self.answered += 1  # before the bytes go: the client may read them at once
            connection.sendall(OK)
            _read_request(connection)  # the next request: read, never answered
            time.sleep(self.hold_s)
            if self.reset:  # SO_LINGER 0: the close sends a reset
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def close(self) -> None:
        self.listener.close()


def _read_request(connection: socket.socket) -> bool:
    """A request's head and its body of Content-Length, if any; False where the client closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        if not (chunk := connection.recv(65536)):
            return False
        body += chunk
    return True


@pytest.fixture(params=[False, True], ids=["closed", "reset"])
def server(request: pytest.FixtureRequest) -> Iterator[ClosingServer]:
    served = ClosingServer(reset=request.param)
    yield served
    served.close()


def test_a_plain_client_loses_the_request_the_server_closed_on(server: ClosingServer) -> None:
    # What the control clients are for: without them, the second read is lost.
    with httpx.Client(timeout=10) as client:
        assert client.get(server.url).status_code == 200
        with pytest.raises(httpx.ReadError if server.reset else httpx.RemoteProtocolError):
            client.get(server.url)


def test_a_control_get_is_sent_again_on_a_new_connection(server: ClosingServer) -> None:
    with control_client(10) as client:
        assert [client.get(server.url).text for _ in range(2)] == ["ok", "ok"]
    assert (server.connections, server.answered) == (2, 2)


def test_an_async_control_get_is_sent_again_on_a_new_connection(server: ClosingServer) -> None:
    async def two_reads() -> list[str]:
        async with async_control_client(10) as client:
            return [(await client.get(server.url)).text for _ in range(2)]

    assert asyncio.run(two_reads()) == ["ok", "ok"]
    assert (server.connections, server.answered) == (2, 2)

    async def two_posts() -> None:
        async with async_control_client(10) as client:
            assert (await client.post(server.url, content=b"x")).status_code == 200
            await client.post(server.url, content=b"x")

    with pytest.raises(httpx.ReadError if server.reset else httpx.RemoteProtocolError):
        asyncio.run(two_posts())
    assert (server.connections, server.answered) == (3, 3)  # the second POST was not sent again


def test_a_post_is_not_sent_twice(server: ClosingServer) -> None:
    with control_client(10) as client:
        assert client.post(server.url, content=b"x").status_code == 200
        with pytest.raises(httpx.ReadError if server.reset else httpx.RemoteProtocolError):
            client.post(server.url, content=b"x")
    assert (server.connections, server.answered) == (1, 1)


def test_a_get_that_ran_before_its_connection_closed_is_not_sent_again() -> None:
    # A worker killed mid-request (its timeout) closes the connection after the request ran a while:
    # sent again, it would run again, as long, and hide that it failed.
    server = ClosingServer(reset=False, hold_s=RESEND_WITHIN_S + 0.3)
    try:
        with control_client(10) as client:
            assert client.get(server.url).status_code == 200
            with pytest.raises(httpx.RemoteProtocolError):
                client.get(server.url)
        assert (server.connections, server.answered) == (1, 1)
    finally:
        server.close()
