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
from workload.settings import TargetSettings

# How each gunicorn worker class runs requests: what /info calls it.
EXECUTION: dict[str, Execution] = {"sync": "workers", "gevent": "greenlets", "gthread": "threads"}


def requests_per_worker(settings: TargetSettings) -> int:
    """Requests one worker process holds at once: its greenlets, its threads, or one."""
    return {"gevent": settings.worker_connections, "gthread": settings.threads}.get(settings.worker_class, 1)


def monkey_patch(settings: TargetSettings) -> dict[str, object] | None:
    """What gevent patched, on gevent workers; None on the others."""
    if settings.worker_class != "gevent":
        return None
    # Imported here: only a gevent worker (patched before it loaded this app) may import gevent.
    from workload.green import monkey_patch_report

    return monkey_patch_report()


def create_app() -> Flask:
    settings = TargetSettings()
    server = Server(
        framework="flask",
        server="gunicorn",
        worker_class=settings.worker_class,
        workers=settings.resolved_workers(default_multiplier=1),
        threads=settings.threads if settings.worker_class == "gthread" else 1,
        cores=settings.cores(),
        max_iterations=settings.resolved_max_iterations(),
    )
    per_worker = requests_per_worker(settings)
    execution, slots = EXECUTION[settings.worker_class], server.workers * per_worker
    endpoints = work.endpoints(execution, slots)
    if settings.downstream_url:
        endpoints += downstream_endpoints(execution, slots)

    app = Flask(__name__)
    app.extensions[KEY] = TargetState(
        settings,
        build_info(settings, server, endpoints, monkey_patch(settings)),
        server.max_iterations,
        InFlightLimiter(settings.max_in_flight) if settings.max_in_flight else None,
        blocking_client(settings.downstream_url, per_worker) if settings.downstream_url else None,
    )
    hooks.install(app)
    app.register_blueprint(control.blueprint)
    app.register_blueprint(work.blueprint)
    if settings.downstream_url:
        app.register_blueprint(downstream.blueprint)
    return app
