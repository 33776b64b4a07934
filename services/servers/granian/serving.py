"""How granian serves an app factory, whichever app it is. One place for granian's knobs, for what
/info says of them, and for the settings of other servers it refuses.

granian's root process binds the port and forks its workers (multiprocessing's fork), each a
tokio runtime in Rust that accepts connections and parses HTTP, handing each request to Python:
as a task on the worker's asyncio event loop (ASGI), or to one of its blocking threads, which run
the WSGI app under the GIL. Each worker accepts up to `backpressure` connections at once, whether
or not its Python is free; /info says so (workload.served_by).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from functools import partial
from typing import Any

from granian import Granian
from granian.constants import Interfaces, RuntimeModes
from granian.http import HTTP1Settings
from granian.log import LogLevels

from servers.granian.heads import bounded_asgi, bounded_wsgi
from servers.granian.settings import GRANIAN_BACKLOG, GranianSettings
from workload.head_limits import HEAD_BYTES
from workload.lifetime import ROOT_PID_ENV, die_with_parent
from workload.metrics_process import metrics_served
from workload.served_by import ServedBy
from workload.server import prepare_environment

# How long a stopping worker may finish the requests it holds before granian kills it.
GRACEFUL_SHUTDOWN_SECONDS = 5
# Rust threads per worker that accept connections and parse HTTP (granian's default): never the
# ones that run Python.
RUNTIME_THREADS = 1


def other_servers_setting(settings: GranianSettings) -> str | None:
    """What is wrong when the settings carry another server's knob: refused, not ignored."""
    worker_class = os.environ.get("LAB_WORKER_CLASS", "sync")
    if worker_class != "sync":
        return f"LAB_WORKER_CLASS={worker_class}: a gunicorn worker class, not granian's"
    if settings.reload:
        return "LAB_RELOAD: granian's reloader needs its [reload] extra, which the lab leaves out"
    if settings.interface == "asgi" and "threads" in settings.model_fields_set and settings.threads != 1:
        return (
            f"LAB_THREADS={settings.threads}: granian runs an ASGI app on its worker's one event loop "
            "(blocking threads > 1 are for WSGI)"
        )
    return None


def served_by(settings: GranianSettings, workers: int) -> ServedBy:
    """What /info says about how granian runs the app: ASGI work as the app's own routes say
    (on each worker's event loop), WSGI requests on `threads` blocking threads per worker."""
    blocking_threads = settings.threads if settings.interface == "wsgi" else 1
    backpressure = settings.resolved_backpressure(workers)
    return ServedBy(
        server="granian",
        worker_class=settings.interface,
        execution="threads" if settings.interface == "wsgi" else None,
        per_worker=blocking_threads,
        admits=backpressure,
        settings={
            "interface": settings.interface,
            "blocking_threads": blocking_threads,
            "backpressure": backpressure,
            "backlog": GRANIAN_BACKLOG,
            "runtime_threads": RUNTIME_THREADS,
            "runtime_mode": str(RuntimeModes.mt),
            "start_method": multiprocessing.get_start_method(),
        },
    )


def _load_app(interface: str, target: str) -> Callable[..., Any]:
    """Run in each worker, after the fork: end with the root (the parent-death signal is not
    inherited, workload.lifetime), then build the app, behind the lab's limits on a request's head."""
    from granian._internal import load_target

    # Killed, as gunicorn's workers are (servers.gunicorn.conf): a SIGTERM that came while the
    # worker still loads the app would reach the root's handler, inherited through the fork, and
    # be lost (seen: a worker outlived a root SIGKILLed right after it was ready). granian forks
    # its workers from its main thread, which lives as long as it.
    die_with_parent(int(os.environ[ROOT_PID_ENV]), signal.SIGKILL)
    app: Callable[..., Any] = load_target(target, factory=True)
    return bounded_asgi(app) if interface == "asgi" else bounded_wsgi(app)


def serve_granian(settings: GranianSettings, factory: str) -> None:
    """Serve the app `factory` builds (`module:function`, called once per worker) on granian,
    with settings.interface, until stopped; workers = cores unless LAB_WORKERS says otherwise."""
    workers = settings.resolved_workers(default_multiplier=1)
    # Fork (granian's own default before Python 3.14): the workers share the root's in-flight
    # counter and inherit the environment exported here, the metrics directory among it.
    multiprocessing.set_start_method("fork")
    prepare_environment(settings, root_serves=False)
    os.environ["LAB_WORKERS"] = str(workers)  # every worker's app reports the same count
    description = served_by(settings, workers)
    description.export()
    server = Granian(
        factory,
        address=settings.host,
        port=settings.port,
        interface=Interfaces(settings.interface),
        workers=workers,
        blocking_threads=description.per_worker,
        backpressure=description.admits,
        backlog=GRANIAN_BACKLOG,
        runtime_threads=RUNTIME_THREADS,
        runtime_mode=RuntimeModes.mt,
        websockets=False,
        # The most a request's head may take, as gunicorn's buffer (servers.granian.heads).
        http1_settings=HTTP1Settings(max_buffer_size=HEAD_BYTES),
        log_level=LogLevels(settings.log_level),
        workers_kill_timeout=GRACEFUL_SHUTDOWN_SECONDS,
    )
    with metrics_served(settings.host, settings.metrics_port, False, settings.metrics_deadline_s):
        server.serve(target_loader=partial(_load_app, settings.interface))
