"""/info for the app: every target's fields, how the server runs the app's requests, and the app."""

from __future__ import annotations

from apps.team.loading import LoadedApp
from apps.team.settings import AppSettings
from workload.contract import (
    Endpoint,
    admitted,
    asgi_server,
    build_info,
    monkey_patch,
    wsgi_execution,
    wsgi_server,
)
from workload.served_by import Execution


def app_info(settings: AppSettings, loaded: LoadedApp) -> dict[str, object]:
    """One endpoint per LAB_APP_PATHS entry, `work: app`: the team's code, its CPU and waits
    measured per request (Server-Timing), never declared; execution and slots are the server's."""
    execution: Execution
    slots: int | None
    if loaded.interface == "asgi":
        server = asgi_server(settings, loaded.framework)
        execution, slots = "async", None
    else:
        server = wsgi_server(settings, loaded.framework)
        execution, slots = wsgi_execution(server.workers)
    endpoints = admitted([Endpoint(path, path, "app", execution, slots) for path in settings.paths()], server)
    info = build_info(settings, server, endpoints, monkey_patch() if loaded.interface == "wsgi" else None)
    info["app"] = {"module": settings.app, "interface": loaded.interface}
    return info
