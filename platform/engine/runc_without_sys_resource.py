#!/usr/bin/env python3
"""An OCI runtime for dockerd: runc, minus CAP_SYS_RESOURCE in every container it creates or execs.

Where the host's capability bounding set lacks CAP_SYS_RESOURCE (some CI sandboxes), runc cannot
grant it, and every `--privileged` container (a kind node, `docker exec --privileged`) fails with
"unable to apply caps: operation not permitted". platform/engine/docker-engine registers this
wrapper only there; it removes the capability from the spec and hands over to runc unchanged.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

CAPABILITY = "CAP_SYS_RESOURCE"
# runc's global options that take a value: the command is the first argument that is not one.
GLOBAL_OPTIONS_WITH_VALUE = {"--log", "--log-format", "--root", "--criu", "--rootless"}


def command_of(args: list[str]) -> str | None:
    """runc's subcommand (create, run, exec, ...) in its argument list."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in GLOBAL_OPTIONS_WITH_VALUE:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def option_value(args: list[str], *names: str) -> str | None:
    """The value of the first of these options (`--name value`, `--name=value`), if given."""
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                return args[index + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def without_capability(process: dict[str, Any]) -> dict[str, Any]:
    """The process spec with CAPABILITY removed from each of its capability sets."""
    capabilities = process.get("capabilities") or {}
    for name, values in capabilities.items():
        if isinstance(values, list):
            capabilities[name] = [value for value in values if value != CAPABILITY]
    return process


def spec_to_edit(args: list[str]) -> tuple[Path, str | None] | None:
    """The JSON file runc will read and where its process spec is in it (key, or None: the top)."""
    command = command_of(args)
    if command in {"create", "run"}:
        bundle = option_value(args, "--bundle", "-b") or os.getcwd()
        return Path(bundle) / "config.json", "process"
    if command == "exec":
        process_file = option_value(args, "--process", "-p")
        if process_file:
            return Path(process_file), None
    return None


def edit(path: Path, key: str | None) -> None:
    document = json.loads(path.read_text())
    if key is None:
        document = without_capability(document)
    elif key in document:
        document[key] = without_capability(document[key])
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document))
    partial.replace(path)


def main() -> None:
    args = sys.argv[1:]
    target = spec_to_edit(args)
    if target is not None and target[0].exists():
        edit(*target)
    os.execvp("runc", ["runc", *args])


if __name__ == "__main__":
    main()
