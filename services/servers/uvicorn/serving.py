"""How uvicorn serves an app factory, in this process: one worker (the root serves), or a
supervisor of --workers or --reload children. Every setting comes from the LAB_* environment
(servers.uvicorn.settings).
"""

from __future__ import annotations

import importlib
import os
import signal
from types import FrameType
from typing import Any

import uvicorn

from servers.uvicorn.settings import UVICORN, UvicornSettings
from workload.lifetime import end_with_root
from workload.metrics_process import metrics_served
from workload.server import prepare_environment

# Bounds how long shutdown waits for in-flight requests before it cancels them.
GRACEFUL_SHUTDOWN_SECONDS = 5
BOUNDED_HTTP = "servers.uvicorn.protocol:BoundedHttpToolsProtocol"
FACTORY_ENV = "LAB_UVICORN_FACTORY"  # the app factory serve_uvicorn was given


def _exit_after_shutdown(signum: int, frame: FrameType | None) -> None:
    # uvicorn serving alone re-raises the SIGTERM it shut down on, under the handler it found. The
    # default action would end this process there, before `finally` stops the metrics process and
    # removes the metrics directory; this exits as a SIGTERM death reports (128 + 15) after both.
    raise SystemExit(128 + signum)


def served_app() -> Any:
    """uvicorn's factory in every process that serves (the root, or each --workers and --reload
    child): the given factory's app, in a process that ends with the root however the root ends
    (workload.lifetime; a no-op in the root)."""
    end_with_root()
    module, _, name = os.environ[FACTORY_ENV].partition(":")
    return getattr(importlib.import_module(module), name)()


def serve_uvicorn(factory: str, reload_dirs: list[str]) -> None:
    """Serve uvicorn's app `factory` (`module:function`, called once per worker) until stopped.
    `reload_dirs`: what LAB_RELOAD watches."""
    settings = UvicornSettings()
    workers = settings.resolved_workers(default_multiplier=None)  # production default: 1 worker
    prepare_environment(settings, root_serves=workers == 1 and not settings.reload)
    os.environ["LAB_WORKERS"] = str(workers)  # every worker process reports the same count
    UVICORN.export()
    signal.signal(signal.SIGTERM, _exit_after_shutdown)
    # Started by this process, whichever role uvicorn gives it (the server itself, or the
    # supervisor of --workers / --reload children), once the environment it inherits is final.
    os.environ[FACTORY_ENV] = factory  # what served_app builds, in every process that serves
    with metrics_served(settings.host, settings.metrics_port, settings.reload, settings.metrics_deadline_s):
        uvicorn.run(
            f"{__name__}:served_app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=workers,
            reload=settings.reload,
            reload_dirs=reload_dirs if settings.reload else None,
            http=BOUNDED_HTTP,  # gunicorn's limits on a request's head, on uvicorn
            log_level=settings.log_level,
            access_log=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
