"""What happens around every request: the optional in-flight limit and errors as JSON (each
request's metrics and Server-Timing come from measure.wsgi_cpu, around the whole app)."""

from __future__ import annotations

from flask import Flask, Response, g, jsonify, request
from werkzeug.exceptions import HTTPException

from apps.lab_flask.state import state
from measure.servertiming import hint_flask_routes
from measure.wsgi_cpu import WsgiCpuMiddleware
from workload.errors import InvalidInput, too_many
from workload.limits import is_limited


def take_slot() -> tuple[Response, int] | None:
    limiter = state().limiter
    if limiter and is_limited(request.path):
        if not limiter.try_acquire():
            return jsonify(too_many(limiter.limit)), 429
        g.limited = True
    return None


def release_slot(_: BaseException | None) -> None:
    limiter = state().limiter
    if limiter and g.pop("limited", False):
        limiter.release()


def invalid_input(error: InvalidInput) -> tuple[Response, int]:
    return jsonify(error.body), 422


def http_error(error: HTTPException) -> tuple[Response, int]:
    # JSON, in FastAPI's shape, for 404, 405 and the rest.
    return jsonify({"detail": error.name}), error.code or 500


def install(app: Flask) -> None:
    app.before_request(take_slot)
    app.teardown_request(release_slot)
    app.register_error_handler(InvalidInput, invalid_input)
    app.register_error_handler(HTTPException, http_error)
    hint_flask_routes(app)
    app.wsgi_app = WsgiCpuMiddleware(app.wsgi_app)  # type: ignore[method-assign]
