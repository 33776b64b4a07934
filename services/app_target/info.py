"""/info for the app: every target's fields, how the server runs the app's requests, and the app."""

from __future__ import annotations

from app_target.loading import LoadedApp
from app_target.settings import AppSettings
from workload.contract import (
    Endpoint,
    Execution,
    build_info,
    gunicorn_execution,
    gunicorn_server,
    monkey_patch,
    uvicorn_server,
)


def app_info(settings: AppSettings, loaded: LoadedApp) -> dict[str, object]:
    """One endpoint per LAB_APP_PATHS entry, `work: app`: the team's code, its CPU and waits
    measured per request (Server-Timing), never declared; execution and slots are the server's."""
    execution: Execution
    slots: int | None
    if loaded.interface == "asgi":
        server = uvicorn_server(settings, loaded.framework)
        execution, slots = "async", None
    else:
        server = gunicorn_server(settings, loaded.framework)
        execution, slots = gunicorn_execution(settings, server.workers)
    endpoints = [Endpoint(path, path, "app", execution, slots) for path in settings.paths()]
    info = build_info(
        settings, server, endpoints, monkey_patch(settings) if loaded.interface == "wsgi" else None
    )
    info["app"] = {"module": settings.app, "interface": loaded.interface}
    return info
