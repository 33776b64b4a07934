"""Render the chart with the real helm binary (`make tools` installs it into $LAB_CACHE/bin)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from labtester.targets import DEFAULT_VALUES, REPO_ROOT, TargetDefinition, deployed_entries, load_definitions

CHART = REPO_ROOT / "charts" / "concurrency-lab"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
RELEASE = "lab"
NAMESPACE = "lab-test"

Manifest = dict[str, Any]
Render = Callable[..., list[Manifest]]


def tool(name: str, make_target: str) -> str:
    """A tool from PATH, where `make test` puts $LAB_CACHE/bin first (the Makefile is the one place
    that knows where tools are); a clear failure (never a skip) when it is missing."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(
            f"{name} is not on PATH: run `make {make_target}`; `make test` puts $LAB_CACHE/bin on PATH",
            pytrace=False,
        )
    return found


def helm_template(*args: str) -> subprocess.CompletedProcess[str]:
    command = [tool("helm", "tools"), "template", RELEASE, str(CHART), "--namespace", NAMESPACE, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def render_chart(
    *values_files: Path, set_values: tuple[str, ...] = (), set_string: tuple[str, ...] = ()
) -> list[Manifest]:
    """Every object the chart renders for these values, as dicts."""
    args = [arg for path in values_files for arg in ("--values", str(path))]
    args += [arg for value in set_values for arg in ("--set", value)]
    args += [arg for value in set_string for arg in ("--set-string", value)]
    result = helm_template(*args)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def find(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    matches = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind} {name}, found {len(matches)}"
    return matches[0]


def pod_specs(manifests: list[Manifest]) -> dict[str, Manifest]:
    """Pod spec of every workload (Deployment, Job), by '<kind>/<name>'."""
    return {
        f"{m['kind']}/{m['metadata']['name']}": m["spec"]["template"]["spec"]
        for m in manifests
        if m["kind"] in ("Deployment", "Job")
    }


@pytest.fixture(scope="session")
def render() -> Render:
    return render_chart


@pytest.fixture(scope="session")
def default_manifests() -> list[Manifest]:
    return render_chart()


# What the chart names each object for release "lab": "<release>-<chart>-<component>".
PREFIX = f"{RELEASE}-concurrency-lab"


def profile_values(values: Path = DEFAULT_VALUES) -> dict[str, Any]:
    """The top-level values a file sets over the defaults: right for lists (`targets`,
    `omitTargets`), which Helm replaces whole; not for maps, which it merges key by key."""
    defaults = yaml.safe_load(DEFAULT_VALUES.read_text())
    return {**defaults, **(yaml.safe_load(values.read_text()) or {})}


def deployed_names(values: Path = DEFAULT_VALUES) -> set[str]:
    """The targets a values file deploys (all but its `omitTargets`)."""
    return {entry["name"] for entry in deployed_entries(profile_values(values))}


def deployed_definitions(values: Path = DEFAULT_VALUES) -> list[TargetDefinition]:
    """The launcher's definitions of the targets these values deploy (an overlay without its own
    list deploys from the defaults')."""
    own = "targets" in (yaml.safe_load(values.read_text()) or {})
    names = deployed_names(values)
    return [d for d in load_definitions(values if own else DEFAULT_VALUES) if d.name in names]
