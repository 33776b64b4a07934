"""Target definitions, read from the one place that holds them: the chart's `targets` list, and
the server configurations a team's app is measured in (its `app.configurations`).

The tester itself knows a target only by name and URL; only the local launcher needs to know how
to start one, and it starts exactly what the chart deploys: `python -m serve <app>` on
LAB_SERVER=<server>. The images the chart deploys derive from the same entries (`image_builds`). A
new server is a folder under services/servers/ plus an entry; a new app, a folder under
services/apps/ plus an entry.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from labtester.yamlfile import read_mapping

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VALUES = REPO_ROOT / "charts" / "concurrency-lab" / "values.yaml"
# Every Python target's image: one Dockerfile, holding every server and app (`python -m serve`).
PYTHON_TARGET_DOCKERFILE = "services/Dockerfile"
TESTER_DOCKERFILE = "tester/Dockerfile"
# Every target's one entrypoint, and the app that serves a team's app by name (LAB_APP).
ENTRYPOINT = "serve"
TEAM_APP = "team"
SERVER_ENV = "LAB_SERVER"
# The chart deploys each of app.configurations as the target app-<name> (concurrency-lab.appServers).
DEPLOYED_APP_PREFIX = "app-"


@dataclass(frozen=True)
class TargetDefinition:
    name: str
    app: str  # a folder under services/apps/
    local_port: int
    measure: bool = True
    env: dict[str, str] = field(default_factory=dict)  # LAB_SERVER among them: the server
    image: str = ""  # repository; the tag is the chart's image.tag

    @property
    def server(self) -> str:
        """The server's folder under services/servers/; "" for the app's interface's default."""
        return self.env.get(SERVER_ENV, "")

    def command(self, python: str = sys.executable) -> list[str]:
        """How the target is started: the same `python -m serve <app>` as the container's."""
        return [python, "-m", ENTRYPOINT, self.app]

    def shown(self) -> str:
        on = f" on {self.server}" if self.server else ""
        return f"python -m {ENTRYPOINT} {self.app}{on}"


class ValuesError(ValueError):
    """A values file the lab cannot start targets from: its path, the entry and the reason."""


class _ServerEntry(BaseModel):
    """What the lab reads of a `targets` (or `downstream`) entry; the chart's schema checks the rest."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=30)
    server: str = Field("", pattern=r"^([a-z][a-z0-9_]*)?$")  # a folder under services/servers/
    app: str = Field(pattern=r"^[a-z][a-z0-9_]*$")  # a folder under services/apps/
    localPort: int = Field(ge=0, le=65535)  # the chart's key; 0: a free port
    measure: bool = True
    env: dict[str, str | int | float | bool] | None = None
    image: str = ""


def _values(values_path: Path) -> dict[str, Any]:
    try:
        return read_mapping(values_path)
    except ValueError as error:
        raise ValuesError(str(error)) from None


def _definition(values_path: Path, where: str, entry: Any, measure: bool | None) -> TargetDefinition:
    try:
        parsed = _ServerEntry.model_validate(entry)
    except ValidationError as error:
        first = error.errors()[0]
        field_name = ".".join(str(part) for part in first["loc"])
        named = f" ({entry['name']})" if isinstance(entry, dict) and "name" in entry else ""
        reason = f"{field_name}: {first['msg']}" if field_name else first["msg"]
        raise ValuesError(f"{values_path}: {where}{named}: {reason}") from None
    env = {key: str(value) for key, value in (parsed.env or {}).items()}
    if parsed.server:
        if env.get(SERVER_ENV, parsed.server) != parsed.server:
            raise ValuesError(
                f"{values_path}: {where} ({parsed.name}): server {parsed.server} and {SERVER_ENV} differ"
            )
        env = {SERVER_ENV: parsed.server, **env}
    return TargetDefinition(
        name=parsed.name,
        app=parsed.app,
        local_port=parsed.localPort,
        measure=parsed.measure if measure is None else measure,
        env=env,
        image=parsed.image,
    )


def load_definitions(values_path: Path = DEFAULT_VALUES) -> list[TargetDefinition]:
    """The values' `targets`, each checked; a missing or malformed one raises ValuesError."""
    entries = _values(values_path).get("targets")
    if not isinstance(entries, list):
        raise ValuesError(f"{values_path}: has no `targets` list (got {entries!r})")
    return [_definition(values_path, f"targets[{i}]", entry, None) for i, entry in enumerate(entries)]


def deployed_entries(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The `targets` entries a cluster with these values deploys: all but those `omitTargets` names
    (its node has no room for them), and none with `app.enabled` (an app lab measures the app), as
    the chart's `deployedTargets` helper renders them. The local lab starts every entry."""
    if (values.get("app") or {}).get("enabled"):
        return []
    omitted = set(values.get("omitTargets") or [])
    return [entry for entry in values["targets"] if entry["name"] not in omitted]


def load_downstream(values_path: Path = DEFAULT_VALUES) -> TargetDefinition | None:
    """The mock downstream service the targets call (/test/downstream), if the values enable it."""
    entry = _values(values_path).get("downstream") or {}
    if not isinstance(entry, dict):
        raise ValuesError(f"{values_path}: `downstream` must be a mapping, not {entry!r}")
    return _definition(values_path, "downstream", entry, measure=False) if entry.get("enabled") else None


def load_app_configurations(
    values_path: Path = DEFAULT_VALUES, interface: str | None = None
) -> list[TargetDefinition]:
    """The server configurations a team's app is compared in (`app.configurations`), those of
    `interface` (asgi, wsgi) where it is given; each is the app `team` on its LAB_SERVER with its settings."""
    app = _values(values_path).get("app") or {}
    if not isinstance(app, dict) or not isinstance(app.get("configurations") or [], list):
        raise ValuesError(f"{values_path}: `app.configurations` must be a list of configurations")
    defaults = {"app": TEAM_APP, "image": app.get("image", ""), "localPort": 0}
    return [
        _definition(values_path, f"app.configurations[{i}]", {**defaults, **entry}, True)
        for i, entry in enumerate(app.get("configurations") or [])
        if isinstance(entry, dict) and (interface is None or entry.get("interface") == interface)
    ]


@dataclass(frozen=True)
class ImageBuild:
    repository: str
    dockerfile: str  # relative to the repository root, which is the build context

    def line(self) -> str:
        return f"{self.repository} {self.dockerfile}"


def image_builds(values_path: Path = DEFAULT_VALUES) -> list[ImageBuild]:
    """Every image the chart deploys, once each: the servers' (targets, the downstream mock, the
    app), each built from the one Python Dockerfile, which holds every server and app; then the
    tester's."""
    repositories = [definition.image for definition in load_definitions(values_path)]
    downstream = load_downstream(values_path)
    if downstream is not None:
        repositories.append(downstream.image)
    app = _values(values_path).get("app") or {}
    if isinstance(app, dict) and app.get("image"):
        repositories.append(app["image"])
    builds = [ImageBuild(repository, PYTHON_TARGET_DOCKERFILE) for repository in dict.fromkeys(repositories)]
    tester = (_values(values_path).get("tester") or {}).get("image")
    if tester:
        builds.append(ImageBuild(tester, TESTER_DOCKERFILE))
    return builds
