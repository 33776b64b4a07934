"""gunicorn: WSGI apps, in sync, gthread or gevent workers forked by an arbiter (servers.gunicorn.conf
configures it from the LAB_* environment)."""

from __future__ import annotations

from servers.gunicorn.serving import exec_gunicorn
from servers.gunicorn.settings import GunicornSettings
from workload.served_by import Interface

INTERFACES: tuple[Interface, ...] = ("wsgi",)


def refused(interface: Interface) -> str | None:
    """gunicorn takes every target's settings and its own (a bad value raises ValidationError
    here, before the exec): it refuses no other server's."""
    GunicornSettings()
    return None


def serve(factory: str, interface: Interface, reload_dirs: list[str]) -> None:
    """Replace this process with gunicorn; each worker calls `factory` (`module:function`) once.
    gunicorn's reloader watches every module the worker imported (reload_dirs unused)."""
    exec_gunicorn(f"{factory}()")
