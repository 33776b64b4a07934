"""`python -m fastapi_target`: the one definition of how this target is served.

The Dockerfile, the local launcher and the Helm chart all run this; they differ only in the
LAB_* environment (see workload.settings.TargetSettings).
"""

from __future__ import annotations

import os
from pathlib import Path

import uvicorn

from workload.server import prepare_environment, remove_metrics_dir
from workload.settings import TargetSettings

# Bounds how long shutdown waits for in-flight requests before it cancels them.
GRACEFUL_SHUTDOWN_SECONDS = 5


def main() -> None:
    settings = TargetSettings()
    if settings.worker_class != "sync":
        # gevent and gthread are gunicorn's worker classes (flask_target): refused, not ignored.
        raise SystemExit(f"LAB_WORKER_CLASS={settings.worker_class}: uvicorn has no such worker class")
    workers = settings.resolved_workers(default_multiplier=None)  # production default: 1 worker
    prepare_environment(settings, root_serves=workers == 1 and not settings.reload)
    os.environ["LAB_WORKERS"] = str(workers)  # every worker process reports the same count
    # Imported only now: prometheus_client must first see PROMETHEUS_MULTIPROC_DIR.
    from workload.metrics_server import start_metrics_server

    # In this process, whichever role uvicorn gives it: the server itself, or the supervisor of
    # --workers / --reload children (spawned, so they inherit neither the thread nor the port).
    metrics_server = start_metrics_server(settings.host, settings.metrics_port, settings.reload)
    try:
        uvicorn.run(
            "fastapi_target.app:create_app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=workers,
            reload=settings.reload,
            reload_dirs=[str(Path(__file__).parent)] if settings.reload else None,
            log_level=settings.log_level,
            access_log=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
    finally:
        if metrics_server is not None:
            metrics_server.close()
        remove_metrics_dir()


if __name__ == "__main__":
    main()
