"""A team's app that answers 200 only to the requests a traffic file describes, exactly as sent: a
POST with a JSON body and a bearer token (the token from its own environment, as the tester's),
a GET whose path and query hold commas, and a POST of a form. Anything else is a 4xx, so a
request sent with the wrong method, header or body shows as a failure. Each waits a little, so
the mix has something to queue on.

    POST /orders             Authorization: Bearer $API_TOKEN, JSON {"product": int, ...}
    GET  /items/a,b?tags=x,y
    POST /login              form user=ann&code=7
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

WAIT_S = 0.01


def answer(method: str, path: str, query: str, authorization: str, body: bytes) -> tuple[str, bytes]:
    """The status line and body for one request."""
    time.sleep(WAIT_S)
    if path == "/orders" and method == "POST":
        if authorization != "Bearer " + os.environ["API_TOKEN"]:
            return "401 Unauthorized", b"{}"
        try:
            order = json.loads(body)
        except ValueError:
            return "400 Bad Request", b"{}"
        if not isinstance(order, dict) or not isinstance(order.get("product"), int):
            return "400 Bad Request", b"{}"
        return "200 OK", json.dumps({"product": order["product"]}).encode()
    if path == "/items/a,b" and method == "GET":
        return ("200 OK", b"[]") if query == "tags=x,y" else ("400 Bad Request", b"{}")
    if path == "/login" and method == "POST":
        form = parse_qs(body.decode())
        return ("200 OK", b"{}") if form == {"user": ["ann"], "code": ["7"]} else ("400 Bad Request", b"{}")
    return "404 Not Found", b"{}"


def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else b""
    status, content = answer(
        environ["REQUEST_METHOD"],
        environ["PATH_INFO"],
        environ.get("QUERY_STRING", ""),
        environ.get("HTTP_AUTHORIZATION", ""),
        body,
    )
    start_response(status, [("Content-Type", "application/json")])
    return [content]
