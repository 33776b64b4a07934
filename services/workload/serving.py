"""How a target's entrypoint hands over to its server: uvicorn in this process, or gunicorn in
place of it (the same pid, so the launcher's process is the arbiter). Every setting comes from the
LAB_* environment (workload.settings); gunicorn reads its own through workload.gunicorn_conf.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from types import FrameType
from typing import Any

from workload.lifetime import end_with_root
from workload.metrics_process import start_metrics_process
from workload.server import prepare_environment, remove_metrics_dir
from workload.settings import TargetSettings

# Bounds how long shutdown waits for in-flight requests before it cancels them.
GRACEFUL_SHUTDOWN_SECONDS = 5
GUNICORN_CONFIG = "python:workload.gunicorn_conf"
BOUNDED_HTTP = "workload.uvicorn_protocol:BoundedHttpToolsProtocol"
FACTORY_ENV = "LAB_UVICORN_FACTORY"  # the app factory serve_uvicorn was given


def exec_gunicorn(app: str) -> None:
    """Replace this process with gunicorn serving `app` (gunicorn's `module:callable` or
    `module:factory()`), configured from the environment. Nothing imported here survives: a gevent
    worker imports the app after it patched itself."""
    os.execv(sys.executable, [sys.executable, "-m", "gunicorn", "--config", GUNICORN_CONFIG, app])


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
    import uvicorn  # here: a gunicorn target never needs it before its exec

    settings = TargetSettings()
    if settings.worker_class != "sync":
        # gevent and gthread are gunicorn's worker classes: refused, not ignored.
        raise SystemExit(f"LAB_WORKER_CLASS={settings.worker_class}: uvicorn has no such worker class")
    workers = settings.resolved_workers(default_multiplier=None)  # production default: 1 worker
    prepare_environment(settings, root_serves=workers == 1 and not settings.reload)
    os.environ["LAB_WORKERS"] = str(workers)  # every worker process reports the same count
    # Started by this process, whichever role uvicorn gives it (the server itself, or the
    # supervisor of --workers / --reload children), once the environment it inherits is final.
    metrics_process = start_metrics_process(settings.host, settings.metrics_port, settings.reload)
    signal.signal(signal.SIGTERM, _exit_after_shutdown)
    os.environ[FACTORY_ENV] = factory  # what served_app builds, in every process that serves
    try:
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
    finally:
        if metrics_process is not None:
            metrics_process.close()
        remove_metrics_dir()
