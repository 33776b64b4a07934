"""`python -m fastapi_target`: the one definition of how this target is served.

The Dockerfile, the local launcher and the Helm chart all run this; they differ only in the
LAB_* environment (see workload.settings.TargetSettings).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from types import FrameType

import uvicorn

from workload.metrics_process import start_metrics_process
from workload.server import prepare_environment, remove_metrics_dir
from workload.settings import TargetSettings

# Bounds how long shutdown waits for in-flight requests before it cancels them.
GRACEFUL_SHUTDOWN_SECONDS = 5


def _exit_after_shutdown(signum: int, frame: FrameType | None) -> None:
    # uvicorn serving alone re-raises the SIGTERM it shut down on, under the handler it found. The
    # default action would end this process there, before `finally` stops the metrics process and
    # removes the metrics directory; this exits as a SIGTERM death reports (128 + 15) after both.
    raise SystemExit(128 + signum)


def main() -> None:
    settings = TargetSettings()
    if settings.worker_class != "sync":
        # gevent and gthread are gunicorn's worker classes (flask_target): refused, not ignored.
        raise SystemExit(f"LAB_WORKER_CLASS={settings.worker_class}: uvicorn has no such worker class")
    workers = settings.resolved_workers(default_multiplier=None)  # production default: 1 worker
    prepare_environment(settings, root_serves=workers == 1 and not settings.reload)
    os.environ["LAB_WORKERS"] = str(workers)  # every worker process reports the same count
    # Started by this process, whichever role uvicorn gives it (the server itself, or the
    # supervisor of --workers / --reload children), once the environment it inherits is final.
    metrics_process = start_metrics_process(settings.host, settings.metrics_port, settings.reload)
    signal.signal(signal.SIGTERM, _exit_after_shutdown)
    try:
        uvicorn.run(
            "fastapi_target.app:create_app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=workers,
            reload=settings.reload,
            reload_dirs=[str(Path(__file__).parent)] if settings.reload else None,
            http="fastapi_target.protocol:BoundedHttpToolsProtocol",  # gunicorn's limits on a head
            log_level=settings.log_level,
            access_log=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
    finally:
        if metrics_process is not None:
            metrics_process.close()
        remove_metrics_dir()


if __name__ == "__main__":
    main()
