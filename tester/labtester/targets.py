"""Target definitions, read from the one place that holds them: the chart's `targets` list, and
the server configurations a team's app is measured in (its `app.configurations`).

The tester itself knows a target only by name and URL; only the local launcher needs to know how
to start one, and it starts exactly what the chart deploys. The images the chart deploys derive
from the same entries (`image_builds`): a target family is a folder under services/ plus an entry.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VALUES = REPO_ROOT / "charts" / "concurrency-lab" / "values.yaml"
# Every Python target's image: one Dockerfile, told which module to run (build arg MODULE).
PYTHON_TARGET_DOCKERFILE = "services/Dockerfile"
TESTER_DOCKERFILE = "tester/Dockerfile"
# The family that serves a team's app by name (LAB_APP) in each of the app's configurations.
APP_TARGET_MODULE = "app_target"


@dataclass(frozen=True)
class TargetDefinition:
    name: str
    module: str
    local_port: int
    measure: bool = True
    env: dict[str, str] = field(default_factory=dict)
    image: str = ""  # repository; the tag is the chart's image.tag

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
        image=entry.get("image", ""),
    )


def load_definitions(values_path: Path = DEFAULT_VALUES) -> list[TargetDefinition]:
    values = yaml.safe_load(values_path.read_text())
    return [_definition(entry, bool(entry.get("measure", True))) for entry in values["targets"]]


def load_downstream(values_path: Path = DEFAULT_VALUES) -> TargetDefinition | None:
    """The mock downstream service the targets call (/test/downstream), if the values enable it."""
    entry = yaml.safe_load(values_path.read_text()).get("downstream") or {}
    return _definition(entry, measure=False) if entry.get("enabled") else None


def load_app_configurations(
    values_path: Path = DEFAULT_VALUES, interface: str | None = None
) -> list[TargetDefinition]:
    """The server configurations a team's app is compared in (`app.configurations`), those of
    `interface` (asgi, wsgi) where it is given; each is the app target family with its settings."""
    app = yaml.safe_load(values_path.read_text()).get("app") or {}
    return [
        _definition(
            {"module": APP_TARGET_MODULE, "image": app.get("image", ""), "localPort": 0, **entry}, True
        )
        for entry in app.get("configurations") or []
        if interface is None or entry.get("interface") == interface
    ]


@dataclass(frozen=True)
class ImageBuild:
    repository: str
    dockerfile: str  # relative to the repository root, which is the build context
    module: str | None  # the MODULE build argument of the shared Python target Dockerfile

    def line(self) -> str:
        return " ".join([self.repository, self.dockerfile, self.module or ""]).rstrip()


def image_builds(values_path: Path = DEFAULT_VALUES, root: Path = REPO_ROOT) -> list[ImageBuild]:
    """Every image the chart deploys, once each: the servers' (targets, the downstream mock, the app),
    each from its family's own services/<module>/Dockerfile if it has one, else from the shared
    Python one; then the tester's."""
    servers = [(server.image, server.module) for server in load_definitions(values_path)]
    downstream = load_downstream(values_path)
    if downstream is not None:
        servers.append((downstream.image, downstream.module))
    app = yaml.safe_load(values_path.read_text()).get("app") or {}
    if app.get("image"):  # the app's configurations all run app_target from the app's image
        servers.append((app["image"], APP_TARGET_MODULE))
    modules: dict[str, str] = {}
    for image, module in servers:
        if modules.setdefault(image, module) != module:
            raise ValueError(f"image {image} is named for both {modules[image]} and {module}")
    builds = []
    for repository, module in modules.items():
        own = Path("services", module, "Dockerfile")
        if (root / own).is_file():
            builds.append(ImageBuild(repository, str(own), None))
        else:
            builds.append(ImageBuild(repository, PYTHON_TARGET_DOCKERFILE, module))
    tester = (yaml.safe_load(values_path.read_text()).get("tester") or {}).get("image")
    if tester:
        builds.append(ImageBuild(tester, TESTER_DOCKERFILE, None))
    return builds
