"""The tester's settings, from --config, TESTER_* variables and flags: read with the one settings
model, and every error named as the user gave it (the flag, the variable, or the key and file)."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_settings import SettingsError

from labtester.inputs.errors import BadInput, message
from labtester.scenarios import TesterSettings
from labtester.settings import LabSettings
from labtester.yamlfile import read_mapping

# The knobs a flag can set (settings field: flag); each flag's help shows the one default.
LAB_FLAGS = {
    "work_seconds": "--work-seconds",
    "burst_max": "--burst-max",
    "repeats": "--repeats",
    "scenarios": "--scenarios",
    "clients": "--clients",
    "output_dir": "--output",
    "app": "--app",
    "paths": "--paths",
    "traffic": "--traffic",
    "cores": "--cores",
    "memory": "--memory",
    "p99": "--p99",
    "target_rate": "--rate",
}
# Flags only the commands that measure a team's app take (`lab` starts it, `run` is told of it).
APP_FLAGS = ("app", "paths", "traffic", "cores", "memory", "p99", "target_rate")


def read_config(path: Path | None) -> dict[str, Any]:
    try:
        return read_mapping(path) if path is not None else {}
    except ValueError as error:
        raise BadInput(f"--config {error}") from None


@dataclass
class Sources:
    """How each setting the user gave is named in an error: its flag, its variable, or its key
    and file (flags win over variables, variables over the file, as in the settings)."""

    names: dict[str, str] = field(default_factory=dict)

    def name(self, loc: tuple[int | str, ...]) -> str:
        if not loc:
            return "settings"
        dotted = ".".join(str(part) for part in loc)
        source = self.names.get(str(loc[0]), dotted)
        if source.startswith("TESTER_"):
            return _variable(loc)
        return source.replace(f"{loc[0]} in ", f"{dotted} in ", 1)


def read_settings(args: argparse.Namespace, local: bool) -> tuple[LabSettings, Sources]:
    """The settings from --config, TESTER_* variables and flags; `local`: the command starts the
    targets of --values itself, so no other source may name targets."""
    from_file = read_config(args.config)
    flags = {name: getattr(args, name) for name in LAB_FLAGS if getattr(args, name, None) is not None}
    check_variable_names()
    try:
        from_env = TesterSettings.from_environment()
    except SettingsError as error:
        raise BadInput(_unparsed_variable(error)) from None
    except ValidationError as error:
        raise BadInput(_describe(error, _variable)) from None
    sources = Sources({name: f"{name} in {args.config}" for name in from_file})
    sources.names |= {name: _variable((name,)) for name in from_env}
    sources.names |= {name: LAB_FLAGS[name] for name in flags}
    try:
        settings = TesterSettings.merged(from_file, from_env, flags)
    except ValidationError as error:
        raise BadInput(_describe(error, sources.name)) from None
    named = [sources.names[name] for name in ("targets", "census_only") if name in sources.names]
    if local and named:
        raise BadInput(
            f"{named[0]}: `{args.command}` starts the targets of --values itself; this is for `run`"
        )
    if settings.clients > 1 and settings.barrier and settings.barrier_token is None:
        raise BadInput(
            "TESTER_BARRIER: clients meeting at a barrier need the run's token (TESTER_BARRIER_TOKEN)"
        )
    if not local and not settings.targets and settings.client_index == 0:  # the others: client 0's
        raise BadInput("no targets: set TESTER_TARGETS=NAME=URL,... (or use `lab`, which starts them)")
    return settings, sources


def check_variable_names() -> None:
    known = TesterSettings.variable_names()
    for variable in sorted(k.upper() for k in os.environ if k.upper().startswith("TESTER_")):
        if variable not in known:
            close = difflib.get_close_matches(variable, known, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise BadInput(f"{variable}: no such setting{hint}")


def _variable(loc: tuple[int | str, ...]) -> str:
    keys = [str(part).upper() for part in loc if isinstance(part, str)][:2]
    return "TESTER_" + "__".join(keys)


def _describe(error: ValidationError, name: Callable[[tuple[int | str, ...]], str]) -> str:
    return "; ".join(f"{name(tuple(p['loc']))}: {message(p)}" for p in error.errors())


def _unparsed_variable(error: SettingsError) -> str:
    """pydantic-settings names the field whose variable is not JSON; name the variable itself."""
    found = re.search(r'field "(\w+)"', str(error))
    prefix = f"TESTER_{found.group(1).upper()}" if found else "TESTER_"
    for variable, value in os.environ.items():
        if variable.upper().startswith(prefix):
            try:
                json.loads(value)
            except ValueError as problem:
                return f"{variable.upper()}: not JSON ({problem}; got {value!r})"
    return f"{prefix}: {error}"
