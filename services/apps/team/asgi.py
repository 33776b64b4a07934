"""uvicorn's app factory (`apps.team.asgi:create_app`, called once per worker, through
servers.uvicorn.serving.served_app, which ties the worker's life to the root's): the team's ASGI app
behind the control paths, each request measured (measure.asgi_cpu)."""

from __future__ import annotations

from apps.team.control import AsgiControl, ControlPaths
from apps.team.info import app_info
from apps.team.loading import load_app
from apps.team.settings import AppSettings
from measure.asgi_cpu import AsgiCpuMiddleware


def create_app() -> AsgiCpuMiddleware:
    settings = AppSettings()
    loaded = load_app(settings.app)
    control = ControlPaths(app_info(settings, loaded), settings.reload)
    return AsgiCpuMiddleware(AsgiControl(loaded.app, control), settings.paths())
