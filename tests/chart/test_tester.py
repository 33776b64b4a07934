"""The tester Job: told every target's Service URL, no retries, a TTL, reports on the results volume."""

from __future__ import annotations

from pathlib import Path

import pytest

from labtester.settings import DEFAULT_APP_SCENARIOS, TesterSettings
from labtester.targets import DEFAULT_VALUES, load_app_configurations, load_definitions
from tests.chart.conftest import CHART, PREFIX, Manifest, Render, find

SCENARIOS = [DEFAULT_VALUES, CHART / "ci" / "fourth-target-values.yaml"]


def settings_in_job(job: Manifest, monkeypatch: pytest.MonkeyPatch) -> TesterSettings:
    """What the tester's own settings class reads from the Job's environment."""
    (container,) = job["spec"]["template"]["spec"]["containers"]
    for item in container["env"]:
        monkeypatch.setenv(item["name"], item["value"])
    return TesterSettings()


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
    definitions = load_definitions(values)

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
    claim = results_volume["persistentVolumeClaim"]["claimName"]
    find(default_manifests, "PersistentVolumeClaim", claim)
    # matplotlib needs a writable config directory on the read-only root filesystem.
    assert {item["name"]: item["value"] for item in container["env"]}["MPLCONFIGDIR"] in mounts


def test_job_never_retries_and_cleans_up(default_manifests: list[Manifest]) -> None:
    spec = find(default_manifests, "Job", f"{PREFIX}-tester")["spec"]
    assert spec["backoffLimit"] == 0
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["ttlSecondsAfterFinished"] > 0
    assert spec["activeDeadlineSeconds"] > 0


def test_results_server_shares_the_claim_read_only(default_manifests: list[Manifest]) -> None:
    pod = find(default_manifests, "Deployment", f"{PREFIX}-results")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    (mount,) = container["volumeMounts"]
    assert mount == {"name": "results", "mountPath": "/results", "readOnly": True}
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


APP = ("app.enabled=true", "app.module=examples.shop.flask_app:app", "app.interface=wsgi")


def test_with_an_app_the_job_measures_its_configurations_on_its_paths(
    render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifests = render(set_values=(*APP, "app.paths={/report,/checkout?product=7}"))
    settings = settings_in_job(find(manifests, "Job", f"{PREFIX}-tester"), monkeypatch)
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
