"""uvicorn: ASGI apps, one event loop per worker process, behind the lab's limits on a request's
head (servers.uvicorn.protocol)."""

from __future__ import annotations

from servers.uvicorn.serving import serve_uvicorn
from servers.uvicorn.settings import UvicornSettings, other_servers_setting
from workload.served_by import Interface

INTERFACES: tuple[Interface, ...] = ("asgi",)


def refused(interface: Interface) -> str | None:
    """A gunicorn worker class; a bad value of its own settings raises ValidationError here."""
    UvicornSettings()
    return other_servers_setting()


def serve(factory: str, interface: Interface, reload_dirs: list[str]) -> None:
    """Serve `factory`'s app until stopped; LAB_RELOAD watches `reload_dirs`."""
    serve_uvicorn(factory, reload_dirs)
