"""The Flask target on gunicorn: sync workers, each busy with one request at a time; gevent
workers (LAB_WORKER_CLASS=gevent), each taking up to worker_connections requests as greenlets; or
gthread workers (LAB_WORKER_CLASS=gthread), each running LAB_THREADS requests on threads.

`create_app` (gunicorn's app) resolves the settings once per worker and registers the blueprints:
control, work, and downstream where a downstream URL is set.
"""

from __future__ import annotations

from flask import Flask

from apps.lab_flask import control, downstream, hooks, work
from apps.lab_flask.state import KEY, TargetState
from workload.contract import (
    admitted,
    build_info,
    downstream_endpoints,
    monkey_patch,
    requests_per_worker,
    wsgi_execution,
    wsgi_server,
)
from workload.downstream import blocking_client
from workload.limits import InFlightLimiter
from workload.settings import TargetSettings


def create_app() -> Flask:
    settings = TargetSettings()
    server = wsgi_server(settings, "flask")
    per_worker = requests_per_worker()
    execution, slots = wsgi_execution(server.workers)
    endpoints = work.endpoints(execution, slots)
    if settings.downstream_url:
        endpoints += downstream_endpoints(execution, slots)
    endpoints = admitted(endpoints, server)

    app = Flask(__name__)
    app.extensions[KEY] = TargetState(
        settings,
        build_info(settings, server, endpoints, monkey_patch()),
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
