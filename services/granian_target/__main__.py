"""`python -m granian_target`: the lab's FastAPI app (LAB_INTERFACE=asgi) or Flask app (wsgi) on
granian, the one definition of how this target is served.

granian's root process binds the port and forks its workers (multiprocessing's fork), each a
tokio runtime in Rust that accepts connections and parses HTTP, handing each request to Python:
as a task on the worker's asyncio event loop (ASGI), or to one of its blocking threads, which run
the WSGI app under the GIL. Each worker accepts up to `backpressure` connections at once, whether
or not its Python is free; /info says so (workload.served_by).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from typing import Any

from granian import Granian
from granian.constants import Interfaces, RuntimeModes
from granian.http import HTTP1Settings
from granian.log import LogLevels

from granian_target.heads import bounded_asgi, bounded_wsgi
from granian_target.settings import APPS, GRANIAN_BACKLOG, GranianSettings
from workload.head_limits import HEAD_BYTES
from workload.lifetime import end_with_root
from workload.metrics_process import metrics_served
from workload.served_by import ServedBy
from workload.server import prepare_environment

# How long a stopping worker may finish the requests it holds before granian kills it.
GRACEFUL_SHUTDOWN_SECONDS = 5
# Rust threads per worker that accept connections and parse HTTP (granian's default): never the
# ones that run Python.
RUNTIME_THREADS = 1


def refuse_other_families(settings: GranianSettings) -> None:
    """Settings of the other families' servers: refused, not ignored."""
    if settings.worker_class != "sync":
        raise SystemExit(f"LAB_WORKER_CLASS={settings.worker_class}: a gunicorn worker class, not granian's")
    if settings.reload:
        raise SystemExit("LAB_RELOAD: granian's reloader needs its [reload] extra, which the lab leaves out")
    if settings.interface == "asgi" and "threads" in settings.model_fields_set and settings.threads != 1:
        raise SystemExit(
            f"LAB_THREADS={settings.threads}: granian runs an ASGI app on its worker's one event loop "
            "(blocking threads > 1 are for WSGI)"
        )


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


def load_app(target: str) -> Callable[..., Any]:
    """Run in each worker, after the fork: end with the root (the parent-death signal is not
    inherited, workload.lifetime), then build the app, behind the lab's limits on a request's head."""
    from granian._internal import load_target

    end_with_root()  # granian forks its workers from its main thread, which lives as long as it
    app: Callable[..., Any] = load_target(target, factory=True)
    return bounded_asgi(app) if target == APPS["asgi"] else bounded_wsgi(app)


def main() -> None:
    settings = GranianSettings()
    refuse_other_families(settings)
    workers = settings.resolved_workers(default_multiplier=1)
    # Fork (granian's own default before Python 3.14): the workers share the root's in-flight
    # counter and inherit the environment exported here, the metrics directory among it.
    multiprocessing.set_start_method("fork")
    prepare_environment(settings, root_serves=False)
    os.environ["LAB_WORKERS"] = str(workers)  # every worker's app reports the same count
    description = served_by(settings, workers)
    description.export()
    server = Granian(
        APPS[settings.interface],
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
        # The most a request's head may take, as gunicorn's buffer (granian_target.heads).
        http1_settings=HTTP1Settings(max_buffer_size=HEAD_BYTES),
        log_level=LogLevels(settings.log_level),
        workers_kill_timeout=GRACEFUL_SHUTDOWN_SECONDS,
    )
    with metrics_served(settings.host, settings.metrics_port, reload=False):
        server.serve(target_loader=load_app)


if __name__ == "__main__":
    main()
