"""uvicorn's httptools protocol with the lab's limits on a request's head (workload.head_limits),
for every target uvicorn serves (servers.uvicorn.serving).

httptools buffers a request line or a header of any size. This counts what arrives until a head
is complete and refuses, as gunicorn does, a longer request line (414), a longer header field or
one too many (431), and any head beyond gunicorn's own buffer (431) before it is buffered; a chunked
body's trailer section gets the same bound (gunicorn bounds it too).
uvicorn would answer 400 to every parser error: the refusal says which limit it was.

A pipelined request (sent before the previous one's response) is started by uvicorn from inside
the previous request's last `send`, so its task would copy that request's context: its CPU charged
to the previous request, and the CPU middleware taking it for a part of that one. It starts in a
context of its own here, as a request read from the socket does.

Chosen over uvicorn's h11 protocol and its `h11_max_incomplete_event_size`, which bounds the same
memory: on this machine h11 took 1.7x the server CPU per /healthz request (161 against 93 us,
wrk at 50 connections, interleaved runs) and 1.4x per /test/io-bound/0, which would move the
lab's own figures (the flow's CPU term, `make bench`'s client capacity). This one costs what plain
httptools does: 98 against 97 us per /healthz request, medians of 6 interleaved runs.
"""

from __future__ import annotations

import asyncio
import contextvars
from http import HTTPStatus

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from workload.head_limits import HEAD_BYTES, HEADER_FIELD_BYTES, HEADER_FIELDS, REQUEST_LINE_BYTES

# " HTTP/1.1" and the shortest method with its space: what a request line holds besides its URL.
LINE_BESIDES_URL = len("GET ") + len(" HTTP/1.1")


class HeadTooLarge(Exception):
    def __init__(self, status: HTTPStatus, detail: str) -> None:
        super().__init__(detail)
        self.status = status


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_bytes: int | None = 0  # of the head being received; None in a body
        self._fields = 0
        self._outside_body = 0  # in a body: bytes since the last body bytes (framing, a trailer)
        self._body_bytes = 0  # of the data being parsed now
        self._refused: HeadTooLarge | None = None  # the limit a parser callback refused on

    def data_received(self, data: bytes) -> None:
        if self._head_bytes is None:
            self._body_received(data)
            return
        self._head_bytes += len(data)
        if self._head_bytes > HEAD_BYTES:
            detail = f"the request's head exceeds {HEAD_BYTES} bytes"
            self._refuse(HeadTooLarge(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, detail))
            return
        super().data_received(data)

    def _body_received(self, data: bytes) -> None:
        """In a body, what is not body is chunk framing or a chunked body's trailer section, which
        httptools buffers as it does a head: the bytes since the last body bytes have the head's
        limit."""
        self._body_bytes = 0
        super().data_received(data)
        if self._head_bytes is not None:  # the message ended: the next one's head is counted
            return
        outside = len(data) - self._body_bytes
        self._outside_body = outside if self._body_bytes else self._outside_body + outside
        if self._outside_body > HEAD_BYTES:
            detail = f"the request's trailer section exceeds {HEAD_BYTES} bytes"
            if self.cycle is not None and self.cycle.response_started:
                self.transport.close()  # too late for a status: the connection ends
            else:
                self._refuse(HeadTooLarge(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, detail))

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        super().on_body(body)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._fields = 0

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) + LINE_BESIDES_URL > REQUEST_LINE_BYTES:
            detail = f"the request line exceeds {REQUEST_LINE_BYTES} bytes"
            self._stop(HeadTooLarge(HTTPStatus.REQUEST_URI_TOO_LONG, detail))

    def on_header(self, name: bytes, value: bytes) -> None:
        self._fields += 1
        if len(name) + len(b": ") + len(value) + len(b"\r\n") > HEADER_FIELD_BYTES:
            detail = f"a header field exceeds {HEADER_FIELD_BYTES} bytes"
            self._stop(HeadTooLarge(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, detail))
        if self._fields > HEADER_FIELDS:
            detail = f"more than {HEADER_FIELDS} header fields"
            self._stop(HeadTooLarge(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, detail))
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._head_bytes, self._outside_body = None, 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_bytes = 0  # the next request's head

    def on_response_complete(self) -> None:
        contextvars.Context().run(super().on_response_complete)  # starts the next pipelined request

    def _stop(self, refused: HeadTooLarge) -> None:
        """Stop the parser (its callbacks' errors end feed_data) and remember why."""
        self._refused = refused
        raise refused

    def send_400_response(self, msg: str) -> None:
        # uvicorn answers 400 to any parser error; one raised by a limit above says which.
        if self._refused is None:
            super().send_400_response(msg)
        else:
            self._refuse(self._refused)

    def _refuse(self, refused: HeadTooLarge) -> None:
        body = f"{refused.status.phrase}: {refused}".encode("ascii")
        head = [STATUS_LINE[refused.status.value]]
        head += [name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers]
        head += [b"content-type: text/plain; charset=utf-8\r\n"]
        head += [b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)]
        self.transport.write(b"".join(head) + body)
        self.transport.close()
        self._head_bytes = None  # nothing more is read
