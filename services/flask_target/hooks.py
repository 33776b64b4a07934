"""What happens around every request: metrics, the optional in-flight limit, errors as JSON."""

from __future__ import annotations

import time

from flask import Flask, Response, g, jsonify, request
from werkzeug.exceptions import HTTPException

from flask_target.params import route_template
from flask_target.state import state
from workload.errors import InvalidInput, too_many
from workload.limits import is_limited
from workload.metrics import IN_FLIGHT, UNMATCHED_ROUTE, observe_request


def start_timer() -> tuple[Response, int] | None:
    g.started = time.perf_counter()
    IN_FLIGHT.inc()
    limiter = state().limiter
    if limiter and is_limited(request.path):
        if not limiter.try_acquire():
            return jsonify(too_many(limiter.limit)), 429
        g.limited = True
    return None


def stop_timer(_: BaseException | None) -> None:
    if "started" in g:
        IN_FLIGHT.dec()
    limiter = state().limiter
    if limiter and g.pop("limited", False):
        limiter.release()


def record(response: Response) -> Response:
    rule = request.url_rule
    template = route_template(rule.rule) if rule is not None else UNMATCHED_ROUTE
    observe_request(request.method, template, response.status_code, time.perf_counter() - g.started)
    return response


def invalid_input(error: InvalidInput) -> tuple[Response, int]:
    return jsonify(error.body), 422


def http_error(error: HTTPException) -> tuple[Response, int]:
    # JSON, in FastAPI's shape, for 404, 405 and the rest.
    return jsonify({"detail": error.name}), error.code or 500


def install(app: Flask) -> None:
    app.before_request(start_timer)
    app.teardown_request(stop_timer)
    app.after_request(record)
    app.register_error_handler(InvalidInput, invalid_input)
    app.register_error_handler(HTTPException, http_error)
