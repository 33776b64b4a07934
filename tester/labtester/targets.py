"""Target definitions, read from the one place that holds them: the chart's `targets` list.

The tester itself knows a target only by name and URL; only the local launcher needs to know how
to start one, and it starts exactly what the chart deploys.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VALUES = REPO_ROOT / "charts" / "concurrency-lab" / "values.yaml"


@dataclass(frozen=True)
class TargetDefinition:
    name: str
    module: str
    local_port: int
    measure: bool = True
    env: dict[str, str] = field(default_factory=dict)

    def command(self, python: str = sys.executable) -> list[str]:
        """How the target is started: the same `python -m <module>` as the container's."""
        return [python, "-m", self.module]


def _definition(entry: dict[str, Any], measure: bool) -> TargetDefinition:
    return TargetDefinition(
        name=entry["name"],
        module=entry["module"],
        local_port=int(entry["localPort"]),
        measure=measure,
        env={key: str(value) for key, value in (entry.get("env") or {}).items()},
    )


def load_definitions(values_path: Path = DEFAULT_VALUES) -> list[TargetDefinition]:
    values = yaml.safe_load(values_path.read_text())
    return [_definition(entry, bool(entry.get("measure", True))) for entry in values["targets"]]


def load_downstream(values_path: Path = DEFAULT_VALUES) -> TargetDefinition | None:
    """The mock downstream service the targets call (/test/downstream), if the values enable it."""
    entry = yaml.safe_load(values_path.read_text()).get("downstream") or {}
    return _definition(entry, measure=False) if entry.get("enabled") else None
