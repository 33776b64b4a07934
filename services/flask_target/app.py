"""The Flask target: sync gunicorn workers, each busy with one request at a time, or gevent
workers (LAB_WORKER_CLASS=gevent), each taking up to worker_connections requests as greenlets.

The handlers are the same blocking code either way: under gevent's monkey patching, time.sleep
and sockets yield to the worker's other greenlets, while CPU work still holds the worker's thread.
"""

from __future__ import annotations

import re
import time

import httpx
from flask import Flask, Response, g, jsonify, request
from werkzeug.exceptions import HTTPException

from workload import io as lab_io
from workload import kernel
from workload.census import take_census
from workload.contract import (
    MIXED_PATH,
    Endpoint,
    build_info,
    cpu_path,
    io_path,
    parse_bounded_int,
    validation_error,
)
from workload.exposition import exposition
from workload.limits import InFlightLimiter, is_limited, too_many
from workload.metrics import IN_FLIGHT, KERNEL_ITERATIONS, UNMATCHED_ROUTE, observe_request
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS, mixed_blocking
from workload.settings import MAX_CALIBRATE_SAMPLES, MAX_IO_MILLISECONDS, TargetSettings
from workload.timing import Stopwatch, waits_yield

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
    green = settings.worker_class == "gevent"
    # Requests one worker process holds at once: one for sync workers, worker_connections greenlets.
    per_worker = settings.worker_connections if green else 1
    execution = "greenlets" if green else "workers"
    slots = workers * per_worker
    endpoints = [
        Endpoint("sync-cpubound", cpu_path("sync-cpubound"), "cpu", execution, slots),
        Endpoint("io-bound", io_path("io-bound"), "io", execution, slots),
        Endpoint("mixed", MIXED_PATH, "mixed", execution, slots),
    ]
    if settings.downstream_url:
        endpoints.append(Endpoint("downstream", io_path("downstream"), "io", execution, slots))
    monkey_patch = None
    if green:
        # Imported here: only a gevent worker (patched before it loaded this app) may import gevent.
        from workload.green import monkey_patch_report

        monkey_patch = monkey_patch_report()
    info = build_info(
        settings,
        framework="flask",
        server="gunicorn",
        workers=workers,
        cores=cores,
        max_iterations=max_iterations,
        endpoints=endpoints,
        monkey_patch=monkey_patch,
    )
    app = Flask(__name__)
    limiter = InFlightLimiter(settings.max_in_flight) if settings.max_in_flight else None
    # One pooled client per worker process, with a connection for each request the worker holds
    # (a sync worker makes one call at a time; a gevent worker's greenlets call concurrently).
    downstream = (
        httpx.Client(
            base_url=settings.downstream_url,
            timeout=MAX_IO_MILLISECONDS / 1000 + 30,
            limits=httpx.Limits(max_connections=per_worker, max_keepalive_connections=min(per_worker, 100)),
        )
        if settings.downstream_url
        else None
    )

    @app.before_request
    def start_timer() -> Response | tuple[Response, int] | None:
        g.started = time.perf_counter()
        IN_FLIGHT.inc()
        if limiter and is_limited(request.path):
            if not limiter.try_acquire():
                return jsonify(too_many(limiter.limit)), 429
            g.limited = True
        return None

    @app.teardown_request
    def stop_timer(_: BaseException | None) -> None:
        if "started" in g:
            IN_FLIGHT.dec()
        if limiter and g.pop("limited", False):
            limiter.release()

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
        body = kernel.calibration(samples)
        KERNEL_ITERATIONS.inc(samples)
        return jsonify(body)

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

    @app.get("/test/mixed")
    def mixed() -> Response:
        cpu_ms = bounded_int(request.args.get("cpu_ms", ""), ["query", "cpu_ms"], 0, MAX_CPU_MILLISECONDS)
        io_ms = bounded_int(request.args.get("io_ms", ""), ["query", "io_ms"], 0, MAX_IO_MILLISECONDS)
        splits = bounded_int(request.args.get("splits", "1"), ["query", "splits"], 1, MAX_SPLITS)
        return jsonify(mixed_blocking(cpu_ms, io_ms, splits).as_dict())

    if downstream is not None:

        @app.get("/test/downstream/<milliseconds>")
        def call_downstream(milliseconds: str) -> Response | tuple[Response, int]:
            wait = bounded_int(milliseconds, ["path", "milliseconds"], 0, MAX_IO_MILLISECONDS)
            # The blocking client's CPU is this thread's, unless its socket waits yield (gevent).
            watch = Stopwatch(measure_cpu=not waits_yield())
            try:
                answer = downstream.get(f"/test/io-bound/{wait}")
                answer.raise_for_status()
            except httpx.HTTPError as error:
                return jsonify(detail=f"downstream: {type(error).__name__}"), 502
            return jsonify(milliseconds=wait, **watch.timing(), downstream=answer.json())

    @app.get("/test/resmon")
    def resmon() -> Response:
        return jsonify(take_census(settings.reload).as_dict())

    @app.get("/metrics")
    def metrics() -> Response:
        body, content_type = exposition(settings.reload)
        return Response(body, content_type=content_type)

    return app
