"""The chart as Helm and Kubernetes see it: lint, strict schemas, and values typos refused."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.chart.conftest import CHART, CI_VALUES, Render, helm_template, tool

KUBERNETES_VERSION = "1.31.0"
SCENARIOS = [None, *CI_VALUES]


def scenario_id(values: Path | None) -> str:
    return "default" if values is None else values.name


def test_there_are_ci_scenarios() -> None:
    assert len(CI_VALUES) >= 3, "ci/*-values.yaml scenarios went missing"


@pytest.mark.parametrize("values", SCENARIOS, ids=scenario_id)
def test_helm_lint_strict(values: Path | None) -> None:
    command = [tool("helm", "tools"), "lint", "--strict", str(CHART)]
    if values is not None:
        command += ["--values", str(values)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("values", SCENARIOS, ids=scenario_id)
def test_manifests_match_kubernetes_schemas_strictly(render: Render, values: Path | None) -> None:
    manifests = render() if values is None else render(values)
    assert manifests
    for manifest in manifests:
        # Raises on an unknown field (strict), a wrong type, or a kind with no schema at all.
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)


def test_strict_validation_catches_a_misplaced_field(render: Render) -> None:
    deployment = next(m for m in render() if m["kind"] == "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFileSystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def values_file(tmp_path: Path, change: Callable[[dict[str, Any]], object]) -> Path:
    """The default values with one change, as a values file (lists cannot be patched with --set)."""
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    change(values)
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


BAD_VALUES: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "unknown tester key": (lambda v: v["tester"].update(burstMaximum=5), "burstMaximum"),
    "unknown nested key": (lambda v: v["targetDefaults"]["resources"].update(cpus="2"), "cpus"),
    "unknown target key": (lambda v: v["targets"][0].update(enviroment={}), "enviroment"),
    "env the chart sets": (lambda v: v["targets"][0]["env"].update(LAB_PORT="9000"), "LAB_PORT"),
    "metrics port by hand": (
        lambda v: v["targets"][0]["env"].update(LAB_METRICS_PORT="9000"),
        "LAB_METRICS_PORT",
    ),
    "unknown resources key": (lambda v: v["targetDefaults"]["resources"].update(cpuLimit="1"), "cpuLimit"),
    "a node size in words": (lambda v: v["fits"].update(cpu="four"), "/fits/cpu"),
    "a numeric image tag": (
        lambda v: v["image"]["tags"].update({"concurrency-lab/tester": 1e10}),
        "/image/tags",
    ),
    "not a NodePort": (lambda v: v["grafana"].update(nodePort=3000), "/grafana/nodePort"),
    "not a DNS label": (lambda v: v["targets"][0].update(name="FastAPI"), "/targets/0/name"),
}


@pytest.mark.parametrize("case", BAD_VALUES, ids=str)
def test_schema_rejects_bad_values(tmp_path: Path, case: str) -> None:
    change, culprit = BAD_VALUES[case]
    result = helm_template("--values", str(values_file(tmp_path, change)))
    assert result.returncode != 0
    assert "schema" in result.stderr and culprit in result.stderr, result.stderr


def test_duplicate_target_names_are_refused(tmp_path: Path) -> None:
    result = helm_template(
        "--values", str(values_file(tmp_path, lambda v: v["targets"][1].update(name="fastapi")))
    )
    assert result.returncode != 0
    assert 'the name "fastapi" is used twice' in result.stderr, result.stderr
