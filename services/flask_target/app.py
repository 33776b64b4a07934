"""The Flask target on gunicorn: sync workers, each busy with one request at a time; gevent
workers (LAB_WORKER_CLASS=gevent), each taking up to worker_connections requests as greenlets; or
gthread workers (LAB_WORKER_CLASS=gthread), each running LAB_THREADS requests on threads.

`create_app` (gunicorn's app) resolves the settings once per worker and registers the blueprints:
control, work, and downstream where a downstream URL is set.
"""

from __future__ import annotations

from flask import Flask

from flask_target import control, downstream, hooks, work
from flask_target.state import KEY, TargetState
from workload.contract import Execution, Server, build_info, downstream_endpoints
from workload.downstream import blocking_client
from workload.limits import InFlightLimiter
from workload.serving import Serving, current
from workload.settings import TargetSettings

# How each gunicorn worker class runs requests: what /info calls it.
EXECUTION: dict[str, Execution] = {"sync": "workers", "gevent": "greenlets", "gthread": "threads"}


def gunicorn(settings: TargetSettings) -> Serving:
    """How gunicorn, this family's own server, runs the app: each worker class its own way, one
    request per sync worker, its threads (gthread) or its greenlets (gevent) at once."""
    per_worker = {"gevent": settings.worker_connections, "gthread": settings.threads}
    return Serving(
        server="gunicorn",
        worker_class=settings.worker_class,
        execution=EXECUTION[settings.worker_class],
        per_worker=per_worker.get(settings.worker_class, 1),
    )


def monkey_patch(settings: TargetSettings) -> dict[str, object] | None:
    """What gevent patched, on gevent workers; None on the others."""
    if settings.worker_class != "gevent":
        return None
    # Imported here: only a gevent worker (patched before it loaded this app) may import gevent.
    from workload.green import monkey_patch_report

    return monkey_patch_report()


def create_app() -> Flask:
    settings = TargetSettings()
    serving = current(default=gunicorn(settings))
    assert serving.execution is not None, "a server of WSGI apps says how its workers run them"
    server = Server(
        framework="flask",
        server=serving.server,
        worker_class=serving.worker_class,
        workers=settings.resolved_workers(default_multiplier=1),
        threads=serving.threads,
        cores=settings.cores(),
        max_iterations=settings.resolved_max_iterations(),
    )
    execution, slots = serving.execution, server.workers * serving.per_worker
    endpoints = work.endpoints(execution, slots)
    if settings.downstream_url:
        endpoints += downstream_endpoints(execution, slots)
    endpoints = serving.admitted(endpoints, server.workers)
    extra = serving.info()
    if (patched := monkey_patch(settings)) is not None:
        extra["monkey_patch"] = patched

    app = Flask(__name__)
    app.extensions[KEY] = TargetState(
        settings,
        build_info(settings, server, endpoints, extra),
        server.max_iterations,
        InFlightLimiter(settings.max_in_flight) if settings.max_in_flight else None,
        blocking_client(settings.downstream_url, serving.per_worker) if settings.downstream_url else None,
    )
    hooks.install(app)
    app.register_blueprint(control.blueprint)
    app.register_blueprint(work.blueprint)
    if settings.downstream_url:
        app.register_blueprint(downstream.blueprint)
    return app
