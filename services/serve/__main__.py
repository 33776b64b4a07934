"""`python -m serve APP [check | serve]`: the app APP (services/apps/APP) on the server LAB_SERVER
names (services/servers/<LAB_SERVER>; unset: uvicorn for an ASGI app, gunicorn for a WSGI app).

    python -m serve APP          check, then serve
    python -m serve APP check    check the app, its server and their settings, print one line of JSON
                                 {"interface", "framework"} and exit 0; or one line `error: ...`
                                 on stderr and exit 2
    python -m serve APP serve    serve without the check (what the first form runs after it)

Serving starts a fresh interpreter (exec, the same pid) with the server and the interface the
check found exported: the root imports nothing of an app it checked, and a gevent worker imports
the app only after gunicorn patched it.

An app's package offers FACTORIES (interface -> `module:function`, called once per worker),
RELOAD_DIRS and `check()`; a server's offers INTERFACES, `refused(interface)` and
`serve(factory, interface, reload_dirs)`. Both are found by their folder's name: a new one is a
folder, nothing here changes.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from workload.served_by import AppError, Interface

USAGE = "usage: python -m serve APP [check | serve]"
SERVICES = Path(__file__).resolve().parents[1]
# The server an app of each interface gets when LAB_SERVER names none.
DEFAULT_SERVERS: dict[Interface, str] = {"asgi": "uvicorn", "wsgi": "gunicorn"}
FOLDER_NAME = r"[a-z][a-z0-9_]*"  # an app's or a server's folder: a Python package's name


class ServeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LAB_", extra="ignore")

    server: str = Field(
        "",
        pattern=rf"^({FOLDER_NAME})?$",
        description="LAB_SERVER: a folder under services/servers/ (uvicorn, gunicorn, granian); default: "
        "uvicorn for an ASGI app, gunicorn for a WSGI app.",
    )
    interface: Interface | None = Field(
        None,
        description="LAB_INTERFACE: asgi or wsgi, as the check found the app; given, it may only confirm it.",
    )


def fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def settings_error(error: ValidationError) -> str:
    """The first bad LAB_* setting, in one line that names it."""
    first = error.errors()[0]
    return f"LAB_{str(first['loc'][0]).upper()}: {first['msg']}"


def folder_package(axis: str, name: str, knob: str) -> ModuleType:
    """services/<axis>/<name>, imported; one line naming the folders there when there is none."""
    if not (SERVICES / axis / name / "__init__.py").is_file():
        known = sorted(p.parent.name for p in (SERVICES / axis).glob("*/__init__.py"))
        fail(f"{knob}{name}: no folder services/{axis}/{name} (there are: {', '.join(known)})")
    return importlib.import_module(f"{axis}.{name}")


def checked(app: ModuleType, settings: ServeSettings) -> tuple[Interface, str, str]:
    """The app's interface and framework, and the server that serves it; else AppError."""
    with redirect_stdout(sys.stderr):  # what an app prints at import must not spoil check's line
        interface, framework, named = app.check()
    server_name = settings.server or DEFAULT_SERVERS[interface]
    server = folder_package("servers", server_name, "LAB_SERVER=")
    if interface not in server.INTERFACES:
        serves = " and ".join(i.upper() for i in server.INTERFACES)
        raise AppError(
            f"{named} is an {interface.upper()} app and LAB_SERVER={server_name} serves only {serves} apps: "
            f"use LAB_SERVER={DEFAULT_SERVERS[interface]} or another server of {interface.upper()} apps"
        )
    if settings.interface not in (None, interface):
        raise AppError(f"LAB_INTERFACE={settings.interface}: {named} is an {interface.upper()} app")
    try:
        refused = server.refused(interface)
    except ValidationError as error:
        raise AppError(f"{settings_error(error)}: {named} is served by {server_name} (LAB_SERVER)") from None
    if refused is not None:
        raise AppError(f"{refused}: {named} is served by {server_name} (LAB_SERVER)")
    return interface, framework, server_name


def serve(app: ModuleType, settings: ServeSettings) -> None:
    """Serve with the server and interface the check exported."""
    interface: Interface = settings.interface if settings.interface is not None else next(iter(app.FACTORIES))
    server = folder_package("servers", settings.server or DEFAULT_SERVERS[interface], "LAB_SERVER=")
    server.serve(app.FACTORIES[interface], interface, app.RELOAD_DIRS)


def main(argv: list[str]) -> None:
    if not argv or argv[1:] not in ([], ["check"], ["serve"]):
        fail(USAGE)
    name, command = argv[0], argv[1:]
    if re.fullmatch(FOLDER_NAME, name) is None:
        fail(f"{name}: an app is a folder name under services/apps/ ({USAGE})")
    app = folder_package("apps", name, "")
    try:
        settings = ServeSettings()
    except ValidationError as error:
        fail(settings_error(error))
    if command == ["serve"]:
        serve(app, settings)
        return
    try:
        interface, framework, server = checked(app, settings)
    except AppError as error:
        fail(str(error))
    if command == ["check"]:
        print(json.dumps({"interface": interface, "framework": framework}))
        return
    os.environ["LAB_SERVER"] = server
    os.environ["LAB_INTERFACE"] = interface
    os.execv(sys.executable, [sys.executable, "-m", "serve", name, "serve"])


if __name__ == "__main__":
    main(sys.argv[1:])
