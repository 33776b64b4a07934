"""The Flask target: sync gunicorn workers, each busy with one request at a time."""

from __future__ import annotations

import os
import re
import time
from importlib.metadata import version

from flask import Flask, Response, g, jsonify, request
from werkzeug.exceptions import HTTPException

from workload import io as lab_io
from workload import kernel
from workload.census import take_census
from workload.contract import Endpoint, build_info, cpu_path, io_path, parse_bounded_int, validation_error
from workload.metrics import IN_FLIGHT, KERNEL_ITERATIONS, UNMATCHED_ROUTE, exposition, observe_request
from workload.settings import MAX_CALIBRATE_SAMPLES, MAX_IO_MILLISECONDS, TargetSettings

_FLASK_PARAMETER = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")


def route_template(rule: str) -> str:
    """Flask's `/x/<int:n>` as `/x/{n}`, the same template FastAPI reports."""
    return _FLASK_PARAMETER.sub(r"{\1}", rule)


class InvalidInput(Exception):
    def __init__(self, location: list[str], message: str, value: object) -> None:
        super().__init__(message)
        self.body = validation_error(location, message, value)


def bounded_int(value: str, location: list[str], low: int, high: int) -> int:
    parsed = parse_bounded_int(value, low, high)
    if isinstance(parsed, str):
        raise InvalidInput(location, parsed, value)
    return parsed


def create_app() -> Flask:
    settings = TargetSettings()
    cores = settings.cores()
    workers = settings.resolved_workers(default_multiplier=1)
    max_iterations = settings.resolved_max_iterations()
    endpoints = [
        Endpoint("sync-cpubound", cpu_path("sync-cpubound"), "cpu", "workers", workers),
        Endpoint("io-bound", io_path("io-bound"), "io", "workers", workers),
    ]
    info = build_info(
        name=settings.name or "flask",
        framework="flask",
        framework_version=version("flask"),
        server="gunicorn",
        server_version=version("gunicorn"),
        workers=workers,
        cores=cores,
        reload=settings.reload,
        max_iterations=max_iterations,
        work_cap_seconds=settings.work_cap_seconds,
        endpoints=endpoints,
    )
    app = Flask(__name__)

    @app.before_request
    def start_timer() -> None:
        g.started = time.perf_counter()
        IN_FLIGHT.inc()

    @app.teardown_request
    def stop_timer(_: BaseException | None) -> None:
        if "started" in g:
            IN_FLIGHT.dec()

    @app.after_request
    def record(response: Response) -> Response:
        rule = request.url_rule
        template = route_template(rule.rule) if rule is not None else UNMATCHED_ROUTE
        observe_request(request.method, template, response.status_code, time.perf_counter() - g.started)
        return response

    @app.errorhandler(InvalidInput)
    def invalid_input(error: InvalidInput) -> tuple[Response, int]:
        return jsonify(error.body), 422

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[Response, int]:
        # JSON, in FastAPI's shape, for 404, 405 and the rest.
        return jsonify({"detail": error.name}), error.code or 500

    @app.get("/healthz")
    def healthz() -> Response:
        return jsonify(status="ok")

    @app.get("/info")
    def get_info() -> Response:
        return jsonify(info)

    @app.get("/test/calibrate")
    def calibrate() -> Response:
        samples = bounded_int(
            request.args.get("samples", "1"), ["query", "samples"], 1, MAX_CALIBRATE_SAMPLES
        )
        seconds = kernel.seconds_per_iteration(samples)
        KERNEL_ITERATIONS.inc(samples)
        return jsonify(
            seconds_per_iteration=seconds, samples=samples, kernel=kernel.KERNEL_NAME, pid=os.getpid()
        )

    @app.get("/test/sync-cpubound/<iterations>")
    def sync_cpubound(iterations: str) -> Response:
        count = bounded_int(iterations, ["path", "iterations"], 1, max_iterations)
        result = kernel.run_iterations(count)
        KERNEL_ITERATIONS.inc(count)
        return jsonify(result.as_dict())

    @app.get("/test/io-bound/<milliseconds>")
    def io_bound(milliseconds: str) -> Response:
        wait = bounded_int(milliseconds, ["path", "milliseconds"], 0, MAX_IO_MILLISECONDS)
        return jsonify(lab_io.blocking_wait(wait).as_dict())

    @app.get("/test/resmon")
    def resmon() -> Response:
        return jsonify(take_census(settings.reload).as_dict())

    @app.get("/metrics")
    def metrics() -> Response:
        body, content_type = exposition(settings.reload)
        return Response(body, content_type=content_type)

    return app
