"""`python -m app_target`: check the app (LAB_APP), then serve it with the server of its interface.

    python -m app_target          check, then serve: with LAB_SERVER's server (granian serves both
                                  interfaces), else uvicorn for an ASGI app, gunicorn for a WSGI app
    python -m app_target check    import the app, print one line of JSON {"interface", "framework"}
                                  and exit 0; or one line `error: ...` on stderr and exit 2
    python -m app_target serve    serve without the check (what the first form runs after it)

Serving starts a fresh interpreter (exec, the same pid): the root imports nothing of the app, and
a gevent worker imports it only after gunicorn patched it.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import redirect_stdout
from pathlib import Path

from pydantic import ValidationError

from app_target.loading import AppError, LoadedApp, load_app
from app_target.settings import SERVERS, SERVES, AppSettings, Interface, Server
from granian_target.serving import other_servers_setting, serve_granian
from granian_target.settings import GranianSettings
from workload.serving import exec_gunicorn, serve_uvicorn

USAGE = "usage: python -m app_target [check | serve]"
# The app factory each interface's server calls once per worker.
FACTORIES: dict[Interface, str] = {"asgi": "app_target.asgi:create_app", "wsgi": "app_target.wsgi:create_app"}


def server_of(settings: AppSettings, interface: Interface) -> Server:
    return settings.server or SERVERS[interface]


def checked(settings: AppSettings) -> LoadedApp:
    """The app, imported and recognised, and served by a server of its interface; else AppError."""
    with redirect_stdout(sys.stderr):  # what the app prints at import must not spoil check's line
        loaded = load_app(settings.app)
    server = server_of(settings, loaded.interface)
    if loaded.interface not in SERVES[server]:
        raise AppError(
            f"LAB_APP={settings.app} is an {loaded.interface.upper()} app and LAB_SERVER={settings.server} "
            f"serves only {'WSGI' if loaded.interface == 'asgi' else 'ASGI'} apps: use "
            f"LAB_SERVER={SERVERS[loaded.interface]} or granian"
        )
    if settings.interface not in (None, loaded.interface):
        raise AppError(
            f"LAB_INTERFACE={settings.interface}: LAB_APP={settings.app} is an {loaded.interface.upper()} app"
        )
    if server == "granian":
        refused = other_servers_setting(GranianSettings(interface=loaded.interface))
        if refused is not None:
            raise AppError(f"{refused}: LAB_APP={settings.app} is served by granian (LAB_SERVER)")
    if server == "uvicorn" and settings.worker_class != "sync":
        raise AppError(
            f"LAB_WORKER_CLASS={settings.worker_class} is a gunicorn worker class, and "
            f"LAB_APP={settings.app} is an ASGI app, served by uvicorn"
        )
    if settings.max_in_flight is not None:
        raise AppError(
            f"LAB_MAX_IN_FLIGHT={settings.max_in_flight}: app_target does not limit the requests in flight "
            f"of LAB_APP={settings.app}"
        )
    return loaded


def serve(settings: AppSettings) -> None:
    """Serve with the server and interface `main` exported after the check."""
    interface: Interface = settings.interface or ("wsgi" if settings.server == "gunicorn" else "asgi")
    server = server_of(settings, interface)
    if server == "granian":
        serve_granian(GranianSettings(interface=interface), FACTORIES[interface])
    elif server == "uvicorn":
        serve_uvicorn(FACTORIES["asgi"], reload_dirs=[str(Path.cwd())])
    else:
        exec_gunicorn(f"{FACTORIES['wsgi']}()")


def fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str]) -> None:
    if argv not in ([], ["check"], ["serve"]):
        fail(USAGE)
    try:
        settings = AppSettings()
    except ValidationError as error:
        first = error.errors()[0]
        fail(f"LAB_{str(first['loc'][0]).upper()}: {first['msg']}")
    if argv == ["serve"]:
        serve(settings)
        return
    try:
        loaded = checked(settings)
    except AppError as error:
        fail(str(error))
    if argv == ["check"]:
        print(json.dumps({"interface": loaded.interface, "framework": loaded.framework}))
        return
    os.environ["LAB_SERVER"] = server_of(settings, loaded.interface)
    os.environ["LAB_INTERFACE"] = loaded.interface
    os.execv(sys.executable, [sys.executable, "-m", "app_target", "serve"])


if __name__ == "__main__":
    main(sys.argv[1:])
