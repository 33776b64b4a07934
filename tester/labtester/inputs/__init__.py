"""Every input of a command, read and checked before anything starts.

The flags, the --config file, the TESTER_* variables, --values, --port, --compare, --output,
`report`'s run folder and the traffic's environment are all checked here, before any target,
process or measurement starts. A bad one raises BadInput: one line naming it (the flag, the
variable, or the key and its file) and the reason; `__main__` prints it and exits 2. Nothing here
imports what measures or draws, so the answer comes within a second (0.6 s of CPU here: Python,
pydantic and the settings' imports).

A new flag is either a settings field (add it to LAB_FLAGS: the settings model checks it and the
error names the flag) or a path or file, checked by one more line in `check`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labtester.inputs.bench import app_settings, check_bench
from labtester.inputs.errors import BadInput
from labtester.inputs.paths import (
    read_app,
    read_earlier,
    read_ports,
    read_run_folder,
    read_values,
    writable_folder,
)
from labtester.inputs.settings import APP_FLAGS, LAB_FLAGS, read_settings
from labtester.inputs.traffic import check_environment
from labtester.scenarios.sizing import SHAPE as SIZING
from labtester.settings import LabSettings
from labtester.targets import TargetDefinition
from labtester.yamlfile import read_mapping

if TYPE_CHECKING:
    from labtester.report.compare import EarlierRun

__all__ = ["APP_FLAGS", "LAB_FLAGS", "BadInput", "Inputs", "check"]


@dataclass
class Inputs:
    """What a command starts from, checked."""

    settings: LabSettings | None = None
    targets: list[TargetDefinition] = field(default_factory=list)  # the values' `targets`
    downstream: TargetDefinition | None = None
    ports: dict[str, int] = field(default_factory=dict)  # `targets`: every server's local port
    earlier: EarlierRun | None = None  # --compare's run
    # lab --app: the app's; bench: those of the app it holds the model to (inputs/bench.py)
    app_configurations: list[TargetDefinition] = field(default_factory=list)
    values: Path | None = None  # --values (lab --app: where sizing finds the families)


def check(args: argparse.Namespace) -> Inputs:
    """Every input the command was given, in the order a user reads them; the output folder
    last, as checking it makes it."""
    inputs = Inputs()
    if "values" in args:
        inputs.targets, inputs.downstream = read_values(args.values)
        inputs.values = args.values
    if "config" in args:
        inputs.settings, sources = read_settings(args, local="values" in args)
    if inputs.settings is not None and inputs.settings.traffic is not None:
        check_environment(inputs.settings.traffic, sources.name(("traffic",)))
    if inputs.settings is not None and (values := SIZING.settings(inputs.settings).values) is not None:
        try:  # the chart's values, mounted: read once every configuration was measured
            read_mapping(values)
        except ValueError as error:
            raise BadInput(f"{sources.name(('sizing', 'values'))}: {error}") from None
    if args.command == "lab" and inputs.settings is not None and inputs.settings.app:
        inputs.app_configurations = read_app(inputs.settings, args.values, sources.name(("app",)))
    if "port" in args:
        inputs.ports = read_ports(args.port, inputs.targets, inputs.downstream)
    if "run_dir" in args:
        read_run_folder(args.run_dir)
    if getattr(args, "compare", None) is not None:
        inputs.earlier = read_earlier(args.compare)
    if args.command == "bench" and inputs.settings is not None:
        _reword(check_bench, inputs.targets)
        inputs.app_configurations = read_app(app_settings(inputs.settings), args.values, "bench's app")
    if inputs.settings is not None:
        writable_folder(inputs.settings.output_dir, sources.name(("output_dir",)))
    if "run_dir" in args:
        writable_folder(args.run_dir, "report")
    return inputs


def _reword(check_one: Callable[..., object], *arguments: Any) -> None:
    try:
        check_one(*arguments)
    except (ValueError, OSError) as error:
        raise BadInput(str(error)) from None
