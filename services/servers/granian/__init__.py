"""granian (a Rust HTTP server): ASGI apps on each worker's event loop, WSGI apps on its blocking
threads (servers.granian.serving), behind the lab's limits on a request's head (servers.granian.heads)."""

from __future__ import annotations

from servers.granian.serving import other_servers_setting, serve_granian
from servers.granian.settings import GranianSettings
from workload.served_by import Interface

INTERFACES: tuple[Interface, ...] = ("asgi", "wsgi")


def refused(interface: Interface) -> str | None:
    return other_servers_setting(GranianSettings(interface=interface))


def serve(factory: str, interface: Interface, reload_dirs: list[str]) -> None:
    """Serve `factory`'s app with `interface` until stopped (granian's reloader is left out)."""
    serve_granian(GranianSettings(interface=interface), factory)
