"""The Flask target on gunicorn: sync workers, each busy with one request at a time; gevent
workers (LAB_WORKER_CLASS=gevent), each taking up to worker_connections requests as greenlets; or
gthread workers (LAB_WORKER_CLASS=gthread), each running LAB_THREADS requests on threads.

The handlers are the same blocking code every way: under gevent's monkey patching, time.sleep
and sockets yield to the worker's other greenlets; on gthread's threads, waits release the GIL;
CPU work still holds the worker's one core (its thread, or the GIL) either way.
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
from workload.contract import MIXED_PATH, Endpoint, Execution, build_info, cpu_path, io_path
from workload.errors import InvalidInput, bounded_int, downstream_failure, too_many
from workload.exposition import exposition
from workload.fanout import FAN_OUT_PATH, MAX_FAN_OUT, fan_out_blocking
from workload.limits import InFlightLimiter, is_limited
from workload.metrics import IN_FLIGHT, KERNEL_ITERATIONS, UNMATCHED_ROUTE, observe_request
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS, mixed_blocking
from workload.settings import MAX_CALIBRATE_SAMPLES, MAX_IO_MILLISECONDS, TargetSettings
from workload.timing import Stopwatch, waits_yield

_FLASK_PARAMETER = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")
# How each gunicorn worker class runs requests: what /info calls it.
EXECUTION: dict[str, Execution] = {"sync": "workers", "gevent": "greenlets", "gthread": "threads"}


def route_template(rule: str) -> str:
    """Flask's `/x/<int:n>` as `/x/{n}`, the same template FastAPI reports."""
    return _FLASK_PARAMETER.sub(r"{\1}", rule)


def query_int(name: str, low: int, high: int, default: str = "") -> int:
    """The request's query parameter `name` as an integer in [low, high], else a 422."""
    return bounded_int(request.args.get(name, default), ["query", name], low, high)


def requests_per_worker(settings: TargetSettings) -> int:
    """Requests one worker process holds at once: its greenlets, its threads, or one."""
    return {"gevent": settings.worker_connections, "gthread": settings.threads}.get(settings.worker_class, 1)


def create_app() -> Flask:
    settings = TargetSettings()
    cores = settings.cores()
    workers = settings.resolved_workers(default_multiplier=1)
    max_iterations = settings.resolved_max_iterations()
    per_worker = requests_per_worker(settings)
    execution = EXECUTION[settings.worker_class]
    slots = workers * per_worker
    endpoints = [
        Endpoint("sync-cpubound", cpu_path("sync-cpubound"), "cpu", execution, slots),
        Endpoint("io-bound", io_path("io-bound"), "io", execution, slots),
        Endpoint("mixed", MIXED_PATH, "mixed", execution, slots),
    ]
    if settings.downstream_url:
        endpoints.append(Endpoint("downstream", io_path("downstream"), "io", execution, slots))
        endpoints.append(Endpoint("fan-out", FAN_OUT_PATH, "io", execution, slots))
    monkey_patch = None
    if settings.worker_class == "gevent":
        # Imported here: only a gevent worker (patched before it loaded this app) may import gevent.
        from workload.green import monkey_patch_report

        monkey_patch = monkey_patch_report()
    info = build_info(
        settings,
        framework="flask",
        server="gunicorn",
        worker_class=settings.worker_class,
        workers=workers,
        threads=settings.threads if settings.worker_class == "gthread" else 1,
        cores=cores,
        max_iterations=max_iterations,
        endpoints=endpoints,
        monkey_patch=monkey_patch,
    )
    app = Flask(__name__)
    limiter = InFlightLimiter(settings.max_in_flight) if settings.max_in_flight else None
    # One pooled client per worker process, with a connection for each request the worker holds
    # (a sync worker makes one call at a time; gevent's greenlets and gthread's threads call
    # concurrently).
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
        samples = query_int("samples", 1, MAX_CALIBRATE_SAMPLES, default="1")
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
        cpu_ms = query_int("cpu_ms", 0, MAX_CPU_MILLISECONDS)
        io_ms = query_int("io_ms", 0, MAX_IO_MILLISECONDS)
        splits = query_int("splits", 1, MAX_SPLITS, default="1")
        return jsonify(mixed_blocking(cpu_ms, io_ms, splits).as_dict())

    if downstream is not None:

        def call(milliseconds: int) -> int:
            answer = downstream.get(f"/test/io-bound/{milliseconds}")
            answer.raise_for_status()
            return answer.status_code

        @app.get("/test/downstream/<milliseconds>")
        def call_downstream(milliseconds: str) -> Response | tuple[Response, int]:
            wait = bounded_int(milliseconds, ["path", "milliseconds"], 0, MAX_IO_MILLISECONDS)
            # The blocking client's CPU is this thread's, unless its socket waits yield (gevent).
            watch = Stopwatch(measure_cpu=not waits_yield())
            try:
                answer = downstream.get(f"/test/io-bound/{wait}")
                answer.raise_for_status()
            except httpx.HTTPError as error:
                return jsonify(downstream_failure(error)), 502
            return jsonify(milliseconds=wait, **watch.timing(), downstream=answer.json())

        @app.get(FAN_OUT_PATH)
        def fan_out() -> Response | tuple[Response, int]:
            k = query_int("k", 1, MAX_FAN_OUT)
            wait_ms = query_int("wait_ms", 0, MAX_IO_MILLISECONDS)
            call_ms = query_int("call_ms", 0, MAX_IO_MILLISECONDS)
            try:
                return jsonify(fan_out_blocking(k, wait_ms, call_ms, call).as_dict())
            except httpx.HTTPError as error:
                return jsonify(downstream_failure(error)), 502

    @app.get("/test/resmon")
    def resmon() -> Response:
        return jsonify(take_census(settings.reload).as_dict())

    @app.get("/metrics")
    def metrics() -> Response:
        body, content_type = exposition(settings.reload)
        return Response(body, content_type=content_type)

    return app
