"""The lab's limits on a request's head (workload.head_limits), on granian, with gunicorn's answers.

granian parses HTTP in Rust (hyper): its read buffer, set to the lab's HEAD_BYTES, bounds a head's
memory, and more than 100 fields it refuses (431) itself. A longer request line or header field
it passes on; these wrappers refuse them before the app sees the request, as gunicorn and the
lab's uvicorn protocol do: 414 for the request line, 431 for a field. Under WSGI granian joins a
header's repeated fields with commas, so there the joined value is what is held against the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

from workload.head_limits import HEADER_FIELD_BYTES, REQUEST_LINE_BYTES

ASGIApp = Callable[[dict[str, Any], Any, Any], Any]
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
# Around the method and the target: two spaces and the version (" HTTP/1.1").
LINE_BESIDES = len("  HTTP/1.1")
FIELD_BESIDES = len(": \r\n")  # between a field's name and value, and its end


def refusal(method: int, target: int, fields: Iterable[tuple[int, int]]) -> tuple[HTTPStatus, str] | None:
    """The status and reason a head of these sizes is refused with (bytes of the method, of the
    request target, of each field's name and value); None when it is within the limits."""
    if method + target + LINE_BESIDES > REQUEST_LINE_BYTES:
        return HTTPStatus.REQUEST_URI_TOO_LONG, f"the request line exceeds {REQUEST_LINE_BYTES} bytes"
    if any(name + value + FIELD_BESIDES > HEADER_FIELD_BYTES for name, value in fields):
        return (
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
            f"a header field exceeds {HEADER_FIELD_BYTES} bytes",
        )
    return None


def _body(status: HTTPStatus, reason: str) -> bytes:
    return f"{status.phrase}: {reason}".encode("ascii")


def bounded_asgi(app: ASGIApp) -> ASGIApp:
    async def bounded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query = scope.get("query_string", b"")
            target = len(scope.get("raw_path") or scope["path"].encode()) + (len(query) + 1 if query else 0)
            sizes = ((len(name), len(value)) for name, value in scope["headers"])
            refused = refusal(len(scope["method"]), target, sizes)
            if refused is not None:
                body = _body(*refused)
                headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({"type": "http.response.start", "status": refused[0].value, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return bounded


def bounded_wsgi(app: WSGIApp) -> WSGIApp:
    def bounded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        query = environ.get("QUERY_STRING", "")
        target = len(environ.get("PATH_INFO", "")) + (len(query) + 1 if query else 0)
        # HTTP_X_BIG is the field X-Big: its name is the key less "HTTP_".
        sizes = ((len(key) - 5, len(value)) for key, value in environ.items() if key.startswith("HTTP_"))
        refused = refusal(len(environ["REQUEST_METHOD"]), target, sizes)
        if refused is None:
            return app(environ, start_response)
        body = _body(*refused)
        headers = [("Content-Type", "text/plain; charset=utf-8"), ("Connection", "close")]
        start_response(
            f"{refused[0].value} {refused[0].phrase}", [*headers, ("Content-Length", str(len(body)))]
        )
        return [body]

    return bounded
