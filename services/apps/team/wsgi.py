"""gunicorn's app (`apps.team.wsgi:create_app()`, called once per worker): the team's WSGI app
behind the control paths, each request measured (measure.wsgi_cpu).

gunicorn loads it in each worker after the fork, and a gevent worker after it monkey-patched
itself: the team's app is imported here, never in the arbiter.
"""

from __future__ import annotations

import sys

from apps.team.control import ControlPaths, WsgiControl
from apps.team.info import app_info
from apps.team.loading import load_app
from apps.team.settings import AppSettings
from measure.servertiming import hint_flask_routes
from measure.wsgi_cpu import WsgiCpuMiddleware


def create_app() -> WsgiCpuMiddleware:
    settings = AppSettings()
    loaded = load_app(settings.app)
    flask = sys.modules.get("flask")
    if flask is not None and isinstance(loaded.app, flask.Flask):
        hint_flask_routes(loaded.app)  # its route templates label the metrics
    control = ControlPaths(app_info(settings, loaded), settings.reload)
    return WsgiCpuMiddleware(WsgiControl(loaded.app, control), settings.paths())
