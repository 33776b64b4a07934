"""uvicorn's app factory (`app_target.asgi:create_app`, called once per worker, through
workload.serving.served_app, which ties the worker's life to the root's): the team's ASGI app
behind the control paths, each request measured (measure.asgi_cpu)."""

from __future__ import annotations

from app_target.control import AsgiControl, ControlPaths
from app_target.info import app_info
from app_target.loading import load_app
from app_target.settings import AppSettings
from measure.asgi_cpu import AsgiCpuMiddleware


def create_app() -> AsgiCpuMiddleware:
    settings = AppSettings()
    loaded = load_app(settings.app)
    control = ControlPaths(app_info(settings, loaded), settings.reload)
    return AsgiCpuMiddleware(AsgiControl(loaded.app, control), settings.paths())
