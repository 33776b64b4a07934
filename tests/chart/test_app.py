"""The app's values entry: one server per configuration of its interface, rendered like a target."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from labtester.proposal.cluster import deployed_pod
from labtester.proposal.values import write_proposal
from labtester.settings import DEFAULT_APP_SCENARIOS
from labtester.sizing.document import KindCost, Level, Objective, PodSize, SizedSummary
from labtester.sizing.families import families
from labtester.targets import DEFAULT_VALUES, DEPLOYED_APP_PREFIX
from tests.chart.conftest import CHART, PREFIX, Manifest, Render, find, helm_template
from tests.chart.test_targets import container_env, target_container
from tests.chart.test_tester import config_maps_in, settings_in_job

MODULE = "examples.shop.flask_app:app"
PATHS = ("/products", "/search?q=lamp")


def configurations() -> list[dict[str, Any]]:
    return list(yaml.safe_load(DEFAULT_VALUES.read_text())["app"]["configurations"])


def enabled(interface: str) -> tuple[str, ...]:
    return (
        "app.enabled=true",
        f"app.module={MODULE}",
        f"app.interface={interface}",
        f"app.paths={{{','.join(PATHS)}}}",
    )


def app_deployments(manifests: list[Manifest]) -> set[str]:
    return {
        m["metadata"]["name"].removeprefix(f"{PREFIX}-")
        for m in manifests
        if m["kind"] == "Deployment" and m["metadata"]["labels"]["app.kubernetes.io/component"] == "app"
    }


def test_the_app_is_not_rendered_unless_enabled(default_manifests: list[Manifest]) -> None:
    assert app_deployments(default_manifests) == set()


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_one_server_per_configuration_of_the_apps_interface(render: Render, interface: str) -> None:
    manifests = render(set_values=enabled(interface))
    mine = [c for c in configurations() if c["interface"] == interface]
    assert app_deployments(manifests) == {f"app-{c['name']}" for c in mine}
    scrape = yaml.safe_load(find(manifests, "ConfigMap", f"{PREFIX}-prometheus")["data"]["prometheus.yml"])
    scraped = {
        group["labels"]["target"] for job in scrape["scrape_configs"] for group in job["static_configs"]
    }
    for configuration in mine:
        name = f"app-{configuration['name']}"
        container = target_container(manifests, name)
        env = container_env(container)
        assert container["command"] == ["python", "-m", "serve", "team"]
        assert container["image"].startswith("concurrency-lab/app-target:")
        assert env.items() >= configuration["env"].items()
        assert (env["LAB_APP"], env["LAB_APP_PATHS"], env["LAB_NAME"]) == (MODULE, ",".join(PATHS), name)
        assert env["LAB_DOWNSTREAM_URL"] == f"http://{PREFIX}-downstream:8000"
        find(manifests, "Service", f"{PREFIX}-{name}")
        assert name in scraped


def test_an_enabled_app_names_its_module_and_interface() -> None:
    for missing in (("app.enabled=true", "app.interface=wsgi"), ("app.enabled=true", f"app.module={MODULE}")):
        rendered = helm_template(*(arg for value in missing for arg in ("--set", value)))
        assert rendered.returncode != 0
        assert "app/module" in rendered.stderr or "app/interface" in rendered.stderr, rendered.stderr


def test_paths_start_with_a_slash() -> None:
    rendered = helm_template(
        "--set",
        "app.enabled=true",
        "--set",
        f"app.module={MODULE}",
        "--set",
        "app.interface=wsgi",
        "--set",
        "app.paths={products}",
    )
    assert rendered.returncode != 0 and "app/paths/0" in rendered.stderr, rendered.stderr


# What the sizing writes beside its results (proposal-values.yaml): the app and ONE configuration,
# its knobs in env, the pod's CPU (limit, and what the scheduler reserves) and memory.
PROPOSAL = {
    "app": {
        "enabled": True,
        "module": MODULE,
        "interface": "wsgi",
        "paths": list(PATHS),
        "configurations": [
            {
                "name": "proposed",
                "interface": "wsgi",
                "env": {
                    "LAB_SERVER": "gunicorn",
                    "LAB_WORKER_CLASS": "gthread",
                    "LAB_WORKERS": "3",
                    "LAB_THREADS": "12",
                },
                "resources": {"cpu": "1", "cpuRequest": "200m", "memory": "768Mi"},
            }
        ],
    }
}


def proposal_file(directory: Path) -> Path:
    path = directory / "proposal-values.yaml"
    path.write_text(yaml.safe_dump(PROPOSAL))
    return path


@pytest.mark.parametrize("profile", [None, "two-cpu-values.yaml"])
def test_a_proposal_deploys_its_one_configuration_and_measures_it_alone(
    render: Render, tmp_path: Path, profile: str | None
) -> None:
    """`-f proposal-values.yaml`, alone or over a profile: one server, app-proposed, sized by its
    env and resources, and the tester measures it and nothing else."""
    profiles = [CHART / "ci" / profile] if profile else []
    manifests = render(*profiles, proposal_file(tmp_path))
    assert app_deployments(manifests) == {"app-proposed"}
    container = target_container(manifests, "app-proposed")
    (proposed,) = PROPOSAL["app"]["configurations"]  # type: ignore[index]
    assert container_env(container).items() >= proposed["env"].items()
    assert container["resources"] == {
        "requests": {"cpu": "200m", "memory": "768Mi"},
        "limits": {"cpu": "1", "memory": "768Mi"},
    }
    tester = find(manifests, "Job", f"{PREFIX}-tester")
    env = container_env(tester["spec"]["template"]["spec"]["containers"][0])
    assert env["TESTER_TARGETS"] == f"app-proposed=http://{PREFIX}-app-proposed:8000"
    assert env["TESTER_CENSUS_ONLY"] == "" and env["TESTER_APP"] == MODULE


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
def test_an_app_lab_deploys_the_app_and_none_of_the_labs_own_targets(render: Render, interface: str) -> None:
    manifests = render(set_values=enabled(interface))
    components = {
        m["metadata"]["labels"]["app.kubernetes.io/component"] for m in manifests if m["kind"] == "Deployment"
    }
    assert "target" not in components and {"app", "downstream"} <= components, components
    tester = find(manifests, "Job", f"{PREFIX}-tester")
    env = container_env(tester["spec"]["template"]["spec"]["containers"][0])
    measured = [ref.partition("=")[0] for ref in env["TESTER_TARGETS"].split(",")]
    assert measured == [f"app-{c['name']}" for c in configurations() if c["interface"] == interface]
    assert env["TESTER_CENSUS_ONLY"] == ""


# A proposal as the sizing itself writes it (proposal/prove.py's write_proposal): its one
# configuration on the pod the configurations were measured in, and what it predicted.
PREDICTED = SizedSummary(
    role="proposed", family="gthread", server="gunicorn", label="gunicorn gthread, 3 workers x 12 threads",
    processes=3, threads=12, per_process_unit="threads", memory_bytes=300 << 20,
    env={"LAB_SERVER": "gunicorn", "LAB_WORKER_CLASS": "gthread", "LAB_WORKERS": "3", "LAB_THREADS": "12"},
    sustainable_per_s=50.0, predicted_p99_s=0.3,
    levels=[Level(offered_per_s=40.0, predicted_per_s=40.1, predicted_p99_s=0.2),
            Level(offered_per_s=50.0, predicted_per_s=49.6, predicted_p99_s=0.3)],
    pod=PodSize(cores=1, memory_bytes=768 << 20, source="its configurations' pod (the chart's resources)"),
    objective=Objective(p99_s=0.5, why="P99="),
    kinds=[KindCost(name="/report", weight=1.0, cpu_s=0.01, wait_s=0.05, overhead_s=0.001,
                    cores_per_process=1.0)],
)  # fmt: skip
POD = {"cpu": "1", "cpuRequest": "200m", "memory": "768Mi"}


def test_a_written_proposal_deploys_its_configuration_and_its_run_proves_the_prediction(
    render: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make run-lab PROPOSAL=<run>/proposal-values.yaml` over the two-CPU profile: the one
    configuration, its pod's requests and limits as written, and a tester whose run is the proof
    (the sizing shape alone) of the prediction the file carries, read from the mounted values."""
    written = write_proposal(tmp_path, PREDICTED, MODULE, "wsgi", list(PATHS), POD)
    manifests = render(CHART / "ci" / "two-cpu-values.yaml", written)
    assert app_deployments(manifests) == {"app-proposed"}
    container = target_container(manifests, "app-proposed")
    assert container_env(container).items() >= PREDICTED.env.items()
    assert container["resources"] == {
        "requests": {"cpu": "200m", "memory": "768Mi"},
        "limits": {"cpu": "1", "memory": "768Mi"},
    }
    job = find(manifests, "Job", f"{PREFIX}-tester")
    settings = settings_in_job(job, monkeypatch, mounted=config_maps_in(job, manifests, tmp_path / "pod"))
    assert settings.scenarios == ["sizing"] and settings.app == MODULE
    assert settings.sizing.values is not None
    mounted = yaml.safe_load(settings.sizing.values.read_text())
    assert SizedSummary.model_validate(mounted["app"]["predicted"]) == PREDICTED


def test_an_app_labs_tester_reads_the_families_and_pod_from_the_values_as_installed(
    render: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the cluster's sizing searches: the configurations deployed (by the names the tester
    measures them as) and the pod they got, from the one file the chart mounts; no prediction, so
    the run measures and proposes. The tester still gets no right to the Kubernetes API."""
    manifests = render(CHART / "ci" / "two-cpu-values.yaml", set_values=enabled("wsgi"))
    job = find(manifests, "Job", f"{PREFIX}-tester")
    settings = settings_in_job(job, monkeypatch, mounted=config_maps_in(job, manifests, tmp_path))
    assert settings.scenarios == list(DEFAULT_APP_SCENARIOS) and settings.sizing.values is not None
    searched, unknown = families("wsgi", settings.sizing.values, DEPLOYED_APP_PREFIX)
    assert unknown == []
    measured = {name for family in searched for name in family.fixed_targets}
    assert measured == {t.name for t in settings.targets}
    pod, resources = deployed_pod(yaml.safe_load(settings.sizing.values.read_text()))
    assert resources == {"cpu": "1", "cpuRequest": "100m", "memory": "384Mi"}  # the profile's
    assert (pod.cores, pod.memory_bytes) == (1.0, 384 << 20)
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    granting = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ServiceAccount"}
    assert not [m["kind"] for m in manifests if m["kind"] in granting]
