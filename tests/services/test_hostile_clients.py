"""Hostile clients cannot hurt a target: every one refuses an oversized request head alike (with
bounded memory), and made-up methods cannot grow its metric series."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import RunningTarget
from workload.head_limits import HEADER_FIELD_BYTES, HEADER_FIELDS, REQUEST_LINE_BYTES
from workload.metrics import METHODS, OTHER_METHOD

HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: lab\r\n"


def send_while_read(sock: socket.socket, head: bytes, then: bytes, repeat: int, end: bytes = b"") -> int:
    """Send a head, `then` `repeat` times and `end`, as long as the server reads; the bytes sent."""
    sent = 0
    try:
        for chunk in (head, *([then] * repeat), end):
            sock.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        pass  # refused, or the server stopped reading: either bounds what it holds
    return sent


def head_status(port: int, head: bytes, then: bytes = b"", repeat: int = 0) -> tuple[int, int]:
    """Send a head (and `then` `repeat` times, as long as the server reads); the status line's
    code, and how many bytes were sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sent = send_while_read(sock, head, then, repeat, end=b"\r\n\r\n")
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1]), sent


def field(size: int) -> bytes:
    """One header line of `size` bytes, its name, ": " and CRLF included (as gunicorn counts)."""
    return b"X-Big: " + b"a" * (size - len(b"X-Big: \r\n")) + b"\r\n"


CASES = {
    "a field at the limit": (HEALTHZ + field(HEADER_FIELD_BYTES) + b"\r\n", 200),
    "a field over the limit": (HEALTHZ + field(HEADER_FIELD_BYTES + 1000) + b"\r\n", 431),
    "as many fields as allowed": (
        HEALTHZ + b"".join(b"X-%d: 1\r\n" % i for i in range(HEADER_FIELDS - 1)) + b"\r\n",
        200,
    ),
    "one field too many": (
        HEALTHZ + b"".join(b"X-%d: 1\r\n" % i for i in range(HEADER_FIELDS)) + b"\r\n",
        431,
    ),
    "a long URL within the line": (
        b"GET /healthz?" + b"a" * (REQUEST_LINE_BYTES - 100) + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        200,
    ),
    "a request line over the limit": (
        b"GET /healthz?" + b"a" * REQUEST_LINE_BYTES + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        414,
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_every_target_refuses_the_same_oversized_heads(target: RunningTarget, case: str) -> None:
    head, status = CASES[case]
    assert head_status(target.port, head)[0] == status
    assert httpx.get(f"{target.url}/healthz").status_code == 200


def settled_rss(target: RunningTarget, timeout_s: float = 10.0) -> int:
    """The tree's resident memory once it stopped moving: gunicorn's workers go on growing for
    about a second after they first answer (8 MB each seen on flask-2x), which a single reading
    taken then would count as the header's."""
    previous = -(1 << 40)
    deadline = time.monotonic() + timeout_s
    while True:
        current = sum(p.memory_info().rss for p in target.tree())
        if abs(current - previous) < (1 << 20) or time.monotonic() > deadline:
            return current
        previous = current
        time.sleep(0.5)


def test_a_huge_header_is_refused_before_it_is_buffered(target: RunningTarget) -> None:
    """64 MB of one header value (uvicorn's httptools alone buffered it all: +66 MB of memory)."""
    before = settled_rss(target)
    status, sent = head_status(target.port, HEALTHZ + b"X-Big: ", b"a" * 65536, repeat=1024)
    grown = sum(p.memory_info().rss for p in target.tree()) - before
    assert status == 431
    # Whatever it read before refusing (the server may read on after it answered) is a few
    # buffers, against the 64 MB the client had to send.
    assert grown < max(sent, 64 << 20) / 8, f"grew {grown / 1e6:.1f} MB"
    assert httpx.get(f"{target.url}/healthz").status_code == 200


def test_a_huge_trailer_is_refused_before_it_is_buffered(target: RunningTarget) -> None:
    """64 MB of one trailer field after a chunked body's last chunk: httptools buffers a trailer
    as it does a header, past the head's limit (uvicorn's own protocol grew without bound)."""
    before = settled_rss(target)
    head = b"POST /healthz HTTP/1.1\r\nHost: lab\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Big: "
    with socket.create_connection(("127.0.0.1", target.port), timeout=10) as sock:
        sent = send_while_read(sock, head, b"a" * 65536, repeat=1024)
    grown = sum(p.memory_info().rss for p in target.tree()) - before
    assert grown < max(sent, 64 << 20) / 8, f"grew {grown / 1e6:.1f} MB"
    assert httpx.get(f"{target.url}/healthz").status_code == 200


def request_series(url: str) -> list[dict[str, str]]:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return [
        sample.labels
        for family in text_string_to_metric_families(text)
        if family.name == "lab_http_requests"
        for sample in family.samples
        if sample.name == "lab_http_requests_total"
    ]


def test_made_up_methods_share_one_label(target: RunningTarget) -> None:
    before = request_series(target.url)
    made_up = [f"HACK{i}" for i in range(150)] + ["PROPFIND", "MKCOL", "get", "Get"]
    with httpx.Client(base_url=target.url, timeout=30) as client:
        statuses = {client.request(method, "/healthz").status_code for method in made_up}
    assert statuses and max(statuses) < 500  # refused (400, 405), or a case variant of GET taken
    after = request_series(target.url)
    assert {labels["method"] for labels in after} <= METHODS | {OTHER_METHOD}
    # One "other" series per route and status at most: a handful, not one per method.
    assert len(after) - len(before) <= 4
    assert httpx.get(f"{target.url}/healthz").status_code == 200
