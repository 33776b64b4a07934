"""The committed dashboard and its generator, for the dashboard tests."""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType
from typing import Any

from tests.chart.conftest import CHART

DASHBOARD_JSON = CHART / "dashboards" / "lab.json"
GENERATOR = CHART / "dashboards" / "build.py"


def load_generator() -> ModuleType:
    """dashboards/build.py is a script next to the chart, not a package: load it by path."""
    spec = importlib.util.spec_from_file_location("lab_dashboard_build", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def committed() -> dict[str, Any]:
    return json.loads(DASHBOARD_JSON.read_text())


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel with queries (rows hold none)."""
    return [panel for panel in dashboard["panels"] if panel["type"] != "row"]


def expressions(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in panels(dashboard) for target in panel["targets"]]
