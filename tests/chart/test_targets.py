"""Each values entry renders a complete target: the launcher's command, its env, its CPU quota."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from labtester.targets import DEFAULT_VALUES, TargetDefinition, load_definitions, load_downstream
from tests.chart.conftest import CHART, PREFIX, Manifest, Render, deployed_definitions, deployed_names, find
from workload.settings import TargetSettings

FOURTH_TARGET = CHART / "ci" / "fourth-target-values.yaml"
SMALL = CHART / "ci" / "small-values.yaml"


def cpus(quantity: str) -> float:
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def container_env(container: Manifest) -> dict[str, str]:
    return {item["name"]: item["value"] for item in container["env"]}


def target_container(manifests: list[Manifest], name: str) -> Manifest:
    deployment = find(manifests, "Deployment", f"{PREFIX}-{name}")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def workers_in_pod(definition: TargetDefinition, container: Manifest) -> int:
    """Workers the target's own settings code resolves inside this container's CPU quota."""
    env = container_env(container)
    settings = TargetSettings(
        **{key.removeprefix("LAB_").lower(): value for key, value in env.items() if key.startswith("LAB_")},
        # A CPU quota counts as that many cores, rounded up (workload.cores).
        cpu_cores=math.ceil(cpus(container["resources"]["limits"]["cpu"])),
    )
    # Every values entry states LAB_WORKERS or LAB_WORKER_MULTIPLIER (a test below holds it to
    # that), so no family's own default (uvicorn 1 worker, gunicorn 1 x cores) comes into it.
    return settings.resolved_workers(default_multiplier=None)


SCENARIOS = {"default": DEFAULT_VALUES, "fourth target": FOURTH_TARGET, "small": SMALL}


# The local lab's targets that the default profile deploys (its node lacks room for the others).
DEFAULT_DEPLOYED = deployed_definitions(DEFAULT_VALUES)
CASES = [
    pytest.param(values, definition, id=f"{scenario}:{definition.name}")
    for scenario, values in SCENARIOS.items()
    for definition in deployed_definitions(values)
]


@pytest.mark.parametrize(("values", "definition"), CASES)
def test_target_renders_the_launchers_server(
    render: Render, values: Path, definition: TargetDefinition
) -> None:
    manifests = render() if values == DEFAULT_VALUES else render(values)
    deployment = find(manifests, "Deployment", f"{PREFIX}-{definition.name}")
    service = find(manifests, "Service", f"{PREFIX}-{definition.name}")
    pod = deployment["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    env = container_env(container)

    assert container["command"] == definition.command(python="python")
    assert env.items() >= definition.env.items()
    assert env["LAB_NAME"] == definition.name
    assert env["LAB_HOST"] == "0.0.0.0"
    assert env["PROMETHEUS_MULTIPROC_DIR"].startswith("/tmp/")
    assert {"mountPath": "/tmp", "name": "tmp"} in container["volumeMounts"]

    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"http": int(env["LAB_PORT"]), "metrics": int(env["LAB_METRICS_PORT"])}
    assert service["spec"]["ports"] == [
        {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"},
        {"name": "metrics", "port": 9100, "targetPort": "metrics", "protocol": "TCP"},
    ]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert pod["metadata"]["labels"].items() >= service["spec"]["selector"].items()
    assert deployment["metadata"]["annotations"]["concurrency-lab/measure"] == str(definition.measure).lower()

    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}


def deployments(manifests: list[Manifest]) -> set[str]:
    return {
        m["metadata"]["name"].removeprefix(f"{PREFIX}-")
        for m in manifests
        if m["kind"] == "Deployment" and m["metadata"]["labels"]["app.kubernetes.io/component"] == "target"
    }


@pytest.mark.parametrize("values", [DEFAULT_VALUES, SMALL], ids=lambda path: path.name)
def test_a_profile_deploys_the_local_labs_targets_but_those_it_omits(render: Render, values: Path) -> None:
    omitted = set(yaml.safe_load(values.read_text()).get("omitTargets") or [])
    local = {definition.name for definition in load_definitions()}
    assert deployments(render(values)) == local - omitted == deployed_names(values)
    # The tester measures what is deployed, no more.
    (tester,) = find(render(values), "Job", f"{PREFIX}-tester")["spec"]["template"]["spec"]["containers"]
    refs = [
        ref
        for key in ("TESTER_TARGETS", "TESTER_CENSUS_ONLY")
        for ref in container_env(tester)[key].split(",")
    ]
    assert {ref.split("=")[0] for ref in refs if ref} == local - omitted


def promised_workers(definition: TargetDefinition) -> int:
    """What the values entry states: LAB_WORKERS, or LAB_WORKER_MULTIPLIER x its CPUs (rounded up)."""
    if "LAB_WORKERS" in definition.env:
        return int(definition.env["LAB_WORKERS"])
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    (entry,) = [entry for entry in values["targets"] if entry["name"] == definition.name]
    cpu = (entry.get("resources") or values["targetDefaults"]["resources"])["cpu"]
    return int(definition.env["LAB_WORKER_MULTIPLIER"]) * math.ceil(cpus(str(cpu)))


def test_workers_follow_the_multiplier_and_the_cpu_quota(default_manifests: list[Manifest]) -> None:
    for definition in load_definitions():
        assert {"LAB_WORKERS", "LAB_WORKER_MULTIPLIER"} & definition.env.keys(), (
            f"{definition.name}: the values entry states its workers, not the family's default"
        )
    for definition in DEFAULT_DEPLOYED:
        container = target_container(default_manifests, definition.name)
        assert workers_in_pod(definition, container) == promised_workers(definition), definition.name


def test_a_fourth_target_gets_its_own_worker_count(render: Render) -> None:
    default_names = {d.name for d in load_definitions()}
    (fourth,) = [d for d in load_definitions(FOURTH_TARGET) if d.name not in default_names]
    container = target_container(render(FOURTH_TARGET), fourth.name)
    assert workers_in_pod(fourth, container) == 4 * math.ceil(cpus(container["resources"]["limits"]["cpu"]))


def test_census_only_variants_are_deployed_small(default_manifests: list[Manifest]) -> None:
    for definition in DEFAULT_DEPLOYED:
        limits = target_container(default_manifests, definition.name)["resources"]["limits"]
        assert (cpus(limits["cpu"]) < 1) == (not definition.measure), definition.name


def test_every_target_is_pointed_at_the_downstream_mock(render: Render) -> None:
    manifests = render()
    mock = load_downstream()
    assert mock is not None
    deployment = find(manifests, "Deployment", f"{PREFIX}-{mock.name}")
    assert deployment["metadata"]["labels"]["app.kubernetes.io/component"] == "downstream"
    assert target_container(manifests, mock.name)["command"] == mock.command(python="python")
    assert container_env(target_container(manifests, mock.name)).items() >= mock.env.items()
    assert "LAB_DOWNSTREAM_URL" not in container_env(target_container(manifests, "downstream"))
    find(manifests, "Service", f"{PREFIX}-downstream")
    for definition in DEFAULT_DEPLOYED:
        env = container_env(target_container(manifests, definition.name))
        assert env["LAB_DOWNSTREAM_URL"] == f"http://{PREFIX}-downstream:8000"


def test_the_downstream_mock_can_be_switched_off(render: Render) -> None:
    manifests = render(set_values=("downstream.enabled=false",))
    assert not [m for m in manifests if m["metadata"]["name"] == f"{PREFIX}-downstream"]
    assert "LAB_DOWNSTREAM_URL" not in container_env(target_container(manifests, "fastapi"))


def test_pods_on_a_full_node_are_replaced_not_surged(default_manifests: list[Manifest]) -> None:
    """A rolling update's extra pod needs room a node sized for the lab does not have: Recreate."""
    for manifest in default_manifests:
        if manifest["kind"] == "Deployment":
            assert manifest["spec"]["strategy"] == {"type": "Recreate"}, manifest["metadata"]["name"]


def test_an_omitted_target_is_left_out_of_the_cluster_only(render: Render, tmp_path: Path) -> None:
    """No Deployment, Service, scrape target or tester entry for it; the local lab still starts it."""
    overlay = tmp_path / "omit.yaml"
    overlay.write_text(yaml.safe_dump({"omitTargets": ["flask-2x"]}))
    manifests = render(overlay)
    names = {m["metadata"]["name"] for m in manifests}
    assert f"{PREFIX}-flask-2x" not in names and f"{PREFIX}-flask-1x" in names
    assert deployments(manifests) == {d.name for d in load_definitions()} - {"flask-2x"}
    scrape = find(manifests, "ConfigMap", f"{PREFIX}-prometheus")["data"]["prometheus.yml"]
    assert "flask-2x" not in scrape and "flask-1x" in scrape
    (tester,) = find(manifests, "Job", f"{PREFIX}-tester")["spec"]["template"]["spec"]["containers"]
    assert "flask-2x=" not in container_env(tester)["TESTER_TARGETS"]
    assert "flask-2x" in {d.name for d in load_definitions()}
