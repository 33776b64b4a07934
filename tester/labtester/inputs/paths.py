"""The files and folders a command names: --values, --port, `report`'s run folder, --compare's run
and the output folder; and the app `lab --app` names, imported once."""

from __future__ import annotations

import json
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from labtester.applab import AppError, check_app
from labtester.inputs.errors import BadInput, reason
from labtester.rawlog import RAW_LOG
from labtester.report.compare import EarlierRun, load_earlier
from labtester.targets import (
    TargetDefinition,
    ValuesError,
    load_app_configurations,
    load_definitions,
    load_downstream,
)

if TYPE_CHECKING:
    from labtester.settings import LabSettings


def read_values(path: Path) -> tuple[list[TargetDefinition], TargetDefinition | None]:
    try:
        targets, downstream = load_definitions(path), load_downstream(path)
    except ValuesError as error:
        raise BadInput(f"--values {error}") from None
    if not any(t.measure for t in targets):
        raise BadInput(f"--values {path}: `targets` holds no measured target (measure: true)")
    names = [t.name for t in [*targets, *([downstream] if downstream else [])]]
    if len(set(names)) < len(names):
        raise BadInput(f"--values {path}: two servers share a name ({sorted(names)})")
    return targets, downstream


def read_app(settings: LabSettings, values: Path, named: str) -> list[TargetDefinition]:
    """The app's configurations, once `python -m serve team check` imported it and said its
    interface (asgi, wsgi); `named`: how the user gave the app (--app, TESTER_APP, a key)."""
    traffic = settings.app_traffic()
    assert settings.app is not None and traffic is not None
    try:
        interface = check_app(settings.app, traffic.routes())
    except AppError as error:
        said = str(error).removeprefix(f"LAB_APP={settings.app}:").strip()
        raise BadInput(f"{named} {settings.app}: {said}") from None
    configurations = load_app_configurations(values, interface)
    if not configurations:
        raise BadInput(
            f"--values {values}: no app configuration serves {interface} apps (app.configurations)"
        )
    return configurations


def read_ports(
    pairs: list[str], targets: list[TargetDefinition], downstream: TargetDefinition | None
) -> dict[str, int]:
    """Every server's local port (the values', then --port NAME=PORT), each distinct and free."""
    servers = [*(t for t in targets if t.measure), *([downstream] if downstream else [])]
    ports = {s.name: s.local_port for s in servers}
    for pair in pairs:
        name, _, number = pair.partition("=")
        if name not in ports:
            raise BadInput(
                f"--port {pair}: no measured target or downstream named {name!r} ({', '.join(ports)})"
            )
        if not (number.isascii() and number.isdigit() and 1 <= int(number) <= 65535):
            raise BadInput(f"--port {pair}: takes NAME=PORT with PORT in 1..65535")
        ports[name] = int(number)
    fixed = [port for port in ports.values() if port]
    for name, port in ports.items():
        if port and fixed.count(port) > 1:
            raise BadInput(f"--port: {port} is given to more than one server ({name} among them)")
        if port and _listening(port):
            raise BadInput(
                f"port {port} for {name} is already in use (a stale server? --port {name}=PORT moves it)"
            )
    return ports


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def read_run_folder(run_dir: Path) -> None:
    """`report`'s folder: a run's raw log, whose first record opens the run."""
    raw = run_dir / RAW_LOG
    if not run_dir.is_dir():
        raise BadInput(f"{run_dir}: no such folder")
    try:
        with raw.open(encoding="utf-8") as file:
            first = file.readline()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(
            f"{run_dir}: no run's folder: its {RAW_LOG} cannot be read ({reason(error)})"
        ) from None
    try:
        opened = json.loads(first).get("type") == "run_start"
    except (ValueError, AttributeError):
        opened = False
    if not opened:
        raise BadInput(f"{raw}: does not start with a run (empty, or not a lab's raw log)")


def read_earlier(directory: Path) -> EarlierRun:
    try:
        return load_earlier(directory)
    except ValueError as error:
        raise BadInput(f"--compare {error}") from None


def writable_folder(folder: Path, named: str) -> None:
    """Make the folder if need be and write a file in it: what a run will do at its end."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise BadInput(f"{named} {folder}: cannot write there ({reason(error)})") from None
