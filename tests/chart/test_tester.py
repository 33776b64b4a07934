"""The tester Job: told every target's Service URL, no retries, a TTL, its finished run handed to
the results server (the one pod on the results volume); with `tester.parallelism` P, an Indexed Job
of P clients spread across nodes, client 0's barrier reachable by name."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from labtester.scenarios import TesterSettings
from labtester.settings import DEFAULT_APP_SCENARIOS
from labtester.targets import DEFAULT_VALUES, load_app_configurations
from tests.chart.conftest import CHART, PREFIX, Manifest, Render, deployed_definitions, find

SCENARIOS = [DEFAULT_VALUES, CHART / "ci" / "fourth-target-values.yaml", CHART / "ci" / "small-values.yaml"]


COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def settings_in_job(
    job: Manifest,
    monkeypatch: pytest.MonkeyPatch,
    index: int = 0,
    secrets: list[Manifest] | None = None,
    mounted: Path | None = None,
) -> TesterSettings:
    """What the tester's own settings class reads from the environment of the Job's pod `index`
    (a Secret's key from `secrets`, the rendered ones). `mounted`: where the pod's mounted
    ConfigMaps were written (config_maps_in), read where the pod would read its mount paths."""
    (container,) = job["spec"]["template"]["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
    for item in container["env"]:
        if "secretKeyRef" in item.get("valueFrom", {}):
            ref = item["valueFrom"]["secretKeyRef"]
            secret = next(s for s in secrets or [] if s["metadata"]["name"] == ref["name"])
            monkeypatch.setenv(item["name"], base64.b64decode(secret["data"][ref["key"]]).decode())
        elif "valueFrom" in item:  # the downward API: the pod's completion index
            assert item["valueFrom"]["fieldRef"]["fieldPath"] == COMPLETION_INDEX
            monkeypatch.setenv(item["name"], str(index))
        else:
            value = item["value"]
            for name, path in mounts.items():
                if mounted is not None and value.startswith(path + "/"):
                    value = str(mounted / name / value.removeprefix(path + "/"))
            monkeypatch.setenv(item["name"], value)
    return TesterSettings()


def config_maps_in(job: Manifest, manifests: list[Manifest], directory: Path) -> Path:
    """Each ConfigMap the Job's pod mounts, written as its volume would show it: directory/<volume>/<key>."""
    for volume in job["spec"]["template"]["spec"]["volumes"]:
        if "configMap" in volume:
            folder = directory / volume["name"]
            folder.mkdir(parents=True)
            for key, text in find(manifests, "ConfigMap", volume["configMap"]["name"])["data"].items():
                (folder / key).write_text(text)
    return directory


def service_url(manifests: list[Manifest], name: str) -> str:
    service = find(manifests, "Service", f"{PREFIX}-{name}")
    (port,) = [port for port in service["spec"]["ports"] if port["name"] == "http"]
    return f"http://{service['metadata']['name']}:{port['port']}"


@pytest.mark.parametrize("values", SCENARIOS, ids=lambda path: path.name)
def test_tester_targets_are_every_service(
    render: Render, values: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifests = render(values)
    settings = settings_in_job(find(manifests, "Job", f"{PREFIX}-tester"), monkeypatch)
    definitions = deployed_definitions(values)

    measured = {d.name: service_url(manifests, d.name) for d in definitions if d.measure}
    census_only = {d.name: service_url(manifests, d.name) for d in definitions if not d.measure}
    assert {t.name: t.url for t in settings.targets} == measured
    assert {t.name: t.url for t in settings.census_only} == census_only


def test_tester_settings_come_from_values(
    default_manifests: list[Manifest], monkeypatch: pytest.MonkeyPatch
) -> None:
    job = find(default_manifests, "Job", f"{PREFIX}-tester")
    settings = settings_in_job(job, monkeypatch)
    # The chart leaves N, K and R unset: the tester's own defaults, defined once in its settings.
    defaults = TesterSettings.model_validate({})
    assert (settings.work_seconds, settings.burst_max, settings.repeats) == (
        defaults.work_seconds,
        defaults.burst_max,
        defaults.repeats,
    )
    assert settings.scenarios == ["bursts"]

    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["python", "-m", "labtester", "run"]
    mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
    results_volume = next(v for v in pod["volumes"] if v["name"] == mounts[str(settings.output_dir)])
    # Its own copy; the finished run goes to the results server, which keeps it on the claim.
    assert "emptyDir" in results_volume and settings.results_url == service_url(default_manifests, "results")
    assert not any("persistentVolumeClaim" in volume for volume in pod["volumes"])
    assert settings.clients == 1 and settings.barrier is None
    # matplotlib needs a writable config directory on the read-only root filesystem.
    assert {item["name"]: item["value"] for item in container["env"]}["MPLCONFIGDIR"] in mounts


def test_job_never_retries_and_cleans_up(default_manifests: list[Manifest]) -> None:
    spec = find(default_manifests, "Job", f"{PREFIX}-tester")["spec"]
    assert spec["backoffLimit"] == 0
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["ttlSecondsAfterFinished"] > 0
    assert spec["activeDeadlineSeconds"] > 0


def test_results_server_alone_mounts_the_claim(default_manifests: list[Manifest]) -> None:
    pod = find(default_manifests, "Deployment", f"{PREFIX}-results")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"][:4] == ["python", "-m", "labtester", "serve-results"]
    (mount,) = container["volumeMounts"]
    assert mount == {"name": "results", "mountPath": "/results"}
    (volume,) = pod["volumes"]
    assert volume["persistentVolumeClaim"]["claimName"] == f"{PREFIX}-results"
    service = find(default_manifests, "Service", f"{PREFIX}-results")
    assert service["spec"]["type"] == "NodePort"


def test_tester_is_told_where_prometheus_is(
    default_manifests: list[Manifest], render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tester waits for Prometheus's first scrape of every target and cross-checks its counts."""
    (container,) = find(default_manifests, "Job", f"{PREFIX}-tester")["spec"]["template"]["spec"][
        "containers"
    ]
    env = {item["name"]: item["value"] for item in container["env"]}
    service = find(default_manifests, "Service", f"{PREFIX}-prometheus")
    assert (
        env["TESTER_PROMETHEUS_URL"]
        == f"http://{service['metadata']['name']}:{service['spec']['ports'][0]['port']}"
    )

    without = render(set_values=("prometheus.enabled=false", "grafana.enabled=false"))
    (container,) = find(without, "Job", f"{PREFIX}-tester")["spec"]["template"]["spec"]["containers"]
    assert "TESTER_PROMETHEUS_URL" not in {item["name"] for item in container["env"]}


def test_parallelism_makes_an_indexed_job_of_clients_spread_across_nodes(
    render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifests = render(set_values=("tester.parallelism=2",))
    job = find(manifests, "Job", f"{PREFIX}-tester")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["parallelism"] == spec["completions"] == 2
    pod = spec["template"]["spec"]
    (spread,) = pod["topologySpreadConstraints"]
    assert spread["topologyKey"] == "kubernetes.io/hostname" and spread["maxSkew"] == 1
    assert spread["labelSelector"]["matchLabels"].items() <= pod_labels(job).items()
    # Client 0's barrier: <job>-0.<headless service>, which selects the Job's pods.
    service = find(manifests, "Service", f"{PREFIX}-tester")
    assert service["spec"]["clusterIP"] == "None" and pod["subdomain"] == service["metadata"]["name"]
    assert service["spec"]["selector"].items() <= pod_labels(job).items()
    (container,) = pod["containers"]
    (port,) = container["ports"]
    assert service["spec"]["ports"][0]["targetPort"] == port["name"]
    secrets = [m for m in manifests if m["kind"] == "Secret"]
    tokens = set()
    for index in (0, 1):
        settings = settings_in_job(job, monkeypatch, index, secrets)
        assert (settings.clients, settings.client_index) == (2, index)
        assert settings.barrier == f"{job['metadata']['name']}-0.{pod['subdomain']}:{port['containerPort']}"
        assert settings.barrier_token is not None
        tokens.add(settings.barrier_token.get_secret_value())
    # One token for the run's clients, from its Secret, never in the pod spec itself.
    (token,) = tokens
    assert len(token) >= 32 and token not in json.dumps(job)


def test_each_install_gives_the_run_a_new_token(render: Render) -> None:
    def token() -> str:
        manifests = render(set_values=("tester.parallelism=2",))
        secret = find(manifests, "Secret", f"{PREFIX}-tester-token")
        return base64.b64decode(secret["data"]["token"]).decode()

    assert token() != token()


def test_one_client_needs_no_barrier(default_manifests: list[Manifest]) -> None:
    spec = find(default_manifests, "Job", f"{PREFIX}-tester")["spec"]
    assert spec["parallelism"] == spec["completions"] == 1
    assert not [
        m for m in default_manifests if m["kind"] == "Service" and m["metadata"]["name"] == f"{PREFIX}-tester"
    ]


def pod_labels(job: Manifest) -> dict[str, str]:
    labels: dict[str, str] = job["spec"]["template"]["metadata"]["labels"]
    return labels


APP = ("app.enabled=true", "app.module=examples.shop.flask_app:app", "app.interface=wsgi")


def test_with_an_app_the_job_measures_its_configurations_on_its_paths(
    render: Render, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    manifests = render(set_values=(*APP, "app.paths={/report,/checkout?product=7}"))
    job = find(manifests, "Job", f"{PREFIX}-tester")
    settings = settings_in_job(job, monkeypatch, mounted=config_maps_in(job, manifests, tmp_path))
    wsgi = [d.name for d in load_app_configurations(DEFAULT_VALUES, "wsgi")]
    assert wsgi and {t.name: t.url for t in settings.targets} == {
        f"app-{name}": service_url(manifests, f"app-{name}") for name in wsgi
    }
    assert settings.census_only == []
    assert settings.app == "examples.shop.flask_app:app" and settings.paths == [
        "/report",
        "/checkout?product=7",
    ]
    # The app's load shapes are the tester's own default for an app, defined once, there.
    assert settings.scenarios == list(DEFAULT_APP_SCENARIOS)
